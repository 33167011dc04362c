import { NestFastifyApplication } from '@nestjs/platform-fastify';
import fc from 'fast-check';
import request from 'supertest';
import { FastRoutes } from '../../../src/edge/fast-routes';
import { ADMIN } from '../../../harness/app';
import { useSingleNodeApp } from '../../support/e2e';

interface Call {
  method: 'get' | 'post' | 'head';
  path: string;
  body?: unknown;
  headers?: Record<string, string>;
}

/** What a client sees of an answer; the request id and the date differ by nature. */
const SEEN_HEADERS = ['content-type', 'retry-after', 'idempotent-replayed', 'x-content-type-options', 'allow'];

const WRITER = 'writer-secret-0123456789';
const READER = 'reader-secret-0123456789';

const post = (path: string, body?: unknown, headers?: Record<string, string>): Call => ({
  method: 'post',
  path,
  body,
  headers,
});
const get = (path: string, headers?: Record<string, string>): Call => ({ method: 'get', path, headers });

/** Valid and invalid calls of the fast routes, in an order that builds state. */
const CALLS: Call[] = [
  post('/boards/b/items/a/increment', {}),
  post('/boards/b/items/a/increment', { amount: 5 }),
  post('/boards/b/items/c/increment'),
  post('/boards/b/items/a/increment', { amount: 'x' }),
  post('/boards/b/items/a/increment', { amount: 1, unknown: true }),
  post('/boards/b/items/a/increment', { amount: 0 }),
  post('/boards/b/items/a/increment', [1, 2]),
  post('/boards/b/items/a/increment', { segments: ['eu'] }),
  post('/boards/b/items/a/increment', { at: 1 }),
  post('/boards/b/items//increment', {}),
  post(`/boards/b/items/${'x'.repeat(300)}/increment`, {}),
  post('/boards/b%20c/items/a/increment', {}),
  post('/boards/missing/items/a/increment', {}),
  post('/boards/b/items/k/increment', { amount: 2 }, { 'Idempotency-Key': 'key-1' }),
  post('/boards/b/items/k/increment', { amount: 2 }, { 'Idempotency-Key': 'key-1' }),
  post('/boards/b/items/k/increment', { amount: 3 }, { 'Idempotency-Key': 'key-1' }),
  post('/boards/b/increments', { items: [{ item: 'a' }, { item: 'd', amount: 4 }] }),
  post('/boards/b/increments', { items: [] }),
  post('/boards/b/increments', { items: [{ item: 'a', amount: 'x' }] }),
  post('/boards/b/increments', { items: [{ item: 'a', score: 4 }] }),
  post('/boards/missing/increments', { items: [{ item: 'a' }] }),
  get('/boards/b/top'),
  get('/boards/b/top?limit=2&offset=1'),
  get('/boards/b/top?limit=0'),
  get('/boards/b/top?limit=100000'),
  get('/boards/b/top?limit=ten'),
  get('/boards/b/top?window=1d'),
  get('/boards/b/top?other=1'),
  get('/boards/missing/top'),
  { method: 'head', path: '/boards/b/top' },
  post('/boards/b/items/a/likes', { userId: 'u1' }),
  post('/boards/b/items/a/likes', { userId: 'u1' }),
  post('/boards/b/items/a/likes', { userId: 'bad user' }),
  post('/boards/missing/items/a/likes', { userId: 'u1' }),
  get('/boards/b/items/a'),
  get('/boards/b/items/nobody'),
  get('/boards/b/items/a?window=9h'),
  get('/boards/b/items/a/around?radius=1'),
  get('/boards/b/items/a/around?radius=-1'),
  post('/boards/best/items/a/score', { score: 7 }),
  post('/boards/best/items/a/score', { score: 3 }),
  post('/boards/best/items/a/score', { score: 'high' }),
  post('/boards/b/items/a/score', { score: 7 }),
  post('/boards/best/items/a/increment', {}),
  post('/counters/hits/increment', {}),
  post('/counters/hits/increment', { count: 3 }),
  post('/counters/hits/increment', { count: 0 }),
  post('/counters/bad%20name/increment', {}),
];

