import Fastify from 'fastify';
import pino from 'pino';
import { Writable } from 'node:stream';
import { LazyRequestLogger, lazyChildLogger } from './logging';

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
