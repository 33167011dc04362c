import fc from 'fast-check';
import { PreparedBoard } from '../../../src/ranking/core/board';
import { RANKING } from '../../../src/ranking/ranking.functions';
import type { CoalescedIncrement } from '../../../src/ranking/writes/writes.functions';
import { useRankingFunctions } from '../../support/ranking-functions';

const S = RANKING.functions;
const T0 = 1_700_000_000_000;
/** A minute of 10 s slots and an hour of 10 min slots: an event 2 minutes old is held by the hour only. */
const WINDOWS = [
  { name: 'min', periodSec: 60, intervalSec: 10 },
  { name: 'hour', periodSec: 3600, intervalSec: 600 },
];

/**
 * An increment allowed one new item on a shard without an item cap (what the service sends with quotas
 * on) learns whether its item is new from the add instead of a ZSCORE per window before it: it must
 * charge exactly what a shard with a cap (counted before the add, as every other write counts) charges.
 */
describe('an increment allowed one new item counts it from the add (real Redis)', () => {
  const setup = useRankingFunctions();
  const board = (maxItems?: number) => setup.board(WINDOWS, T0, maxItems);

  const increments = (on: PreparedBoard, nowMs: number, requests: CoalescedIncrement[]) =>
    setup.functions.call(S.increments, { board: on, shard: on.shards[0], nowMs, budgetFields: 100, requests });

  /** Each request's created count and scores, or its refusal's message. */
  const outcomes = (answers: Awaited<ReturnType<typeof increments>>) =>
    answers.map((a) => (a instanceof Error ? a.message : [a.created.items, a.value.standings.map((s) => s.score)]));

  it('counts a new item once, not an existing one, a negative sum as held, and one whose sum went back to 0 as new', async () => {
    const plain = await board();
    const at = (item: string, amount: number, atMs = T0) => ({ item, amount, newItems: 1, atMs });
    const answers = await increments(plain, T0, [
      at('a', 2),
      at('a', 1),
      at('b', -1),
      at('b', 3),
      at('c', 1),
      at('c', -1),
      at('c', 4),
    ]);
    expect(outcomes(answers)).toEqual([
      [1, [2, 2]],
      [0, [3, 3]],
      [1, [-1, -1]],
      [0, [2, 2]],
      [1, [1, 1]],
      [0, [0, 0]],
      [1, [4, 4]],
    ]);
    // Two minutes old: only the hour holds it; an item the minute window holds alone is not new.
    const old = T0 - 120_000;
    expect(outcomes(await increments(plain, T0 + 1000, [at('d', 1, old), at('d', 1), at('a', 1, old)]))).toEqual([
      [1, [0, 1]],
      [0, [1, 2]],
      [0, [3, 4]],
    ]);
  });

  it('asks no ZSCORE for it', async () => {
    const plain = await board();
    await increments(plain, T0, [{ item: 'x', amount: 1, newItems: 1 }]);
    await setup.redis.client.config('RESETSTAT');
    await increments(plain, T0, [
      { item: 'x', amount: 1, newItems: 1 },
      { item: 'y', amount: 1, newItems: 1 },
    ]);
    expect(await setup.redis.client.info('commandstats')).not.toContain('cmdstat_zscore');
  });

  it('property: charges what a shard with an item cap charges, request by request', async () => {
    const request = fc.record({
      item: fc.constantFrom('a', 'b', 'c'),
      amount: fc.integer({ min: -3, max: 3 }).filter((n) => n !== 0),
      // Now, held by both windows, by the hour only, by neither (refused).
      ageMs: fc.constantFrom(0, 30_000, 120_000, 4_000_000),
      newItems: fc.constantFrom(1, 2),
      key: fc.option(fc.constantFrom('k1', 'k2'), { nil: undefined }),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(request, { minLength: 1, maxLength: 4 }), { maxLength: 6 }), async (calls) => {
        const [plain, capped] = [await board(), await board(1_000_000)];
        for (const [i, call] of calls.entries()) {
          const nowMs = T0 + i * 40_000;
          const requests = call.map((r) => ({
            item: r.item,
            amount: r.amount,
            newItems: r.newItems,
            atMs: nowMs - r.ageMs,
            idem:
              r.key === undefined
                ? undefined
                : { key: r.key, fingerprint: `${r.item}${r.amount}`, retentionMs: 60_000 },
          }));
          const [mine, theirs] = [await increments(plain, nowMs, requests), await increments(capped, nowMs, requests)];
          expect(outcomes(mine)).toEqual(outcomes(theirs));
        }
      }),
      { numRuns: 40 },
    );
  });
});