/** Values a client may send for any field: right, wrong in type, out of range, odd. */
const anyValue = fc.oneof(
  fc.integer({ min: -3, max: 3 }),
  fc.constantFrom(0.5, 1e300, -1e300, 2 ** 53, 1_700_000_000, '', 'a', '1', 'x y', null, true, [], ['eu'], {}),
);
const fieldNames = fc.constantFrom('amount', 'at', 'segments', 'actor', 'score', 'count', 'userId', 'item', 'extra');
/** Mostly what a route takes, sometimes anything: valid calls reach the fast path, the others Nest. */
const bodyOf = (valid: fc.Arbitrary<object>) =>
  fc.oneof(
    { arbitrary: valid, weight: 3 },
    { arbitrary: fc.dictionary(fieldNames, anyValue, { maxKeys: 3 }), weight: 1 },
  );
const mostly = <T>(usual: T[], odd: T[]) =>
  fc.oneof({ arbitrary: fc.constantFrom(...usual), weight: 4 }, { arbitrary: fc.constantFrom(...odd), weight: 1 });
const board = mostly(['b', 'best'], ['missing', '', 'x%20y', 'é']);
const item = mostly(['a', 'c', 'd'], ['', 'x%20y', 'a'.repeat(200)]);
const small = fc.integer({ min: 1, max: 5 });
const query = fc
  .array(
    fc.tuple(
      mostly(['limit', 'offset', 'window'], ['radius', 'data', 'at', 'segment', 'span', 'other']),
      mostly(['1', '3', '1h'], ['0', '-1', '1000', '100000', 'ten', '', '1d', 'true', '1.5']),
    ),
    { maxLength: 2 },
  )
  .map((pairs) => (pairs.length === 0 ? '' : `?${pairs.map(([name, value]) => `${name}=${value}`).join('&')}`));

/** A call of one of the fast routes. */
const anyCall: fc.Arbitrary<Call> = fc.oneof(
  fc
    .tuple(board, item, bodyOf(small.map((amount) => ({ amount }))))
    .map(([b, i, body]) => post(`/boards/${b}/items/${i}/increment`, body)),
  fc
    .tuple(
      board,
      bodyOf(
        fc
          .array(fc.tuple(item, small), { minLength: 1, maxLength: 3 })
          .map((entries) => ({ items: entries.map(([i, amount]) => ({ item: i, amount })) })),
      ),
    )
    .map(([b, body]) => post(`/boards/${b}/increments`, body)),
  fc
    .tuple(board, item, bodyOf(fc.constantFrom('u1', 'u2').map((userId) => ({ userId }))))
    .map(([b, i, body]) => post(`/boards/${b}/items/${i}/likes`, body)),
  fc
    .tuple(board, item, bodyOf(small.map((score) => ({ score }))))
    .map(([b, i, body]) => post(`/boards/${b}/items/${i}/score`, body)),
  fc
    .tuple(mostly(['hits'], ['', 'x%20y']), bodyOf(small.map((count) => ({ count }))))
    .map(([name, body]) => post(`/counters/${name}/increment`, body)),
  fc.tuple(board, query).map(([b, q]) => get(`/boards/${b}/top${q}`)),
  fc.tuple(board, item, query).map(([b, i, q]) => get(`/boards/${b}/items/${i}${q}`)),
  fc.tuple(board, item, query).map(([b, i, q]) => get(`/boards/${b}/items/${i}/around${q}`)),
);

/** Always among the drawn runs: 21 valid calls of three fast routes. */
const VALID_MIX: Call[] = Array.from({ length: 7 }, (_, i) => [
  post('/boards/b/items/a/increment', { amount: 1 + (i % 5) }),
  get('/boards/b/top'),
  get('/boards/b/items/a'),
]).flat();

/** One call's answer as a client sees it. */
async function answerOf(app: NestFastifyApplication, call: Call): Promise<object> {
  let pending = request(app.getHttpServer())[call.method](call.path);
  for (const [name, value] of Object.entries(call.headers ?? {})) pending = pending.set(name, value);
  const response = await (call.body === undefined ? pending : pending.send(call.body as object));
  const headers = Object.fromEntries(SEEN_HEADERS.map((name) => [name, response.headers[name]]));
  return { call: `${call.method} ${call.path.slice(0, 60)}`, status: response.status, body: response.body, headers };
}

