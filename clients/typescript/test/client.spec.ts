import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { ADMIN_TOKEN, startTestApp } from '../../../harness/app';
import { FakeClock } from '../../../harness/clock';
import { startTestRedis, TestRedis } from '../../../harness/redis';
import { TrendboardClient, TrendboardError } from '../src';
import { listen, notingFetch } from './helpers';

const T0 = 1_700_002_800_000;

/** Every method of the client, once at least, against the real service. */
describe('TrendboardClient against the service', () => {
  let redis: TestRedis;
  let app: NestFastifyApplication;
  let base: string;
  const clock = new FakeClock(T0);
  const client = () => new TrendboardClient({ baseUrl: base, adminToken: ADMIN_TOKEN });

  beforeAll(async () => {
    redis = await startTestRedis();
    app = await startTestApp(redis, clock);
    base = await listen(app);
  });
  afterAll(async () => {
    await app.close();
    await redis.stop();
  });

  it('boards: put, list, get, increment, batch, like, unlike, top, item, around, history, delete', async () => {
    const tb = client();
    const config = { windows: [{ name: 'h', period: '1h', interval: '1m', snapshots: { keep: 5, top: 10 } }] };
    const made = await tb.boards.put('posts', config);
    expect(made.windows.map((w) => [w.name, w.period])).toEqual([['h', 3600]]);
    await expect(tb.boards.put('posts', config)).resolves.toMatchObject({ name: 'posts' });
    expect((await tb.boards.list({ limit: 10 })).boards.map((b) => b.name)).toEqual(['posts']);
    expect((await tb.boards.get('posts')).windows).toHaveLength(1);

    const five = await tb.boards.increment('posts', 'post 1/ü', { amount: 5 });
    const standing: { score: number; rank: number | null } = five.windows.h;
    expect(standing).toMatchObject({ score: 5, rank: 1 });
    expect(await tb.boards.increment('posts', 'post-2')).toMatchObject({
      item: 'post-2',
      windows: { h: { score: 1 } },
    });
    expect(await tb.boards.batch('posts', [{ item: 'post-3', amount: 3 }, { item: 'post-2' }])).toMatchObject({
      count: 2,
    });
    expect(await tb.boards.like('posts', 'post-3', 'ann')).toMatchObject({ counted: true });
    expect(await tb.boards.like('posts', 'post-3', 'ann')).toMatchObject({ counted: false });
    expect(await tb.boards.unlike('posts', 'post-3', 'ann')).toMatchObject({ counted: true });

    const top = await tb.boards.top('posts', { window: 'h', limit: 10 });
    expect(top.items.map((row) => [row.item, row.score])).toEqual([
      ['post 1/ü', 5],
      ['post-3', 3],
      ['post-2', 2],
    ]);
    expect(await tb.boards.item('posts', 'post-3', { window: 'h' })).toMatchObject({ rank: 2, score: 3 });
    expect((await tb.boards.around('posts', 'post-3', { radius: 1 })).items).toHaveLength(3);

    clock.advanceSec(60); // past a slot boundary: the next write takes the snapshot
    await tb.boards.increment('posts', 'post-2');
    const history = await tb.boards.history('posts', { window: 'h' });
    expect(history.items[0]).toMatchObject({ item: 'post 1/ü', rank: 1 });
    const points = await tb.boards.itemHistory('posts', 'post-3', { window: 'h' });
    expect(points.points).toEqual([expect.objectContaining({ rank: 2, score: 3 })]);

    await expect(tb.boards.delete('posts')).resolves.toBeUndefined();
    await expect(tb.boards.get('posts')).rejects.toMatchObject({ code: 'BOARD_NOT_FOUND', status: 404 });
  });

  it('watchTop passes metric: the snapshot ranks by it and rows carry every metric (#50)', async () => {
    const tb = client();
    await tb.boards.put('voted', { windows: [{ name: 'h', period: '1h', interval: '1m' }], metrics: ['up', 'down'] });
    await tb.boards.batch('voted', [
      { item: 'a', amount: 5 },
      { item: 'b', amount: 1 },
    ]);
    await tb.boards.batch('voted', [{ item: 'b', amount: 7, metric: 'down' }]);
    const aborter = new AbortController();
    const events = tb.watchTop('voted', { window: 'h', metric: 'down', signal: aborter.signal });
    const first = await events.next();
    aborter.abort();
    await events.return();
    expect(first.value).toMatchObject({ type: 'snapshot', listing: { board: 'voted', window: 'h', metric: 'down' } });
    const rows = first.done ? [] : first.value.listing.items;
    expect(rows.map((row) => [row.item, row.rank, row.score, row.metrics])).toEqual([['b', 1, 7, { up: 1, down: 7 }]]);
    const unknown = tb.watchTop('voted', { metric: 'sideways' });
    await expect(unknown.next()).rejects.toMatchObject({ code: 'UNKNOWN_METRIC', status: 400 });
    // The later specs share the service and expect no board left.
    await tb.boards.delete('voted');
  });

  it('counters: increment, read, list, delete', async () => {
    const tb = client();
    expect(await tb.counters.increment('hits', { count: 5 })).toMatchObject({ name: 'hits', count: 5 });
    await tb.counters.increment('hits');
    const series = await tb.counters.read('hits', { precision: '60' });
    expect(series.samples).toEqual([{ t: T0 / 1000 + 60, count: 6 }]);
    expect((await tb.counters.list()).counters.map((c) => c.name)).toEqual(['hits']);
    await tb.counters.delete('hits');
    await expect(tb.counters.read('hits', { precision: '60' })).rejects.toMatchObject({ code: 'COUNTER_NOT_FOUND' });
  });

  it('stats: record, read, slowest, list', async () => {
    const tb = client();
    expect(await tb.stats.record('Profile Page', 'Load', 0.5)).toMatchObject({ count: 1, sum: 0.5 });
    await tb.stats.record('Profile Page', 'Load', 1.5);
    expect(await tb.stats.read('Profile Page', 'Load', { hour: 'current' })).toMatchObject({ count: 2, average: 1 });
    expect(Array.isArray((await tb.stats.slowest({ limit: 5 })).items)).toBe(true);
    expect((await tb.stats.list()).items).toEqual(
      expect.arrayContaining([expect.objectContaining({ context: 'Profile Page', type: 'Load' })]),
    );
  });

  it('operations: health, metrics, local metrics', async () => {
    const tb = client();
    expect(await tb.health.live()).toEqual({ status: 'ok' });
    expect(await tb.health.ready()).toMatchObject({ status: 'ok' });
    expect(await tb.metrics()).toMatch(/^# HELP /m);
    expect(await tb.admin.localMetrics({ seconds: 5 })).toMatchObject({ seconds: 5 });
  });

  it('throws one error class with code, status, retryable, applied and the request id; a 400 is never retried', async () => {
    const noted = notingFetch();
    const tb = new TrendboardClient({ baseUrl: base, fetch: noted.fetch, sleep: () => Promise.resolve() });
    const error = await tb.boards.top('nope').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TrendboardError);
    expect(error).toMatchObject({ code: 'BOARD_NOT_FOUND', status: 404, retryable: false, applied: 'no' });
    expect((error as TrendboardError).requestId).toMatch(/\S/);
    noted.sent.length = 0;
    await tb.counters.increment('c', { count: 0 }).then(
      () => expect('answered').toBe('refused'),
      (refused: TrendboardError) => expect(refused).toMatchObject({ code: 'INVALID_INPUT', status: 400 }),
    );
    expect(noted.sent).toHaveLength(1);
    expect(noted.sent[0].headers.get('idempotency-key')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('honours Retry-After on a 429 from the read rate limit, waiting through the injected sleep', async () => {
    const limitedClock = new FakeClock(T0);
    const limited = await startTestApp(redis, limitedClock, {
      READ_RATE_LIMIT_PER_SEC: '1',
      READ_RATE_LIMIT_BURST: '1',
    });
    try {
      const slept: number[] = [];
      const noted = notingFetch();
      const tb = new TrendboardClient({
        baseUrl: await listen(limited),
        fetch: noted.fetch,
        // No real waiting: the service's clock moves by what the client waits.
        sleep: (ms) => {
          slept.push(ms);
          limitedClock.advanceMs(ms);
          return Promise.resolve();
        },
      });
      await tb.boards.list();
      expect(await tb.boards.list()).toMatchObject({ boards: [] });
      expect(noted.sent).toHaveLength(3); // the second call was refused once, then waited and answered
      expect(slept).toEqual([1000]);
      // A wait longer than the call's deadline is not taken: the 429 is thrown at once.
      const hurried = new TrendboardClient({ baseUrl: await limited.getUrl(), deadlineMs: 500 });
      await expect(hurried.boards.list()).rejects.toMatchObject({ code: 'RATE_LIMITED', retryAfterSec: 1 });
    } finally {
      await limited.close();
    }
  });

  // Last: once a key has existed, the service refuses keyless calls even after it is revoked (its key
  // store fails closed).
  it('admin keys: create, list, delete; the key then works as apiKey', async () => {
    const tb = client();
    const made = await tb.admin.keys.create({ name: 'writer', scopes: ['read', 'write'] });
    try {
      expect((await tb.admin.keys.list()).keys.map((k) => k.name)).toContain('writer');
      const keyed = new TrendboardClient({ baseUrl: base, apiKey: made.key });
      expect(await keyed.counters.increment('keyed')).toMatchObject({ count: 1 });
      // Without a key, writes are refused now that one exists: not retryable, not applied.
      const refused = await tb.counters.increment('keyed').catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(TrendboardError);
      expect(refused).toMatchObject({ code: 'API_KEY_MISSING', status: 401, retryable: false, applied: 'no' });
    } finally {
      await tb.admin.keys.delete('writer');
    }
    expect((await tb.admin.keys.list()).keys.map((k) => k.name)).not.toContain('writer');
  });
});
