import { FakeClock } from '../../../harness/clock';
import { useOwnServerRanking } from '../../../harness/ranking';
import { SPREAD_COUNTS_PER_CALL, SPREAD_SHARD_WEIGHT } from '../../../src/ranking/core/ranking.limits';
import { loggedCalls, logEveryCommand, stopLoggingEveryCommand } from '../../support/slowlog';

/**
 * The calls of a sharded distribution (issue #45): one per Redis node and round rather than one per
 * shard, each running a bounded number of commands (the bucket edges in one round, each search
 * round's probes in another, so a call weighs SPREAD_SHARD_WEIGHT and one round's bounds per shard it
 * reads, at most SPREAD_COUNTS_PER_CALL in all). Counted without a clock, from the commands each
 * FCALL's script ran (SLOWLOG at 0 µs).
 */
const T0 = 1_699_999_980_000;
const ITEMS = 2000;
const BUCKETS = 100;

describe('the calls of a sharded distribution (single)', () => {
  const clock = new FakeClock(T0);
  // A server of its own: the test reads every call it ran from its SLOWLOG.
  const own = useOwnServerRanking(clock);

  /** The commands each FCALL of the distribution's functions ran, since the last reset. */
  async function spreadCalls(): Promise<number[]> {
    return (await loggedCalls(own().node))
      .filter(({ call }) => /score_spread(_shards)?$/.test(String(call[1])))
      .map(({ commands }) => commands.length);
  }

  /** A board of `shards` shards holding ITEMS items of distinct scores (1..ITEMS), and its distribution's calls. */
  async function distributionCalls(name: string, shards: number): Promise<number[]> {
    const windows = [{ name: 'w', period: '1h', interval: '1m' }];
    await own().ranking.putBoard({ name, windows, shards });
    for (let first = 0; first < ITEMS; first += 100) {
      const entries = Array.from({ length: 100 }, (_, k) => ({ item: `i${first + k}`, amount: 1 + first + k }));
      await own().ranking.incrementBatch(name, entries);
    }
    await logEveryCommand(own().node);
    const answer = await own().standing.distribution({ name, window: 'w', buckets: BUCKETS });
    const calls = await spreadCalls();
    await stopLoggingEveryCommand(own().node);
    expect(answer.count).toBe(ITEMS);
    expect(answer.quantiles.p50).toBe(ITEMS / 2);
    expect(answer.buckets.map((bucket) => bucket.count)).toEqual(
      Array.from({ length: BUCKETS }, () => ITEMS / BUCKETS),
    );
    return calls;
  }

  it('reads the shards one node serves in calls of a bounded number of commands', async () => {
    const calls = await distributionCalls('spread4', 4);
    // Four shards of 500 items: a call reads them all in the first round, and the
    // edges' round of 99 bounds in calls of as many shards as the weight bound takes (two).
    const perCall = Math.floor(SPREAD_COUNTS_PER_CALL / (SPREAD_SHARD_WEIGHT + BUCKETS - 1));
    expect(perCall).toBe(2);
    expect(Math.max(...calls)).toBeLessThanOrEqual(SPREAD_COUNTS_PER_CALL);
    expect(Math.max(...calls)).toBeGreaterThanOrEqual(perCall * (BUCKETS - 1));
  });

  it('sends a 64-shard distribution in fewer calls than shards, none past the bound', async () => {
    const calls = await distributionCalls('spread64', 64);
    // One call per shard and round was at least 3 x 64 (the range, the edges, a round of probes).
    expect(calls.length).toBeLessThan(64);
    expect(Math.max(...calls)).toBeLessThanOrEqual(SPREAD_COUNTS_PER_CALL);
  });
});
