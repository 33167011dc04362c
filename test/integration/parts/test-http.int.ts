import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import type { Socket } from 'node:net';
import { ListeningHttp, listenForTests } from '../../../harness/test-http';

@Module({})
class EmptyModule {}

/**
 * The tests' HTTP client (harness/test-http.ts): one listening socket and kept-alive connections, so
 * a file's thousands of requests do not each pay for a listen, a connect and a close.
 */
describe('listenForTests', () => {
  let app: NestFastifyApplication;
  let listening: ListeningHttp;
  const connections: Socket[] = [];

  beforeAll(async () => {
    app = await NestFactory.create<NestFastifyApplication>(EmptyModule, new FastifyAdapter(), { logger: false });
    app.getHttpServer().on('connection', (socket: Socket) => connections.push(socket));
    listening = await listenForTests(app);
  });
  afterAll(async () => {
    listening.close();
    await app.close();
  });

  it('sends request after request over one connection to a port the app listens on', async () => {
    for (let i = 0; i < 20; i++) await listening.http().get(`/nowhere/${i}`).expect(404);
    await Promise.all([listening.http().delete('/x').expect(404), listening.http().post('/y').send({}).expect(404)]);
    expect(app.getHttpServer().listening).toBe(true);
    // The two concurrent requests may need a second connection; never one per request.
    expect(connections.length).toBeLessThanOrEqual(2);
  });
});
