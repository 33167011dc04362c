import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { SystemClock } from '../../../src/common/clock';
import { ADMIN_TOKEN, startTestApp } from '../../../harness/app';
import { HttpFaultProxy } from '../../../test/support/http-fault-proxy';
import { startTestRedis, TestRedis } from '../../../harness/redis';
import { TrendboardClient, type TopEvent } from '../src';
import { listen, notingFetch, seeded } from './helpers';

/**
 * The client through a proxy that resets connections before forwarding and drops answers after the
 * service applied the request: with its retries (one Idempotency-Key per call), every write counts
 * exactly once. And the live stream resumes after the proxy or the service ends it.
 */
describe('the client through a faulty network', () => {
  let redis: TestRedis;
  let app: NestFastifyApplication;
  let base: string;
  let proxy: HttpFaultProxy;
  const direct = () => new TrendboardClient({ baseUrl: base, adminToken: ADMIN_TOKEN });

  beforeAll(async () => {
    redis = await startTestRedis('single', { own: true }); // stopped and restarted below
    app = await startTestApp(redis, new SystemClock(), { STREAM_COALESCE_MS: '50' });
    base = await listen(app);
    proxy = await HttpFaultProxy.start(base, seeded(28));
  });
  afterAll(async () => {
    await proxy.close();
    await app.close();
    await redis.stop();
  });

  it('N concurrent writes with lost answers and reset connections end with exact figures', async () => {
    await direct().boards.put('faulty', { windows: [{ period: '1h', interval: '1m' }] });
    proxy.shares = { reset: 0.15, dropAnswer: 0.25 };
    const noted = notingFetch();
    const tb = new TrendboardClient({
      baseUrl: proxy.url,
      fetch: noted.fetch,
      maxRetries: 12,
      // Real but short backoff: the test waits milliseconds, the logic is the production one.
      baseDelayMs: 2,
      maxDelayMs: 20,
    });
    const items = ['a', 'b', 'c', 'd', 'e'];
    const expected = new Map<string, number>();
    const writes: Array<Promise<unknown>> = [];
    for (let i = 0; i < 60; i++) {
      const item = items[i % items.length];
      const amount = 1 + (i % 7);
      expected.set(item, (expected.get(item) ?? 0) + amount);
      writes.push(tb.boards.increment('faulty', item, { amount }));
    }
    for (let i = 0; i < 10; i++) {
      expected.set('batched', (expected.get('batched') ?? 0) + 2);
      writes.push(tb.boards.batch('faulty', [{ item: 'batched', amount: 2 }]));
      writes.push(tb.boards.like('faulty', 'liked', `user-${i}`));
      writes.push(tb.counters.increment('faulty-hits', { count: 3 }));
    }
    expected.set('liked', 10);
    await Promise.all(writes);
    proxy.shares = { reset: 0, dropAnswer: 0 };

    // The faults were real: answers of applied writes were lost, connections reset, calls repeated.
    expect(proxy.counts['drop-answer']).toBeGreaterThan(5);
    expect(proxy.counts.reset).toBeGreaterThan(5);
    const keys = noted.sent.map((request) => request.headers.get('idempotency-key'));
    expect(new Set(keys).size).toBe(writes.length); // one key per logical call...
    expect(keys.length).toBeGreaterThan(writes.length); // ...reused by its retries

    const top = await direct().boards.top('faulty', { limit: 100 });
    expect(Object.fromEntries(top.items.map((row) => [row.item, row.score]))).toEqual(Object.fromEntries(expected));
    const hits = await direct().counters.read('faulty-hits', { precision: '86400' });
    expect(hits.samples.reduce((sum, sample) => sum + sample.count, 0)).toBe(30);
  });

  it('watchTop resumes with Last-Event-ID after the proxy cuts the stream and after the service ends it', async () => {
    const tb = direct();
    const board = { windows: [{ name: 'm', period: '1h', interval: '1m' }] };
    await tb.boards.put('live', board);
    await tb.boards.increment('live', 'a');
    const noted = notingFetch();
    const waits: number[] = [];
    let gate: Promise<void> = Promise.resolve();
    const watcher = new TrendboardClient({
      baseUrl: proxy.url,
      fetch: noted.fetch,
      sleep: (ms) => {
        waits.push(ms);
        return gate;
      },
    });
    const aborter = new AbortController();
    const events = watcher.watchTop('live', { window: 'm', limit: 5, signal: aborter.signal });
    const next = async (): Promise<TopEvent> => {
      const step = await events.next();
      if (step.done) throw new Error('the iteration ended');
      return step.value;
    };
    const rows = (event: TopEvent) => event.listing.items.map((row) => [row.item, row.score]);

    const first = await next();
    expect(first).toMatchObject({ type: 'snapshot', listing: { board: 'live', window: 'm' } });
    expect(rows(first)).toEqual([['a', 1]]);
    await tb.boards.increment('live', 'b', { amount: 5 });
    const change = await next();
    expect([change.type, rows(change)]).toEqual([
      'top',
      [
        ['b', 5],
        ['a', 1],
      ],
    ]);

    // The network drops the connection: the iterator reopens it, resuming from the last event's id.
    expect(proxy.cutStreams()).toBe(1);
    await tb.boards.increment('live', 'c', { amount: 2 });
    const resumed = await next();
    expect([resumed.type, rows(resumed)]).toEqual([
      'snapshot',
      [
        ['b', 5],
        ['c', 2],
        ['a', 1],
      ],
    ]);
    const streams = noted.sent.filter((request) => request.url.includes('/stream'));
    expect(streams.map((request) => request.headers.get('last-event-id'))).toEqual([null, change.id]);
    expect(waits).toEqual([1000]); // the service's `retry:` delay

    // The service ends the stream (here: the board is deleted; a lifetime limit or a shutdown ends it
    // the same way). The iterator waits and reconnects; by then the board is back.
    let open!: () => void;
    gate = new Promise((resolve) => (open = resolve));
    const afterEnd = next();
    await tb.boards.delete('live');
    await waitUntil(() => waits.length === 2);
    await tb.boards.put('live', board);
    await tb.boards.increment('live', 'd', { amount: 9 });
    open();
    const fresh = await afterEnd;
    expect([fresh.type, rows(fresh)]).toEqual(['snapshot', [['d', 9]]]);

    // An abort ends the iteration quietly.
    const pending = events.next();
    aborter.abort();
    await expect(pending).resolves.toEqual({ done: true, value: undefined });
  });
  // Last: the Redis restarts empty.
  it('retries a 503 (Redis unreachable) after its Retry-After, with the same Idempotency-Key', async () => {
    if (!redis.pause || !redis.resume) return; // a shared REDIS_URL cannot be stopped from here
    const resume = redis.resume.bind(redis);
    await redis.pause();
    const slept: number[] = [];
    const noted = notingFetch();
    const tb = new TrendboardClient({
      baseUrl: base,
      fetch: noted.fetch,
      // The first wait brings Redis back; later ones (the app reconnecting) pass quickly.
      sleep: async (ms) => {
        slept.push(ms);
        if (slept.length === 1) await resume();
        else await new Promise((resolve) => setTimeout(resolve, 50));
      },
    });
    expect(await tb.counters.increment('outage', { count: 3 })).toMatchObject({ count: 3 });
    expect(slept[0]).toBe(1000); // Retry-After: 1
    expect(new Set(noted.sent.map((request) => request.headers.get('idempotency-key'))).size).toBe(1);
    expect(noted.sent.length).toBe(slept.length + 1);
  });
});

async function waitUntil(done: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
