import { NestFastifyApplication } from '@nestjs/platform-fastify';
import request from 'supertest';
import { ADMIN } from '../../../harness/app';
import { IncrementWrite } from '../../../src/ranking/writes/item-writes';
import { WritePipeline } from '../../../src/ranking/writes/write-pipeline';
import { useSingleNodeApp } from '../../support/e2e';

/** What a client sees of an answer: the request id and the date differ by nature. */
const SEEN_HEADERS = ['content-type', 'retry-after', 'idempotent-replayed', 'x-content-type-options', 'allow'];

interface Call {
  path: string;
  body?: object;
  headers?: Record<string, string>;
}

const increment = (board: string, item: string, body?: object, headers?: Record<string, string>): Call => ({
  path: `/boards/${board}/items/${item}/increment`,
  body,
  headers,
});

/** An increment as a client sees its answer. */
async function answerOf(
  app: NestFastifyApplication,
  call: Call,
): Promise<{ call: string; status: number; body: unknown; headers: object }> {
  let pending = request(app.getHttpServer()).post(call.path);
  for (const [name, value] of Object.entries(call.headers ?? {})) pending = pending.set(name, value);
  const response = await (call.body === undefined ? pending : pending.send(call.body));
  const headers = Object.fromEntries(SEEN_HEADERS.map((name) => [name, response.headers[name]]));
  return { call: call.path, status: response.status, body: response.body, headers };
}

/** An admin request (a board, an alias) on an app: its status. */
async function admin(app: NestFastifyApplication, method: 'put' | 'delete', path: string, body?: object) {
  const pending = request(app.getHttpServer())[method](path).set(ADMIN);
  return (await (body === undefined ? pending : pending.send(body))).status;
}

const WRITER = 'writer-secret-0123456789';
const WRITER_HEADERS = { Authorization: `Bearer ${WRITER}` };

const WINDOWS = [{ period: '1h', interval: '1m' }];
const BOARDS: Array<[string, object]> = [
  ['b', { windows: WINDOWS }],
  ['best', { windows: WINDOWS, aggregate: 'max' }],
  ['full', { windows: WINDOWS, maxItems: 2 }],
  ['split', { windows: WINDOWS, shards: 2 }],
];

/**
 * Plain increments (no key, no segment, a cached board of one shard: WritePipeline.increment's one
 * promise step) answer as the general path does: twin apps, one with the plain step turned off, on
 * their own prefixes, each with a second instance on its prefix that changes boards behind its cache.
 */
describe('plain increments answer as the general write path', () => {
  const e2e = useSingleNodeApp({ noApp: true, fresh: true });
  let plainSteps: jest.SpyInstance;

  beforeEach(() => {
    plainSteps = jest.spyOn(IncrementWrite.prototype, 'applyPlain');
  });
  afterEach(() => plainSteps.mockRestore());

  /** [the app under test, a second instance on its prefix] for the plain and the general path. */
  async function twins(env: Record<string, string> = {}) {
    const prefix = e2e.redis().prefix;
    const pairs: NestFastifyApplication[][] = [];
    for (const side of ['p', 'g']) {
      const own = { ...env, KEY_PREFIX: `${prefix}${side}:` };
      const pair = [await e2e.startApp(own), await e2e.startApp(own)];
      for (const [board, body] of BOARDS) expect(await admin(pair[1], 'put', `/admin/boards/${board}`, body)).toBe(201);
      pairs.push(pair);
    }
    // The general app: no increment is taken as plain.
    Object.defineProperty(pairs[1][0].get(WritePipeline), 'plainTarget', { value: () => undefined });
    return { plain: pairs[0], general: pairs[1] };
  }

  type Step = Call | ((app: NestFastifyApplication, other: NestFastifyApplication) => Promise<unknown>);

  /** Runs the steps on both sides, expecting the same answers: the plain side's statuses. */
  async function sameAnswers(apps: Awaited<ReturnType<typeof twins>>, steps: Step[]): Promise<number[]> {
    const statuses: number[] = [];
    for (const step of steps) {
      if (typeof step === 'function') {
        expect(await step(apps.plain[0], apps.plain[1])).toEqual(await step(apps.general[0], apps.general[1]));
        continue;
      }
      const seen = await answerOf(apps.plain[0], step);
      expect(seen).toEqual(await answerOf(apps.general[0], step));
      statuses.push(seen.status);
    }
    return statuses;
  }

  it('answers valid and refused increments alike, configs changed and aliases named by another instance', async () => {
    const apps = await twins();
    const past = Math.floor(Date.now() / 1000) - 7200;
    const future = Math.floor(Date.now() / 1000) + 7200;
    const statuses = await sameAnswers(apps, [
      increment('b', 'a', {}),
      increment('b', 'a', { amount: 5 }),
      increment('b', 'c'),
      increment('b', 'a', { amount: 0 }),
      increment('b', 'a', { at: past }),
      increment('b', 'a', { createdAt: future }),
      increment('b', 'a', { actor: 'u1' }),
      increment('b', 'a', { group: 'g' }),
      increment('b', 'a', { metric: 'other' }),
      increment('b', 'a', { segments: ['eu'] }),
      increment('b', 'k', { amount: 2 }, { 'Idempotency-Key': 'key-1' }),
      increment('b', 'k', { amount: 2 }, { 'Idempotency-Key': 'key-1' }),
      increment('best', 'a', {}),
      increment('missing', 'a', {}),
      increment('full', 'a', {}),
      increment('full', 'c', {}),
      increment('full', 'd', {}),
      increment('full', 'a', {}),
      increment('split', 'a', {}),
      // Another instance changes the board: the cached config is refused, the stored one read and used.
      (_app, other) =>
        admin(other, 'put', '/admin/boards/b?reset=true', { windows: [{ period: '1d', interval: '1h' }] }),
      increment('b', 'a', { amount: 3 }),
      increment('b', 'a', {}),
      (_app, other) => admin(other, 'delete', '/admin/boards/b'),
      increment('b', 'a', {}),
      (_app, other) => admin(other, 'put', '/admin/boards/b', { windows: WINDOWS }),
      increment('b', 'a', {}),
      // Another instance names an alias: this one's first write of it is refused by the shard, then resolved.
      (_app, other) => admin(other, 'put', '/admin/boards/b/aliases/old', { item: 'a' }),
      increment('b', 'old', { amount: 2 }),
      increment('b', 'a', {}),
    ]);
    // Non-vacuity: refusals of each kind, and the plain app's plain increments took the plain step.
    expect(statuses).toEqual(expect.arrayContaining([200, 400, 404, 409]));
    expect(plainSteps.mock.contexts.length).toBeGreaterThanOrEqual(12);
  });

  it('refuses growth past the quota alike', async () => {
    const apps = await twins({ API_KEYS: `${WRITER}:write`, QUOTA_NEW_ITEMS: '2' });
    const statuses = await sameAnswers(apps, [
      increment('b', 'n1', {}, WRITER_HEADERS),
      increment('b', 'n2', {}, WRITER_HEADERS),
      increment('b', 'n3', {}, WRITER_HEADERS),
      increment('b', 'n1', {}, WRITER_HEADERS),
      increment('b', 'n4', { amount: 2 }, WRITER_HEADERS),
    ]);
    expect(statuses).toEqual([200, 200, 429, 200, 429]);
    expect(plainSteps.mock.contexts.length).toBeGreaterThanOrEqual(3);
  });
});
