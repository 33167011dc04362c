import Fastify from 'fastify';
import pino from 'pino';
import { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import { Writable } from 'node:stream';
import { LazyRequestLogger, lazyChildLogger, madeRequestId, requestId, withLazyChildren } from './logging';

/** A pino root writing JSON lines into an array. */
function capturedRoot(level: string): { root: pino.Logger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean))
        lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { root: pino({ level }, sink), lines };
}

describe('LazyRequestLogger', () => {
  it('builds no child for lines below the level, and a bound child for the first line written', () => {
    const { root, lines } = capturedRoot('warn');
    const child = jest.spyOn(root, 'child');
    const logger = new LazyRequestLogger(root, { reqId: 'r-1' }, {});
    logger.info('not written');
    logger.debug({ a: 1 }, 'not written');
    expect(child).not.toHaveBeenCalled();
    logger.warn({ route: '/x' }, 'written');
    logger.error('also written');
    expect(child).toHaveBeenCalledTimes(1);
    expect(lines.map((line) => [line.reqId, line.msg, line.route])).toEqual([
      ['r-1', 'written', '/x'],
      ['r-1', 'also written', undefined],
    ]);
  });

  it('follows the root level as it changes, and answers level and child like pino', () => {
    const { root, lines } = capturedRoot('warn');
    const logger = new LazyRequestLogger(root, { reqId: 'r-2' }, {});
    root.level = 'info';
    logger.info('now written');
    expect(logger.level).toBe('info');
    logger.child({ step: 'inner' }).info('from a grandchild');
    expect(lines.map((line) => [line.reqId, line.step, line.msg])).toEqual([
      ['r-2', undefined, 'now written'],
      ['r-2', 'inner', 'from a grandchild'],
    ]);
  });

  it("is accepted by Fastify as its childLoggerFactory and carries the request id on the request's lines", async () => {
    const { root, lines } = capturedRoot('info');
    const app = Fastify({ loggerInstance: root, childLoggerFactory: lazyChildLogger, genReqId: () => 'given-id' });
    app.get('/', async (request) => {
      request.log.info('inside the handler');
      return { ok: true };
    });
    const reply = await app.inject({ method: 'GET', url: '/' });
    await app.close();
    expect(reply.statusCode).toBe(200);
    expect(lines.filter((line) => line.msg === 'inside the handler').map((line) => line.reqId)).toEqual(['given-id']);
    expect(lines.find((line) => line.msg === 'request completed')?.reqId).toBe('given-id');
  });

  it("is Fastify's loggerInstance through withLazyChildren: the request's lines carry its id, the root's lines are the root's", async () => {
    const { root, lines } = capturedRoot('info');
    const app = Fastify({ loggerInstance: withLazyChildren(root), genReqId: () => 'wrapped-id' });
    app.get('/', async (request) => {
      expect(request.log).toBeInstanceOf(LazyRequestLogger);
      request.log.info('inside the handler');
      return { ok: true };
    });
    const reply = await app.inject({ method: 'GET', url: '/' });
    app.log.info('from the root');
    await app.close();
    expect(reply.body).toBe('{"ok":true}');
    expect(lines.filter((line) => line.msg === 'inside the handler').map((line) => line.reqId)).toEqual(['wrapped-id']);
    expect(lines.find((line) => line.msg === 'from the root')?.reqId).toBeUndefined();
  });

  it('gives a route with a level of its own (Fastify logLevel) a real child at once', async () => {
    const { root, lines } = capturedRoot('warn');
    const app = Fastify({ loggerInstance: root, childLoggerFactory: lazyChildLogger, genReqId: () => 'verbose-id' });
    app.get('/verbose', { logLevel: 'debug' }, async (request) => {
      request.log.debug('a debug line');
      return { ok: true };
    });
    await app.inject({ method: 'GET', url: '/verbose' });
    await app.close();
    expect(lines.filter((line) => line.msg === 'a debug line').map((line) => line.reqId)).toEqual(['verbose-id']);
  });
});

describe('request ids', () => {
  const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

  it('makes UUID-shaped ids, each new, sharing the random part of this process', () => {
    const ids = Array.from({ length: 1000 }, () => madeRequestId());
    expect(ids.every((id) => UUID.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    expect(new Set(ids.map((id) => id.slice(0, 24))).size).toBe(1);
  });

  it("keeps a caller's sane X-Request-Id and replaces one that is not", () => {
    const asked = (header?: string) => {
      const request = new IncomingMessage(new Socket());
      if (header !== undefined) request.headers['x-request-id'] = header;
      return requestId(request);
    };
    expect(asked('trace-42')).toBe('trace-42');
    expect(asked('no spaces allowed')).toMatch(UUID);
    expect(asked()).toMatch(UUID);
  });
});
