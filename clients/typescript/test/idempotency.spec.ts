import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { ADMIN_TOKEN, startTestApp } from '../../../harness/app';
import { FakeClock } from '../../../harness/clock';
import { startTestRedis, TestRedis } from '../../../harness/redis';
import { TrendboardClient } from '../src';
import { listen, notingFetch } from './helpers';

const T0 = 1_700_002_800_000;
/** The service's quota of stored answers, small: 50 answers kept 24 h per hour. */
const QUOTA = 50;

/** The client's own Idempotency-Keys against a service with a quota of stored answers (issue #45 row 11). */
describe('TrendboardClient keys and the quota of stored answers', () => {
  let redis: TestRedis;
  let app: NestFastifyApplication;
  let base: string;
  const clock = new FakeClock(T0);

  beforeAll(async () => {
    redis = await startTestRedis();
    app = await startTestApp(redis, clock, { QUOTA_IDEMPOTENT_ANSWERS: String(QUOTA) });
    base = await listen(app);
    const admin = new TrendboardClient({ baseUrl: base, adminToken: ADMIN_TOKEN });
    await admin.boards.put('b', { windows: [{ name: 'h', period: '1h', interval: '1m' }] });
  });
  afterAll(async () => {
    await app.close();
    await redis.stop();
  });

  it('a backend writing far past the quota through the client is never cut off: each write costs a minute of an answer', async () => {
    const noted = notingFetch();
    const tb = new TrendboardClient({ baseUrl: base, fetch: noted.fetch, maxRetries: 0 });
    const writes = 20 * QUOTA;
    for (let i = 0; i < writes; i += 50)
      await Promise.all(Array.from({ length: 50 }, (_, j) => tb.boards.increment('b', `i${(i + j) % 7}`)));
    const top = await tb.boards.top('b', { limit: 10 });
    expect(top.items.reduce((sum, row) => sum + row.score, 0)).toBe(writes);
    // Every write carried a key of its own and the retention its retries need (deadline 30 s + 60 s).
    const keyed = noted.sent.filter((request) => request.method === 'POST');
    expect(keyed).toHaveLength(writes);
    expect(new Set(keyed.map((request) => request.headers.get('idempotency-key'))).size).toBe(writes);
    expect(keyed.every((request) => request.headers.get('idempotency-retention') === '90')).toBe(true);
  });

  it('retries stay safe: an answer lost on the way is replayed, the write applied once', async () => {
    let lost = 0;
    const noted = notingFetch();
    const tb = new TrendboardClient({
      baseUrl: base,
      sleep: () => Promise.resolve(),
      // The first answer reaches the service's side only: the client sees a network failure and retries.
      fetch: async (input, init) => {
        const response = await noted.fetch(input, init);
        if (lost++ === 0) throw new TypeError('fetch failed');
        return response;
      },
    });
    await tb.boards.increment('b', 'once', { amount: 5 });
    expect(noted.sent).toHaveLength(2);
    const [first, retry] = noted.sent.map((request) => request.headers);
    expect(retry.get('idempotency-key')).toBe(first.get('idempotency-key'));
    expect(retry.get('idempotency-retention')).toBe(first.get('idempotency-retention'));
    expect((await tb.boards.item('b', 'once')).score).toBe(5);
  });

  it('a key of the caller keeps the full retention and counts a whole answer; a bad retention is a 400', async () => {
    const noted = notingFetch();
    const tb = new TrendboardClient({ baseUrl: base, fetch: noted.fetch });
    await tb.boards.increment('b', 'mine', { amount: 1 }, { idempotencyKey: 'order-17' });
    expect(noted.sent[0].headers.get('idempotency-retention')).toBeNull();
    const bad = await fetch(`${base}/boards/b/items/x/increment`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': 'k', 'idempotency-retention': '0' },
      body: '{}',
    });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ code: 'INVALID_INPUT' });
  });
});
