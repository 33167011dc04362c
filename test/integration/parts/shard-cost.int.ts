import Redis from 'ioredis';
import { FakeClock } from '../../../harness/clock';
import { startRankingService } from '../../../harness/ranking';
import { startTestRedis, TestRedis, TOPOLOGIES } from '../../../harness/redis';
import { RankingService } from '../../../src/ranking/ranking.service';
import { RedisService } from '../../../src/redis/redis.service';
import { resetCommandStats } from '../../support/slowlog';

/** Script and function calls (EVALSHA, EVAL, FCALL, FCALL_RO) every master ran since the last reset. */
async function scriptCalls(redis: TestRedis): Promise<number> {
  const nodes: Redis[] = 'nodes' in redis.client ? redis.client.nodes('master') : [redis.client];
  const stats = await Promise.all(nodes.map((node) => node.info('commandstats')));
  return stats
    .flatMap((text) => [...text.matchAll(/cmdstat_(?:eval|evalsha|fcall|fcall_ro):calls=(\d+)/g)])
    .reduce((sum, m) => sum + Number(m[1]), 0);
}

describe.each(TOPOLOGIES)(
  'a write on a board of 16 shards costs one call per Redis node, not per shard (%s)',
  (topology) => {
    const clock = new FakeClock(1_700_000_000_000);
    let redis: TestRedis;
    let started: { ranking: RankingService; redisService: RedisService };

    beforeAll(async () => {
      redis = await startTestRedis(topology);
      started = await startRankingService(redis, clock);
      await started.ranking.putBoard({ name: 'b', windows: [{ period: 60, interval: 10 }], shards: 16 });
      await started.ranking.incrementBatch(
        'b',
        Array.from({ length: 64 }, (_, i) => ({ item: `i${i}`, amount: 1 + (i % 7) })),
      );
    });
    afterAll(async () => {
      await started.redisService.onApplicationShutdown();
      await redis.stop();
    });

    it('answers the exact board-wide rank with the write call plus one count call per node', async () => {
      const nodes = topology === 'cluster' ? 3 : 1;
      await started.ranking.increment('b', 'i0', 1);
      await resetCommandStats(redis.client);
      const written = await started.ranking.increment('b', 'i3', 10);
      expect(await scriptCalls(redis)).toBeLessThanOrEqual(1 + nodes);
      // i3 now holds 14; nothing else holds more than 7.
      expect(written.body.windows['60']).toEqual({ score: 14, rank: 1, previousRank: null });
    });

    it('counts shards whose every slot expired, not drained yet, as holding nothing, still one call per node', async () => {
      // Every slot has left the window: nothing live to count on the other shards, which the write then
      // leaves to drain (each was counted, and drained, by a call of its own before).
      const nodes = topology === 'cluster' ? 3 : 1;
      clock.advanceMs(60_000);
      await resetCommandStats(redis.client);
      const first = await started.ranking.increment('b', 'i5', 2);
      expect(first.body).toMatchObject({
        windows: { '60': { score: 2, rank: 1, previousRank: null } },
        draining: false,
      });
      expect(await scriptCalls(redis)).toBeLessThanOrEqual(1 + nodes);
      await resetCommandStats(redis.client);
      const second = await started.ranking.increment('b', 'i6', 3);
      expect(second.body.windows['60']).toEqual({ score: 3, rank: 1, previousRank: null });
      expect(await scriptCalls(redis)).toBeLessThanOrEqual(1 + nodes);
    });
  },
);
