import { Logger } from '@nestjs/common';
import Fastify from 'fastify';
import { HttpAdapterHost } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { AnsweredRequest, AnsweredRequests } from './answered-requests';

describe('AnsweredRequests', () => {
  async function appWith(listeners: Array<(answered: AnsweredRequest) => void>) {
    const fastify = Fastify();
    fastify.get('/boards/:board/top', async () => ({ ok: true }));
    const host = new HttpAdapterHost();
    host.httpAdapter = new FastifyAdapter(fastify);
    const answered = new AnsweredRequests(host);
    listeners.forEach((listener) => answered.subscribe(listener));
    answered.onModuleInit();
    await fastify.ready();
    return fastify;
  }

  it('hands every listener the method, route pattern, status and duration; unmatched routes as {unmatched}', async () => {
    const seen: AnsweredRequest[] = [];
    const fastify = await appWith([(answered) => seen.push(answered)]);
    await fastify.inject({ method: 'GET', url: '/boards/b1/top' });
    await fastify.inject({ method: 'POST', url: '/nowhere' });
    await fastify.close();
    expect(seen.map(({ method, route, statusCode }) => [method, route, statusCode])).toEqual([
      ['GET', '/boards/:board/top', 200],
      ['POST', '{unmatched}', 404],
    ]);
    expect(seen.every((answered) => answered.durationMs >= 0)).toBe(true);
  });

  it('keeps recording with the other listeners when one throws, and the answer is unaffected', async () => {
    const logged = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    const seen: string[] = [];
    const fastify = await appWith([
      () => {
        throw new Error('a bug in one listener');
      },
      (answered) => seen.push(answered.route),
    ]);
    const reply = await fastify.inject({ method: 'GET', url: '/boards/b1/top' });
    await fastify.close();
    expect(reply.statusCode).toBe(200);
    expect(seen).toEqual(['/boards/:board/top']);
    expect(logged).toHaveBeenCalledWith('recording an answered request failed: a bug in one listener');
    logged.mockRestore();
  });
});
