import { RANKING } from '../../src/ranking/ranking.functions';
import type { PreparedBoard } from '../../src/ranking/core/board';
import type { CoalescedIncrement } from '../../src/ranking/writes/writes.functions';
import { applyInCalls, type CoalescedAnswer, NotApplied } from '../../src/ranking/writes/write-records';
import { useRankingFunctions } from '../support/ranking-functions';

const S = RANKING.functions;
const T0 = 1_700_000_000_000;
/** The moderation maxima's windows (8): each request's rank counts the hidden items ahead in each. */
const WINDOWS = Array.from({ length: 8 }, (_, w) => ({ name: `w${w}`, periodSec: 3600 * (w + 1), intervalSec: 60 }));
const ITEMS = 120;
/** Every fourth item hidden: 30, past moderation's floor for counting them inside Redis (16). */
const hidden = (n: number) => n % 4 === 0;

/**
 * A coalesced call on a moderated board is bounded by its work inside Redis (issue #45): past
 * increment.lua's WORK_BUDGET (3 mid-table requests of 8 windows in the windows' indexes of the hidden items'
 * scores) it leaves the requests after it to the
 * next call, which the service sends (applyInCalls). Each request is applied once and answers what it
 * answers in a call of its own, its key's replay included.
 */
describe.each(['single', 'cluster'] as const)(
  'moderation: a coalesced call past its work is split (%s)',
  (topology) => {
    const setup = useRankingFunctions(topology);
    const nowMs = T0 + 500;
    const request = (item: string, amount: number): CoalescedIncrement => ({ item, amount, newItems: 1, atMs: nowMs });

    const send = (board: PreparedBoard, requests: CoalescedIncrement[]) =>
      setup.functions.call(S.increments, { board, shard: board.shards[0], nowMs, budgetFields: 1000, requests });

    async function seeded() {
      const board = await setup.board(WINDOWS, T0);
      await send(
        board,
        Array.from({ length: ITEMS }, (_, n) => request(`i${n}`, 2 * (ITEMS - n))),
      );
      for (let n = 0; n < ITEMS; n++) {
        if (!hidden(n)) continue;
        const call = {
          board,
          shard: board.shards[0],
          nowMs,
          budgetFields: 1000,
          item: `i${n}`,
          state: 'hidden' as const,
          most: 100,
        };
        await setup.functions.call(S.moderationSet, call);
      }
      return board;
    }

    const standings = (answers: CoalescedAnswer[]): unknown[] =>
      answers.map((one) =>
        one instanceof Error
          ? one
          : [one.replayed, one.value.standings.map((s: { score: number; rank: number | null }) => [s.score, s.rank])],
      );

    it('applies the first requests within the budget, the rest in the next calls, each answered as alone', async () => {
      const [together, apart] = [await seeded(), await seeded()];
      const idem = { key: 'k-9', fingerprint: 'f-9', retentionMs: 60_000 };
      // 16 mid-table requests, one keyed, one hidden item passing others.
      const requests = Array.from({ length: 16 }, (_, r) => request(`i${41 + 2 * r}`, 1 + (r % 3)));
      requests[5] = request('i60', 9);
      requests[9] = { ...request('i59', 2), idem };
      const calls: number[] = [];
      const answered = await applyInCalls(requests, async (sent) => {
        const got = await send(together, sent);
        calls.push(got.filter((one) => !(one instanceof NotApplied)).length);
        return got;
      });
      const alone: CoalescedAnswer[] = [];
      for (const one of requests) alone.push(...(await send(apart, [one])));
      expect(standings(answered)).toEqual(standings(alone));
      // The first call's windows' indexes of the hidden items' scores are built before it applies anything, a few a
      // Redis call (the service sends it again: moderation_count_lib's INDEXES_PER_CALL); then 3 ranked requests a
      // call in those indexes (4 would reach 11-12 M instructions with a step of Lua's collector), the hidden i60
      // (the second call's) counting no hidden items ahead of it.
      expect(calls).toEqual([3, 4, 3, 3, 3]);
      // The keyed request was applied once: its repeat replays the same standings.
      const [replay] = await send(together, [requests[9]]);
      expect(standings([replay])).toEqual([[true, (standings([answered[9]])[0] as unknown[])[1]]]);
    });
  },
);
