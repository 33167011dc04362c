import Redis from 'ioredis';
import { RedisStreamSource } from '../../../src/ingest/sources/redis-stream.source';
import { startTestRedis, TestRedis } from '../../../harness/redis';

/**
 * A Redis source's lag: entries not delivered to its group plus those pending. Redis's own `lag`
 * counts from the entries the group has read, a counter that can fall behind for good across a
 * restart of Redis (the fault test saw 13 000 on a group with every entry delivered and acknowledged);
 * XGROUP SETID ... ENTRIESREAD puts a group in that state here.
 */
describe('a Redis stream source measures its lag from what was delivered (real Redis)', () => {
  let redis: TestRedis;
  let source: RedisStreamSource;
  let stream: string;

  beforeAll(async () => {
    redis = await startTestRedis('single');
    stream = `${redis.prefix}events`;
    source = new RedisStreamSource(
      'events',
      { kind: 'redis-stream', stream },
      'consumer-1',
      () => new Redis(redis.url),
    );
    await source.open();
  });
  afterAll(async () => {
    await source.close();
    await redis.stop();
  });

  const add = async (count: number) => {
    for (let i = 0; i < count; i++) await redis.client.xadd(stream, '*', 'event', `{"board":"b","item":"i${i}"}`);
  };

  it('answers 0 once every entry was delivered and acknowledged, whatever the group has counted', async () => {
    await add(3);
    expect(await source.lag()).toBe(3);
    const delivered = await source.next(10, 0);
    expect(delivered).toHaveLength(3);
    expect(await source.lag()).toBe(3); // pending until acknowledged
    await source.ack(delivered);
    expect(await source.lag()).toBe(0);

    // The group's read counter behind (as after a restart): Redis's lag says 3, nothing is left.
    await redis.client.xgroup('SETID', stream, 'trendboard', '$', 'ENTRIESREAD', 0);
    const group = (await redis.client.xinfo('GROUPS', stream)) as unknown[][];
    expect(group[0][group[0].indexOf('lag') + 1]).toBe(3);
    expect(await source.lag()).toBe(0);

    // New entries count again (Redis's estimate while some are undelivered).
    await add(2);
    expect(await source.lag()).toBeGreaterThanOrEqual(2);
  });
});
