import { NestFastifyApplication } from '@nestjs/platform-fastify';
import request from 'supertest';
import { RankingService } from '../../../src/ranking/ranking.service';
import { ADMIN, startTestApp } from '../../../harness/app';
import { FakeClock } from '../../../harness/clock';
import { startTestRedis, TestRedis, TOPOLOGIES } from '../../../harness/redis';

const T0 = 1_700_002_800_000;
const PASS = { leaseMs: 30_000, claimBatch: 10 };

describe.each(TOPOLOGIES)('item data and lookups of a sharded board (%s)', (topology) => {
  let redis: TestRedis;
  let app: NestFastifyApplication;
  const clock = new FakeClock(T0);
  const http = () => request(app.getHttpServer());
  const ITEMS = Array.from({ length: 12 }, (_, i) => `item-${i}`);
  /** Items with data, over every shard: what the data hashes hold. */
  const storedData = async () => {
    const keys = (await redis.keys('board:d*')).filter((key) => key.endsWith(':data'));
    const counts = await Promise.all(keys.map((key) => redis.client.hlen(key)));
    return counts.reduce((sum, n) => sum + n, 0);
  };

  beforeAll(async () => {
    redis = await startTestRedis(topology);
    app = await startTestApp(redis, clock);
  });
  afterAll(async () => {
    await app.close();
    await redis.stop();
  });

  it('the scheduler removes data with the items its expiry removes, shard by shard, and nothing else', async () => {
    await http()
      .put('/admin/boards/d')
      .set(ADMIN)
      .send({ windows: [{ name: 'm', period: '2m', interval: '1m' }], shards: 3 })
      .expect(201);
    for (const [i, item] of ITEMS.entries()) {
      await http()
        .post(`/boards/d/items/${item}/increment`)
        .send({ amount: i + 1 })
        .expect(200);
      await http().put(`/boards/d/items/${item}/data`).send({ i }).expect(204);
    }
    expect(await storedData()).toBe(ITEMS.length);
    const lookup = await http()
      .post('/boards/d/lookup?data=true')
      .send({ items: ['item-11', 'item-0', 'x'] });
    expect(lookup.body.items).toEqual([
      { item: 'item-11', score: 12, rank: 1, previousRank: null, data: { i: 11 } },
      { item: 'item-0', score: 1, rank: 12, previousRank: null, data: { i: 0 } },
      { item: 'x', score: 0, rank: null, previousRank: null, data: null },
    ]);
    clock.advanceSec(60);
    await http().post('/boards/d/items/item-3/increment').send({ amount: 1 }).expect(200);
    clock.advanceSec(60);
    // No read: only the scheduler's expiry runs.
    await app.get(RankingService).expireDue(PASS);
    expect(await storedData()).toBe(1);
    const kept = await http().get('/boards/d/top?data=true').expect(200);
    expect(kept.body.items).toEqual([{ rank: 1, item: 'item-3', score: 1, previousRank: null, data: { i: 3 } }]);
    await http().delete('/admin/boards/d').set(ADMIN).expect(204);
    expect(await storedData()).toBe(0);
  });
});
