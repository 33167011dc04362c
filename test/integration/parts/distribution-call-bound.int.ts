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
  async function spreadCalls(): Promise<string[][][]> {
    return (await loggedCalls(own().node))
      .filter(({ call }) => /score_spread(_shards)?$/.test(String(call[1])))
      .map(({ commands }) => commands);
  }

  /**
   * A board of `shards` shards holding ITEMS items of distinct scores (1..ITEMS), and the commands of
   * each call of its distribution of `buckets` buckets.
   */
  async function distributionCommands(name: string, shards: number, buckets = BUCKETS): Promise<string[][][]> {
    const windows = [{ name: 'w', period: '1h', interval: '1m' }];
    await own().ranking.putBoard({ name, windows, shards });
    for (let first = 0; first < ITEMS; first += 100) {
      const entries = Array.from({ length: 100 }, (_, k) => ({ item: `i${first + k}`, amount: 1 + first + k }));
      await own().ranking.incrementBatch(name, entries);
    }
    await logEveryCommand(own().node);
    const answer = await own().standing.distribution({ name, window: 'w', buckets });
    const calls = await spreadCalls();
    await stopLoggingEveryCommand(own().node);
    expect(answer.count).toBe(ITEMS);
    // Scores 1..ITEMS: a quantile of p percent is the score p/100 x ITEMS (nearest rank).
    expect(answer.quantiles).toEqual({ p10: 200, p25: 500, p50: 1000, p75: 1500, p90: 1800, p99: 1980 });
    expect(answer.buckets.map((bucket) => bucket.count)).toEqual(
      Array.from({ length: buckets }, () => ITEMS / buckets),
    );
    return calls;
  }

  /** Each call's number of commands. */
  async function distributionCalls(name: string, shards: number): Promise<number[]> {
    return (await distributionCommands(name, shards)).map((commands) => commands.length);
  }

  /**
   * How many of the calls' commands read scores by score (the due slots read none): a quantile's pick
   * (LIMIT), or a shard's scores read whole for its counts.
   */
  const byScore = (calls: string[][][], limit: boolean) =>
    calls
      .flat()
      .filter((command) => command.includes('BYSCORE') && command.includes('WITHSCORES'))
      .filter((command) => command.includes('LIMIT') === limit).length;

  /** How many of the calls' commands are `name`. */
  const named = (calls: string[][][], name: string) =>
    calls.flat().filter((command) => command[0].toLowerCase() === name).length;

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

  it("reads a quantile's few items in its bucket (one ZRANGE a shard) rather than counting probes", async () => {
    const calls = await distributionCommands('spreadpick', 64);
    // 31 items a shard, fewer than 99 edges: each shard's scores read once for the edges' counts; 20
    // items a bucket, fewer than a round of probes counts (64 x 8): each quantile read by one ZRANGE
    // BYSCORE LIMIT a shard. The only ZCOUNTs left: each shard's listed items, once a round (the range,
    // the edges, the picks); the edges and two rounds of probes were 64 x 99 + 3 776 more.
    expect(named(calls, 'zcount')).toBe(64 * 3);
    expect(byScore(calls, false)).toBe(64);
    expect(byScore(calls, true)).toBe(64 * 6);
    // Calls sized by what a shard weighs: the edges' round by its scores read (about 12 + 31 counts a
    // shard, 6 shards a call) rather than its 99 counts (2 a call): 21 calls, where it was 48 or more.
    expect(calls.length).toBeLessThanOrEqual(24);
    expect(Math.max(...calls.map((commands) => commands.length))).toBeLessThanOrEqual(SPREAD_COUNTS_PER_CALL);
  });

  it('searches a bucket of more items by probes first, then reads the few left', async () => {
    // 16 shards of 125 items, two buckets of 1 000: the edge counted, then a round of 8 probes a quantile
    // counted (more probes than a shard's items would read its scores) leaves each about 111 items, at
    // most 16 x 8: read. The listed items counted in each of the 4 rounds.
    const calls = await distributionCommands('spreadwide', 16, 2);
    expect(named(calls, 'zcount')).toBe(16 * (1 + 6 * 8 + 4));
    expect(byScore(calls, true)).toBe(16 * 6);
    expect(Math.max(...calls.map((commands) => commands.length))).toBeLessThanOrEqual(SPREAD_COUNTS_PER_CALL);
  });
});
