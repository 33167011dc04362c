import type { Redis } from 'ioredis';
import { FakeClock } from '../../harness/clock';
import { startRankingService } from '../../harness/ranking';
import { startTestRedis, TestRedis } from '../../harness/redis';
import { PROBES_PER_QUANTILE, QUANTILES } from '../../src/ranking/standing/spread-math';
import type { RankingService } from '../../src/ranking/ranking.service';
import type { StandingService } from '../../src/ranking/standing/standing.service';
import type { RedisService } from '../../src/redis/redis.service';
import { loggedCalls, logEveryCommand, stopLoggingEveryCommand } from '../support/slowlog';

/**
 * Each call of a sharded distribution counts a bounded number of scores (issue #45): the bucket edges
 * in one call, each search round's probes in another, never both, so no call of 100 buckets runs more
 * than its 99 counts and the few commands every read runs (the config check, the listed count, the
 * range). Counted without a clock, from the commands each FCALL's script ran (SLOWLOG at 0 µs).
 */
const T0 = 1_699_999_980_000;
const SHARDS = 4;
const ITEMS = 2000;
const BUCKETS = 100;
/** Commands a score_spread call runs besides its counts (version check, listed count, ZCARD, range). */
const FIXED_COMMANDS = 8;

describe('the calls of a sharded distribution (single)', () => {
  const clock = new FakeClock(T0);
  let redis: TestRedis;
  let service: { ranking: RankingService; standing: StandingService; redisService: RedisService };
  let node: Redis;

  beforeAll(async () => {
    // A server of its own: the test reads every command it ran from its SLOWLOG.
    redis = await startTestRedis('single', { own: true });
    service = await startRankingService(redis, clock);
    node = redis.client as Redis;
  });
  afterAll(async () => {
    await service.redisService.onApplicationShutdown();
    await redis.stop();
  });

  /** The commands each score_spread FCALL's script ran, since the last reset. */
  async function spreadCalls(): Promise<number[]> {
    return (await loggedCalls(node))
      .filter(({ call }) => String(call[1]).endsWith('score_spread'))
      .map(({ commands }) => commands.length);
  }

  it('counts the bucket edges and each round of probes in calls of their own', async () => {
    const windows = [{ name: 'w', period: '1h', interval: '1m' }];
    await service.ranking.putBoard({ name: 'spread', windows, shards: SHARDS });
    for (let first = 0; first < ITEMS; first += 100) {
      const entries = Array.from({ length: 100 }, (_, k) => ({ item: `i${first + k}`, amount: 1 + first + k }));
      await service.ranking.incrementBatch('spread', entries);
    }
    await logEveryCommand(node);
    const answer = await service.standing.distribution({ name: 'spread', window: 'w', buckets: BUCKETS });
    const calls = await spreadCalls();
    await stopLoggingEveryCommand(node);

    expect(answer.count).toBe(ITEMS);
    expect(answer.quantiles.p50).toBe(ITEMS / 2);
    expect(calls.length).toBeGreaterThan(2 * SHARDS);
    expect(Math.max(...calls)).toBeLessThanOrEqual(BUCKETS - 1 + FIXED_COMMANDS);
    // The edges' call is one of them: its 99 counts are not split either.
    expect(Math.max(...calls)).toBeGreaterThanOrEqual(BUCKETS - 1);
    // A round of probes: at most every quantile's probes in a call.
    const probeCalls = calls.filter((commands) => commands < BUCKETS - 1);
    expect(Math.max(...probeCalls)).toBeLessThanOrEqual(QUANTILES.length * PROBES_PER_QUANTILE + FIXED_COMMANDS);
  });
});
