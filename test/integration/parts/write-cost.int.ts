import Redis from 'ioredis';
import { useRankingService } from '../../../harness/ranking';
import { TestRedis, TOPOLOGIES } from '../../../harness/redis';
import { resetCommandStats } from '../../support/slowlog';

const WINDOWS = Array.from({ length: 8 }, (_, w) => ({ name: `w${w}`, period: 3600 * (w + 1), interval: 60 }));
const SEGMENTS = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];

/** FCALL and FCALL_RO calls on every master since the last reset. */
async function functionCalls(redis: TestRedis): Promise<number> {
  const nodes: Redis[] = 'nodes' in redis.client ? redis.client.nodes('master') : [redis.client];
  const stats = await Promise.all(nodes.map((node) => node.info('commandstats')));
  return stats
    .flatMap((text) => [...text.matchAll(/^cmdstat_fcall(?:_ro)?:calls=(\d+)/gm)])
    .reduce((sum, m) => sum + Number(m[1]), 0);
}

/**
 * Item increments that arrive together share a call (WRITE_COALESCE_MS): the call is kept within
 * WRITE_COST_PER_CALL as a batch is, so 100 increments of 8 segments on 8 windows (440 units each,
 * their segment places at SEGMENT_PLACE_FLOOR) go in calls of 4, not one of about 60 ms.
 */
describe.each(TOPOLOGIES)('coalesced increments weighed by their cost (%s)', (topology) => {
  const setup = useRankingService(topology);

  it('splits increments arriving together into calls within the bound, each answered', async () => {
    setup.clock.setMs(1_800_000_000_000);
    await setup.ranking.putBoard({ name: 'b', windows: WINDOWS, segmentsMax: 10 });
    await setup.ranking.increment('b', 'warm', 1);
    await resetCommandStats(setup.redis.client);
    const answers = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        setup.ranking.increment('b', `i${i}`, i + 1, undefined, undefined, undefined, undefined, SEGMENTS),
      ),
    );
    // 1 800 / 440: 4 increments a call at most.
    expect(await functionCalls(setup.redis)).toBeGreaterThanOrEqual(25);
    expect(answers[99].body.windows.w0).toEqual({ score: 100, rank: 1, previousRank: null });
    expect(answers[0].body.windows.w7.score).toBe(1);
  });
});
