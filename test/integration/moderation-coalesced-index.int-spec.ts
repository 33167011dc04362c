import type { Redis } from 'ioredis';
import { RANKING } from '../../src/ranking/ranking.functions';
import type { PreparedBoard } from '../../src/ranking/core/board';
import type { CoalescedIncrement } from '../../src/ranking/writes/writes.functions';
import { applyInCalls, type CoalescedAnswer, NotApplied } from '../../src/ranking/writes/write-records';
import { useRankingFunctions } from '../support/ranking-functions';
import { loggedCalls, logEveryCommand, stopLoggingEveryCommand } from '../support/slowlog';

const S = RANKING.functions;
const T0 = 1_700_000_000_000;
/** The moderation maxima's windows (8), the shortest of 3 minutes, so its first slot expires within the spec. */
const WINDOWS = Array.from({ length: 8 }, (_, w) => ({ name: `w${w}`, periodSec: 180 * (w + 1), intervalSec: 60 }));
const ITEMS = 120;
/** Every fourth item hidden: 30, past moderation's floor for counting them inside Redis (16). */
const hidden = (n: number) => n % 4 === 0;
/** Mid-table items: many rows, hidden ones among them, on both sides. */
const MID = [41, 43, 45, 47];
/** The most of them a coalesced call applies at once (increment.lua's WORK_BUDGET: 3 requests of 8 windows). */
const MID_A_CALL = 3;
/**
 * The most commands a coalesced call of MID_A_CALL MID increments runs once its windows' indexes are built, each
 * counted in them: each request's add, near-end checks and count in 8 windows, and the call's reads (149 measured).
 */
const MOST_COMMANDS_A_CALL = 155;
/** The most windows' indexes a write's call builds (moderation_count_lib's INDEXES_PER_CALL; all 8 in one call before). */
const MOST_INTERSECTIONS_A_CALL = 2;

/**
 * A coalesced call of mid-table increments on a moderated board counts the hidden items ahead of each in every
 * window's kept index of their scores (moderation_count_lib, issue #45: a call of 4 cost 17-18 M Redis
 * instructions when each call intersected every window's results with the hidden items again), kept in step by
 * every change of the results, expiry included: each answers what it answers where every call intersects afresh.
 * Counted from the command log, never timed.
 */
