import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Logger } from '@nestjs/common';
import { FakeClock } from '../../harness/clock';
import { RedisService } from '../../src/redis/redis.service';
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
