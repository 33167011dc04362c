import Fastify, { LogController } from 'fastify';
import pino from 'pino';
import { createRootLogger, LazyRequestLogger, lazyChildLogger } from './logging';
import { writePlainLine } from './plain-line';

/** A root as the service makes it (createRootLogger), writing its lines into an array, its clock fixed. */
function capturedRoot(): { root: pino.Logger; lines: string[] } {
  const lines: string[] = [];
  const root = createRootLogger({ write: (line: string) => lines.push(line) });
  jest.spyOn(Date, 'now').mockReturnValue(1_764_000_000_123);
  return { root, lines };
}

afterEach(() => jest.restoreAllMocks());

describe('writePlainLine', () => {
  const access = { method: 'POST', route: '/boards/:board/items/:item/increment', status: 200, durationMs: 1.234 };

  it.each([
    ['the access line', 'info', { reqId: 'r-1' }, access, 'request'],
    [
      'a 5xx access line',
      'error',
      { reqId: 'e7c4d5f0-3a1b-4c2d-9e8f-000000000001' },
      { ...access, status: 503 },
      'request',
    ],
    ['undefined fields skipped, odd numbers', 'warn', { reqId: 'r:2' }, { a: undefined, b: -0.5, c: 1e21 }, 'x y'],
    ['no fields', 'info', { reqId: 'r' }, {}, ''],
  ] as const)('writes %s byte for byte as pino writes it through the child', (_name, level, bindings, fields, msg) => {
    const { root, lines } = capturedRoot();
    root.child(bindings, { level: undefined })[level]({ ...fields }, msg);
    expect(writePlainLine(root, level, bindings, { ...fields }, msg)).toBe(true);
    expect(lines).toHaveLength(2);
    expect(lines[1]).toBe(lines[0]);
  });

  it.each([
    ['a quote in a value', { route: 'a"b' }, 'request'],
    ['a backslash in the message', { route: '/x' }, 'a\\b'],
    ['a character beyond ASCII', { route: '/é' }, 'request'],
    ['a control character', { route: '/x\n' }, 'request'],
    ['an object value', { route: { nested: 1 } }, 'request'],
    ['a boolean value', { ok: true }, 'request'],
    ['an infinite number', { durationMs: Infinity }, 'request'],
    ['a serialized key (err)', { err: 'x' }, 'request'],
    ['a redacted key (req)', { req: 'x' }, 'request'],
    ['a reserved key', { level: 'x' }, 'request'],
  ])('leaves %s to pino, writing nothing', (_name, fields, msg) => {
    const { root, lines } = capturedRoot();
    expect(writePlainLine(root, 'info', { reqId: 'r-1' }, fields, msg)).toBe(false);
    expect(lines).toEqual([]);
  });

  it('leaves every line to pino on a root with a mixin or a formatter of objects', () => {
    const lines: string[] = [];
    const stream = { write: (line: string) => lines.push(line) };
    const mixed = pino({ mixin: () => ({ extra: 1 }) }, stream);
    const formatted = pino({ formatters: { log: (object) => object } }, stream);
    expect(writePlainLine(mixed, 'info', { reqId: 'r' }, access, 'request')).toBe(false);
    expect(writePlainLine(formatted, 'info', { reqId: 'r' }, access, 'request')).toBe(false);
    expect(lines).toEqual([]);
  });
});

describe('LazyRequestLogger writing plain lines', () => {
  it('writes (fields, msg) as its child would, without making the child; anything else through the child', () => {
    const { root, lines } = capturedRoot();
    const child = jest.spyOn(root, 'child');
    // What Fastify passes for a route without a level of its own.
    const logger = new LazyRequestLogger(root, { reqId: 'r-9' }, { level: '' });
    logger.info({ method: 'GET', status: 200 }, 'request');
    expect(child).not.toHaveBeenCalled();
    logger.info({ nested: { a: 1 } }, 'request');
    expect(child).toHaveBeenCalledTimes(1);
    logger.info({ method: 'GET', status: 200 }, 'request');
    expect(lines[2]).toBe(lines[0]);
    expect(JSON.parse(lines[1])).toMatchObject({ reqId: 'r-9', nested: { a: 1 } });
  });
});

it("writes a Fastify request's plain line without making its child logger", async () => {
  const { root, lines } = capturedRoot();
  // As edgeAdapter makes it: Fastify's own request lines (which log the request object) are off.
  const logController = new LogController({ disableRequestLogging: true });
  const app = Fastify({
    loggerInstance: root,
    childLoggerFactory: lazyChildLogger,
    genReqId: () => 'f-1',
    logController,
  });
  app.get('/', async (request) => {
    request.log.info({ method: 'GET', status: 200 }, 'request');
    return {};
  });
  await app.ready();
  // Fastify's own logger is a child of the root: a request's child would be made through the root's method.
  const child = jest.spyOn(root, 'child');
  await app.inject({ method: 'GET', url: '/' });
  await app.close();
  expect(child).not.toHaveBeenCalled();
  const written = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  expect(written.find((line) => line.msg === 'request')).toMatchObject({ reqId: 'f-1', method: 'GET', status: 200 });
});