describe('moderation: coalesced increments count in kept indexes (single)', () => {
  const setup = useRankingFunctions('single');
  const node = () => setup.redis.client as Redis;
  const request = (item: string, amount: number, atMs: number): CoalescedIncrement => ({
    item,
    amount,
    newItems: 1,
    atMs,
  });
  const send = (board: PreparedBoard, nowMs: number, requests: CoalescedIncrement[]) =>
    setup.functions.call(S.increments, { board, shard: board.shards[0], nowMs, budgetFields: 1000, requests });

  async function seeded(): Promise<PreparedBoard> {
    const board = await setup.board(WINDOWS, T0);
    const nowMs = T0 + 500;
    await send(
      board,
      nowMs,
      Array.from({ length: ITEMS }, (_, n) => request(`i${n}`, 2 * (ITEMS - n), nowMs)),
    );
    for (let n = 0; n < ITEMS; n++) {
      if (!hidden(n)) continue;
      const state = { item: `i${n}`, state: 'hidden' as const, most: 100 };
      await setup.functions.call(S.moderationSet, {
        board,
        shard: board.shards[0],
        nowMs,
        budgetFields: 1000,
        ...state,
      });
    }
    return board;
  }

  /** Every window's index of `board` and the shard's list of them: gone, so the next call intersects afresh. */
  async function dropIndexes(board: PreparedBoard): Promise<void> {
    const registry = board.keys.cfg().replace(/cfg$/, 'exidx');
    await node().unlink(registry, ...WINDOWS.map((w) => board.keys.top(w.name).replace(/top$/, 'exheld')));
  }

  const standings = (answers: CoalescedAnswer[]): unknown[] =>
    answers.map((one) =>
      one instanceof Error || one instanceof NotApplied
        ? one
        : one.value.standings.map((s: { score: number; rank: number | null }) => [s.score, s.rank]),
    );

  it('runs no intersection and at most MOST_COMMANDS_A_CALL commands in a call of MID_A_CALL once the indexes are built', async () => {
    const board = await seeded();
    const nowMs = T0 + 1_000;
    // The first mid-table write builds each window's index.
    await send(board, nowMs, [request('i39', 1, nowMs)]);
    await logEveryCommand(node());
    const answers = await send(
      board,
      nowMs,
      MID.slice(0, MID_A_CALL).map((n) => request(`i${n}`, 1, nowMs)),
    );
    const [call] = (await loggedCalls(node())).filter(({ call: sent }) => /_increment$/.test(String(sent[1])));
    await stopLoggingEveryCommand(node());
    expect(answers.filter((one) => one instanceof NotApplied)).toEqual([]);
    expect(call.commands.filter(([command]) => command.toLowerCase() === 'zinterstore')).toEqual([]);
    expect(call.commands.length).toBeLessThanOrEqual(MOST_COMMANDS_A_CALL);
  });

  it('builds the missing indexes a few a call before the write applies, ranking among the items shown', async () => {
    const board = await seeded();
    const nowMs = T0 + 1_000;
    await logEveryCommand(node());
    const got = await send(board, nowMs, [request('i39', 1, nowMs)]);
    const calls = (await loggedCalls(node())).filter(({ call: sent }) => /_increment$/.test(String(sent[1])));
    await stopLoggingEveryCommand(node());
    const intersections = calls.map(
      ({ commands }) => commands.filter(([command]) => command.toLowerCase() === 'zinterstore').length,
    );
    // Each window's index built once, at most INDEXES_PER_CALL in a call, the write applied in the last.
    expect(intersections.reduce((sum, one) => sum + one, 0)).toBe(WINDOWS.length);
    expect(Math.max(...intersections)).toBeLessThanOrEqual(MOST_INTERSECTIONS_A_CALL);
    expect(calls.length).toBe(Math.ceil(WINDOWS.length / MOST_INTERSECTIONS_A_CALL));
    // i39 at 2 * 81 + 1, behind i0..i38, 10 of them hidden (i0, i4, ..., i36): 30th in every window.
    expect(standings(got)).toEqual([WINDOWS.map(() => [163, 30])]);
  });

  it('answers as calls intersecting afresh do, through hidden items written, expired and hidden anew', async () => {
    const [kept, afresh] = [await seeded(), await seeded()];
    // Every item again a minute on (ITEMS - n), so the shortest window still ranks them all once its first slot expires.
    const againMs = T0 + 60_000;
    const again = Array.from({ length: ITEMS }, (_, n) => request(`i${n}`, ITEMS - n, againMs));
    for (const board of [kept, afresh]) await applyInCalls(again, (sent) => send(board, againMs, sent));
    // Minute by minute: mid-table increments and a hidden item passing them (i56, i60), an item hidden at minute 2
    // (every index dropped), then the indexes built anew kept as the shortest window's first slot expires at minute 3
    // (the hidden items' seeded scores leave it: a mid-table item passes hidden items it did not before).
    for (let minute = 1; minute <= 4; minute++) {
      const nowMs = T0 + minute * 60_000 + 1_000;
      const requests = [
        ...MID.map((n) => request(`i${n + minute}`, minute, nowMs)),
        request(`i${52 + 4 * minute}`, 40, nowMs),
      ];
      if (minute === 2) {
        const state = { item: 'i45', state: 'hidden' as const, most: 100 };
        for (const board of [kept, afresh])
          await setup.functions.call(S.moderationSet, {
            board,
            shard: board.shards[0],
            nowMs,
            budgetFields: 1000,
            ...state,
          });
      }
      const got = await applyInCalls(requests, (sent) => send(kept, nowMs, sent));
      const expected = await applyInCalls(requests, async (sent) => {
        await dropIndexes(afresh);
        return send(afresh, nowMs, sent);
      });
      expect({ minute, answers: standings(got) }).toEqual({ minute, answers: standings(expected) });
    }
  });
});
