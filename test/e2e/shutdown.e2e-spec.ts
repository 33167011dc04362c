import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Logger } from '@nestjs/common';
import { FakeClock } from '../../harness/clock';
import { RedisHealthIndicator } from '../../src/health/redis.health';
import { RedisService } from '../../src/redis/redis.service';
import { AccessTimeRecorder } from '../../src/stats/access-time.recorder';
import { ACCESS_TIME, StatsService } from '../../src/stats/stats.service';
import { gracefulShutdown } from '../../src/shutdown';
import { ADMIN, startTestApp } from '../../harness/app';
import { startTestRedis, TestRedis } from '../../harness/redis';

describe('graceful shutdown', () => {
  let redis: TestRedis;
  let app: NestFastifyApplication;

  beforeAll(async () => {
    redis = await startTestRedis();
    app = await startTestApp(redis, new FakeClock(1_700_000_000_000), { SCHEDULER_ENABLED: 'true' });
    await app.listen(0, '127.0.0.1');
  });
  afterAll(async () => {
    await redis.stop();
  });

  it('finishes requests in flight, flushes, closes Redis and exits 0', async () => {
    const base = await app.getUrl();
    const url = base.replace('[::1]', '127.0.0.1');
    const put = await fetch(`${url}/admin/boards/s`, {
      method: 'PUT',
      headers: { ...ADMIN, 'content-type': 'application/json' },
      body: JSON.stringify({ windows: [{ period: '1h', interval: '1m' }] }),
    });
    expect(put.status).toBe(201);
    let flushed = false;
    app.get(RedisService).flushBeforeClose(async () => {
      flushed = (await app.get(RedisService).client.ping()) === 'PONG';
    });

    await redis.client.client('PAUSE', 300, 'WRITE'); // keeps the next increment in flight for ~300 ms
    const inFlight = fetch(`${url}/boards/s/items/x/increment`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const exits: number[] = [];
    const shutdown = gracefulShutdown(app, {
      timeoutMs: 5000,
      logger: new Logger('Shutdown'),
      exit: (code) => exits.push(code),
    });
    const stopping = shutdown('SIGTERM');
    void shutdown('SIGTERM'); // a second signal changes nothing

    const answered = await inFlight;
    expect(answered.status).toBe(200);
    // Its kept-alive connection is let go, not held open until its idle timeout.
    expect(answered.headers.get('connection')).toBe('close');
    expect((await answered.json()).windows['1h']).toEqual({ score: 1, rank: 1, previousRank: null });
    await stopping;
    expect(exits).toEqual([0]);
    expect(flushed).toBe(true);
    expect(app.get(RedisService).client.status).toBe('end');
    await expect(fetch(`${url}/health/live`)).rejects.toThrow();
    expect(await redis.client.zscore(`{${redis.prefix}board:s}:1h:top`, 'x')).toBe('1');
  });
});

/** A promise the test settles by hand: `open` lets it resolve. */
function gate(): { passed: Promise<void>; open: () => void } {
  let open!: () => void;
  const passed = new Promise<void>((resolve) => (open = resolve));
  return { passed, open };
}

describe('the access-time flush while the server drains', () => {
  const FLUSH_INTERVAL_MS = 1000;
  let redis: TestRedis;
  let app: NestFastifyApplication;

  beforeAll(async () => {
    // The intervals are fake (the flush timer among them); Redis, HTTP and their timeouts keep real time
    // (Intl's and Temporal's "now", which jest's types cannot keep real, are fake too: nothing here reads them).
    jest.useFakeTimers({
      doNotFake: [
        'Date',
        'hrtime',
        'nextTick',
        'performance',
        'queueMicrotask',
        'setTimeout',
        'clearTimeout',
        'setImmediate',
        'clearImmediate',
      ],
    });
    redis = await startTestRedis();
    app = await startTestApp(redis, new FakeClock(1_700_000_000_000), {
      STATS_FLUSH_INTERVAL_MS: String(FLUSH_INTERVAL_MS),
      INGEST_REFRESH_MS: '60000',
    });
    await app.listen(0, '127.0.0.1');
  });
  afterAll(async () => {
    jest.useRealTimers();
    // A test that failed before the shutdown leaves the app open.
    if (app.get(AccessTimeRecorder).flushesOnTimer) await app.close();
    await redis.stop();
  });

  it('still runs on its timer: what was answered is written before the drain ends, not only by the last flush', async () => {
    const url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
    expect((await fetch(`${url}/health/live`)).status).toBe(200);
    // A readiness probe held until the test lets it go: the HTTP server's close waits for it.
    const [reached, held, draining] = [gate(), gate(), gate()];
    const indicator = app.get(RedisHealthIndicator);
    const isHealthy = indicator.isHealthy.bind(indicator);
    jest.spyOn(indicator, 'isHealthy').mockImplementation(async () => {
      reached.open();
      await held.passed;
      return isHealthy();
    });
    const adapter = app.getHttpAdapter();
    const close = adapter.close.bind(adapter);
    jest.spyOn(adapter, 'close').mockImplementation(() => {
      draining.open();
      return close();
    });
    const timed = jest.spyOn(app.get(AccessTimeRecorder), 'flush');
    const probe = fetch(`${url}/health/ready`);
    await reached.passed;
    const exits: number[] = [];
    const stopping = gracefulShutdown(app, {
      timeoutMs: 5000,
      logger: new Logger('Shutdown'),
      exit: (code) => exits.push(code),
    })('SIGTERM');
    try {
      await draining.passed;
      jest.advanceTimersByTime(FLUSH_INTERVAL_MS);
      expect(timed).toHaveBeenCalledTimes(1);
      await timed.mock.results[0].value;
      // Written while the probe still holds the server open: before the last flush.
      expect(await app.get(StatsService).read('GET /health/live', ACCESS_TIME)).toMatchObject({ count: 1 });
    } finally {
      held.open();
      await stopping;
    }
    // Answered once let go: not ready, the app is stopping (Terminus).
    expect((await probe).status).toBe(503);
    expect(exits).toEqual([0]);
    // Stopped with the last flush: a closed Redis gets no more.
    jest.advanceTimersByTime(FLUSH_INTERVAL_MS);
    expect(timed).toHaveBeenCalledTimes(2);
  });
});