/** The fast path (the default) and Nest's router (FAST_ROUTES=false) against the same calls, on twin boards. */
describe('fast routes answer as Nest would', () => {
  const e2e = useSingleNodeApp({ noApp: true, fresh: true });

  async function twins(env: Record<string, string> = {}): Promise<[NestFastifyApplication, NestFastifyApplication]> {
    const prefix = e2e.redis().prefix;
    const fast = await e2e.startApp({ ...env, KEY_PREFIX: `${prefix}f:` });
    const nest = await e2e.startApp({ ...env, KEY_PREFIX: `${prefix}n:`, FAST_ROUTES: 'false' });
    const windows = [{ period: '1h', interval: '1m' }];
    for (const [board, body] of [
      ['b', { windows }],
      ['best', { windows, aggregate: 'max' }],
    ] as const)
      for (const app of [fast, nest])
        await request(app.getHttpServer()).put(`/admin/boards/${board}`).set(ADMIN).send(body).expect(201);
    return [fast, nest];
  }

  async function sameAnswers(fast: NestFastifyApplication, nest: NestFastifyApplication, calls: Call[]) {
    for (const call of calls) expect(await answerOf(fast, call)).toEqual(await answerOf(nest, call));
  }

  it('takes over the hot routes, and only with FAST_ROUTES on', async () => {
    const [fast, nest] = await twins();
    expect([...fast.get(FastRoutes).takenOver].sort()).toEqual([
      'GET /boards/:board/items/:item',
      'GET /boards/:board/items/:item/around',
      'GET /boards/:board/top',
      'POST /boards/:board/increments',
      'POST /boards/:board/items/:item/increment',
      'POST /boards/:board/items/:item/likes',
      'POST /boards/:board/items/:item/score',
      'POST /counters/:name/increment',
    ]);
    expect(nest.get(FastRoutes).takenOver).toEqual([]);
  });

  it('answers valid and invalid calls alike: statuses, bodies, headers, stored answers and state', async () => {
    const [fast, nest] = await twins();
    await sameAnswers(fast, nest, CALLS);
    // Non-vacuity: the valid calls of the three routes were answered on the fast path, the others by Nest.
    expect(fast.get(FastRoutes).answered).toBeGreaterThanOrEqual(25);
    expect(fast.get(FastRoutes).answered).toBeLessThan(CALLS.length - 10);
    expect(nest.get(FastRoutes).answered).toBe(0);
  });

  it('answers drawn calls of every fast route alike, in the same order on both apps', async () => {
    const [fast, nest] = await twins();
    await fc.assert(
      fc.asyncProperty(fc.array(anyCall, { minLength: 8, maxLength: 15 }), async (calls) => {
        await sameAnswers(fast, nest, calls);
      }),
      { numRuns: 12, examples: [[VALID_MIX]] },
    );
    // Non-vacuity: a good share of the drawn calls took the fast path (VALID_MIX alone: 21).
    expect(fast.get(FastRoutes).answered).toBeGreaterThan(20);
  });

  it('runs the global guards: missing and read-only keys, rate limits and growth quotas answer the same', async () => {
    const [fast, nest] = await twins({
      API_KEYS: `${WRITER}:write,${READER}:read`,
      RATE_LIMIT_PER_SEC: '1',
      RATE_LIMIT_BURST: '4',
      QUOTA_NEW_ITEMS: '2',
    });
    const writer = { Authorization: `Bearer ${WRITER}` };
    const reader = { Authorization: `Bearer ${READER}` };
    await sameAnswers(fast, nest, [
      post('/boards/b/items/a/increment', {}),
      post('/boards/b/items/a/increment', {}, reader),
      get('/boards/b/top'),
      get('/boards/b/top', reader),
      post('/boards/b/items/a/increment', {}, writer),
      post('/boards/b/items/n1/increment', {}, writer),
      post('/boards/b/items/n2/increment', {}, writer),
      post('/boards/b/items/n3/increment', {}, writer),
      post('/boards/b/items/a/increment', {}, writer),
      post('/boards/b/increments', { items: [{ item: 'a' }] }, writer),
    ]);
    expect(fast.get(FastRoutes).answered).toBeGreaterThan(0);
  });
});
