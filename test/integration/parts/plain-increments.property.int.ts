import fc from 'fast-check';
import { PreparedBoard } from '../../../src/ranking/core/board';
import { resolveViews } from '../../../src/ranking/options/views/trending-math';
import { RANKING } from '../../../src/ranking/ranking.functions';
import { incrementTwins } from '../../support/increment-twins';
import { useRankingFunctions } from '../../support/ranking-functions';

const S = RANKING.functions;
const T0 = 1_700_000_000_000;
const WINDOWS = [
  { name: 'min', periodSec: 60, intervalSec: 10 },
  { name: 'hour', periodSec: 3600, intervalSec: 600 },
];

/**
 * A coalesced call of plain requests (stride 3) answers its requests through increment.lua's plain
 * path (`increment_plain`, `plain_add`) once the slots of now are indexed (from the first request when
 * an earlier call of the same second indexed them), which skips the general path's checks and hooks on
 * a shard that needs none of them. It must answer and write exactly what the general path does: the
 * same requests, one call each with stride 10 (never plain), on a twin board.
 */
describe('plain increments in one call answer and write what one call each does (real Redis)', () => {
  const setup = useRankingFunctions();
  const { answersOf, moderate, contents } = incrementTwins(setup);
  const hide = (board: PreparedBoard, item: string) => moderate(board, T0, item, 'hidden');

  it('property: answers, scores, ranks, growth and every key match, call after call', async () => {
    const request = fc.record({
      item: fc.constantFrom('a', 'b', 'c', 'd'),
      // Sums that reach 0 (the item leaves) and go negative (no rank).
      amount: fc.integer({ min: -3, max: 4 }).filter((n) => n !== 0),
      // Quotas on (1), off (-1), and spent (0: a new item is refused, so that request is not plain).
      newItems: fc.constantFrom(1, 1, -1, 0),
      // When in its second it arrived: a call's requests share a second, not a millisecond.
      msInSecond: fc.constantFrom(0, 1, 500, 998, 999),
    });
    const scenario = fc.record({
      windows: fc.constantFrom(WINDOWS.slice(0, 1), WINDOWS, WINDOWS.slice(1)),
      // A later call may open new slots of a window, or find the older ones expired.
      calls: fc.array(
        fc.record({
          afterMs: fc.constantFrom(0, 4_000, 11_000, 70_000),
          requests: fc.array(request, { maxLength: 8 }),
        }),
        { minLength: 1, maxLength: 5 },
      ),
    });
    await fc.assert(
      fc.asyncProperty(scenario, async ({ windows, calls }) => {
        const [together, apart] = [await setup.board(windows, T0), await setup.board(windows, T0)];
        let secondMs = T0;
        for (const call of calls) {
          secondMs += call.afterMs;
          if (call.requests.length === 0) continue;
          // In the order they arrived; the call goes at the last one's time, as the coalescer sends it.
          const requests = [...call.requests]
            .sort((a, b) => a.msInSecond - b.msInSecond)
            .map(({ item, amount, newItems, msInSecond }) => ({ item, amount, newItems, atMs: secondMs + msInSecond }));
          const one = await answersOf(together, requests[requests.length - 1].atMs, requests);
          const each: unknown[] = [];
          // A creation time (read by views only: this board has none) makes a call's stride 10, which
          // never takes the plain path: the twin is written by the general path alone.
          for (const r of requests) each.push(...(await answersOf(apart, r.atMs, [{ ...r, createdMs: r.atMs }])));
          expect(one).toEqual(each);
        }
        expect(await contents(together)).toEqual(await contents(apart));
      }),
      { numRuns: 60 },
    );
  });

  it('ranks plain requests on a board hiding an item as the general path does: without the hidden item', async () => {
    const nowMs = T0 + 500;
    const [together, apart] = [await setup.board(WINDOWS, T0), await setup.board(WINDOWS, T0)];
    for (const board of [together, apart]) {
      await hide(board, 'h');
      // The hidden item ahead of them, and the slots of now indexed: the next plain call takes the plain path.
      await answersOf(board, nowMs, [{ item: 'h', amount: 9, newItems: -1, atMs: nowMs }]);
    }
    const requests = [
      { item: 'a', amount: 2, newItems: 1, atMs: nowMs },
      { item: 'b', amount: 1, newItems: 1, atMs: nowMs },
    ];
    const plain = await answersOf(together, nowMs, requests);
    const general: unknown[] = [];
    for (const r of requests) general.push(...(await answersOf(apart, nowMs, [{ ...r, createdMs: nowMs }])));
    expect(plain).toEqual(general);
    const ranks = plain.map((answer) => (answer instanceof Error ? [] : answer.value.standings.map((one) => one.rank)));
    expect(ranks).toEqual([
      [1, 1],
      [2, 2],
    ]);
  });

  it("sends a second's requests as plain on a board without views (their shared allowance once), each with its time on a board with views", async () => {
    const plain = await setup.board(WINDOWS, T0);
    const views = resolveViews([{ name: 'hot', mode: 'hot', window: 'hour', tau: '1h' }], WINDOWS);
    const viewsBoard = new PreparedBoard({ ...plain.config, views }, (shard) => plain.shards[shard].keys);
    const nowMs = T0 + 999;
    const requests = [0, 500, 999].map((ms) => ({ item: `i${ms}`, amount: 1, newItems: 1, atMs: T0 + ms }));
    /** The call's record shape, read by its contract's names, and the allowance an increment_pair call sends once. */
    const shapeOf = (board: PreparedBoard, sent = requests) => {
      const { args } = S.increments.build({ board, shard: board.shards[0], nowMs, budgetFields: 100, requests: sent });
      const header = 4 + 4 * Number(args[3]);
      const names = S.increments.contract?.args ?? [];
      const named = Object.fromEntries(names.map((name, i) => [name, args[header + i]]));
      return named.shape === 'increment_pair' ? [named.shape, named.allowance] : [named.shape];
    };
    expect(shapeOf(plain)).toEqual(['increment_pair', 1]);
    expect(
      shapeOf(
        plain,
        requests.map((r, i) => ({ ...r, newItems: i === 1 ? 0 : 1 })),
      ),
    ).toEqual(['increment_plain']);
    expect(shapeOf(viewsBoard)).toEqual(['increment_full']);
  });
});
