import Redis from 'ioredis';
import { useRankingService } from '../../../harness/ranking';
import { TestRedis, TOPOLOGIES } from '../../../harness/redis';
import { resetCommandStats } from '../../support/slowlog';

/** Two windows of SLOTS one-second slots: a late event in the oldest slot has SLOTS - 1 newer ones. */
const SLOTS = 300;
const WINDOWS = [
  { name: 'a', period: SLOTS, interval: 1 },
  { name: 'b', period: SLOTS - 1, interval: 1 },
];
const START_MS = 1_800_000_000_000;

/** Calls of `command` (run by scripts included) on every master since the last reset. */
async function commandCalls(redis: TestRedis, command: string): Promise<number> {
  const nodes: Redis[] = 'nodes' in redis.client ? redis.client.nodes('master') : [redis.client];
  const stats = await Promise.all(nodes.map((node) => node.info('commandstats')));
  const pattern = new RegExp(`^cmdstat_${command}:calls=(\\d+)`, 'gm');
  return stats.flatMap((text) => [...text.matchAll(pattern)]).reduce((sum, m) => sum + Number(m[1]), 0);
}

/**
 * Issue #45 row 1: a late score on a `last` board asked every newer slot whether it held the item (one
 * HGET each: 8 windows × 1 000 slots made a 1 000-entry batch one FCALL of 8-10 s). It now asks the
 * window's newest-slot hash: the work of a late event does not grow with the slots after it.
 */
describe.each(TOPOLOGIES)('late scores on a last board of 300-slot windows (%s)', (topology) => {
  const setup = useRankingService(topology);
  const { clock } = setup;
  const nowSec = START_MS / 1000;
  const lateAt = nowSec - (SLOTS - 2);

  beforeAll(async () => {
    clock.setMs(START_MS);
    for (const aggregate of ['last', 'max'] as const) {
      await setup.ranking.putBoard({ name: aggregate, windows: WINDOWS, aggregate });
      // Every slot of both windows holds an event of `seed`, oldest first.
      const entries = Array.from({ length: SLOTS }, (_, i) => ({ item: 'seed', score: i, at: nowSec - SLOTS + 1 + i }));
      // In batches of 50: a score on two windows weighs up to 22 units (WRITE_COST_PER_CALL).
      for (let from = 0; from < SLOTS; from += 50)
        await setup.ranking.incrementBatch(aggregate, entries.slice(from, from + 50));
    }
  });

  it('a late score reads a bounded number of slots, whatever the newer slots', async () => {
    await resetCommandStats(setup.redis.client);
    await setup.ranking.score('last', 'fresh', 7, undefined, undefined, lateAt);
    await setup.ranking.score('last', 'seed', 1_000, undefined, undefined, lateAt);
    // Before: about 2 × (SLOTS - 2) HGETs per late score.
    expect(await commandCalls(setup.redis, 'hget')).toBeLessThan(20);
    // Exact: `fresh` is held by no newer slot, `seed` is (its newest event stands).
    expect((await setup.ranking.item('last', 'a', 'fresh')).score).toBe(7);
    expect((await setup.ranking.item('last', 'a', 'seed')).score).toBe(SLOTS - 1);
  });

  it('a batch of late scores costs a bounded number of reads per entry and window', async () => {
    const entries = Array.from({ length: 70 }, (_, i) => ({ item: `late${i}`, score: i, at: lateAt }));
    entries.push({ item: 'seed', score: -5, at: lateAt });
    await resetCommandStats(setup.redis.client);
    await setup.ranking.incrementBatch('last', entries);
    expect(await commandCalls(setup.redis, 'hget')).toBeLessThan(entries.length * WINDOWS.length * 3);
    expect((await setup.ranking.item('last', 'b', 'late42')).score).toBe(42);
    expect((await setup.ranking.item('last', 'b', 'seed')).score).toBe(SLOTS - 1);
  });

  it('a max board stays bounded too (a late event never scans)', async () => {
    await resetCommandStats(setup.redis.client);
    await setup.ranking.incrementBatch(
      'max',
      Array.from({ length: 100 }, (_, i) => ({ item: `late${i}`, score: i, at: lateAt })),
    );
    expect(await commandCalls(setup.redis, 'hget')).toBeLessThan(100 * WINDOWS.length * 3);
  });

  it('an item the newest-slot hash does not know (written before it existed) is found once, then asked', async () => {
    clock.setMs(START_MS);
    await setup.ranking.putBoard({ name: 'old', windows: WINDOWS, aggregate: 'last' });
    await setup.ranking.score('old', 'x', 1, undefined, undefined, nowSec - 100);
    await setup.ranking.score('old', 'x', 2, undefined, undefined, nowSec - 10);
    // As an earlier version left it: no newest-slot hash.
    for (const key of await setup.redis.keys('board:old}:*newest')) await setup.redis.client.del(key);
    await setup.ranking.score('old', 'x', 3, undefined, undefined, nowSec - 50);
    expect((await setup.ranking.item('old', 'a', 'x')).score).toBe(2);
    await setup.ranking.score('old', 'x', 4, undefined, undefined, nowSec - 5);
    expect((await setup.ranking.item('old', 'a', 'x')).score).toBe(4);
    // The older slots leave first, x's score stays; then the slot of its newest event, and x with it.
    clock.setMs(START_MS + (SLOTS - 6) * 1000);
    expect((await setup.ranking.item('old', 'a', 'x')).score).toBe(4);
    clock.advanceSec(1);
    expect((await setup.ranking.item('old', 'a', 'x')).score).toBe(0);
  });
});
