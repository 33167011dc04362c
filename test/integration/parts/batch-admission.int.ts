import fc from 'fast-check';
import type { BatchEntry } from '../../../src/ranking/core/ranking.types';
import { PreparedBoard } from '../../../src/ranking/core/board';
import { RANKING } from '../../../src/ranking/ranking.functions';
import { useRankingFunctions } from '../../support/ranking-functions';

const S = RANKING.functions;
const T0 = 1_700_000_000_000;
/** A minute of 10 s slots and an hour of 10 min slots: an event 2 minutes old is held by the hour only. */
const WINDOWS = [
  { name: 'min', periodSec: 60, intervalSec: 10 },
  { name: 'hour', periodSec: 3600, intervalSec: 600 },
];

/**
 * A batch of plain entries (item and amount, at now) whose allowance covers all its items, on a shard
 * without an item cap (what the service sends with quotas on), learns which items were new from its
 * adds instead of a ZSCORE per item and window before them: it must charge exactly what a shard with a
 * cap (counted before the adds) charges, and hold the same scores.
 */
describe('a batch allowed all its items counts the new ones from its adds (real Redis)', () => {
  const setup = useRankingFunctions();
  const board = (maxItems?: number) => setup.board(WINDOWS, T0, maxItems);

  /** The batch's created count and applied entries, or its refusal's message. */
  async function batch(on: PreparedBoard, nowMs: number, entries: BatchEntry[], newItems: number) {
    const call = { board: on, shard: on.shards[0], nowMs, budgetFields: 100, entries, newItems };
    return setup.functions.call(S.incrementBatch, call).then(
      (answer) => [answer.created.items, answer.value.applied],
      (error: Error) => error.message,
    );
  }

  /** Every window's results, as `item=score` rows. */
  async function held(on: PreparedBoard): Promise<string[][]> {
    return Promise.all(
      WINDOWS.map(async ({ name }) => {
        const flat = await setup.redis.client.zrange(on.shards[0].keys.top(name), 0, -1, 'WITHSCORES');
        return Array.from({ length: flat.length / 2 }, (_, i) => `${flat[2 * i]}=${flat[2 * i + 1]}`);
      }),
    );
  }

  it('counts a repeated new item once, a negative sum as held, an item the hour alone holds as held', async () => {
    const plain = await board();
    const entry = (item: string, amount: number, atMs?: number) => ({ item, amount, atMs });
    // Two minutes old (sextuples): only the hour holds 'h'.
    expect(await batch(plain, T0, [entry('h', 1, T0 - 120_000)], 10)).toEqual([1, 1]);
    const entries = [entry('a', 2), entry('a', 1), entry('b', -1), entry('c', 1), entry('c', -1), entry('h', 4)];
    expect(await batch(plain, T0, entries, 10)).toEqual([3, 6]);
    expect(await held(plain)).toEqual([
      ['b=-1', 'a=3', 'h=4'],
      ['b=-1', 'a=3', 'h=5'],
    ]);
    // 'c' went back to 0 (removed): new again; 'a' is held.
    expect(await batch(plain, T0 + 1000, [entry('c', 2), entry('a', 1)], 2)).toEqual([1, 2]);
  });

  it('asks no ZSCORE for them', async () => {
    const plain = await board();
    await batch(plain, T0, [{ item: 'x', amount: 1 }], 1);
    await setup.redis.client.config('RESETSTAT');
    expect(
      await batch(
        plain,
        T0,
        [1, 2, 3].map((i) => ({ item: `x${i}`, amount: 1 })),
        3,
      ),
    ).toEqual([3, 3]);
    expect(await setup.redis.client.info('commandstats')).not.toContain('cmdstat_zscore');
  });

  it('property: charges what a shard with an item cap charges and holds the same scores, batch by batch', async () => {
    const entry = fc.record({
      item: fc.constantFrom('a', 'b', 'c', 'd'),
      amount: fc.integer({ min: -3, max: 3 }).filter((n) => n !== 0),
      // Now (plain entries, pairs), or held by the hour only (sextuples, counted before the adds).
      ageMs: fc.constantFrom(0, 0, 0, 120_000),
    });
    const call = fc.record({
      entries: fc.array(entry, { minLength: 1, maxLength: 6 }),
      newItems: fc.integer({ min: 0, max: 7 }),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(call, { minLength: 1, maxLength: 6 }), async (calls) => {
        const [plain, capped] = [await board(), await board(1_000_000)];
        for (const [i, { entries, newItems }] of calls.entries()) {
          const nowMs = T0 + i * 40_000;
          const sent = entries.map((e) => ({
            item: e.item,
            amount: e.amount,
            atMs: e.ageMs ? nowMs - e.ageMs : undefined,
          }));
          expect(await batch(plain, nowMs, sent, newItems)).toEqual(await batch(capped, nowMs, sent, newItems));
          expect(await held(plain)).toEqual(await held(capped));
        }
      }),
      { numRuns: 40 },
    );
  });
});
