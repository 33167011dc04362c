import type Redis from 'ioredis';
import type { CoalescedIncrement } from '../../src/ranking/writes/writes.functions';
import { incrementTwins } from '../support/increment-twins';
import { useRankingFunctions } from '../support/ranking-functions';
import { commandCalls } from '../support/slowlog';

const T0 = 1_700_000_000_000;
const WINDOWS = [
  { name: 'min', periodSec: 60, intervalSec: 10 },
  { name: 'hour', periodSec: 3600, intervalSec: 60 },
];
const ITEMS = 120;
/** Every fourth item hidden: 30, past moderation's floor for counting them inside Redis (16). */
const hidden = (n: number) => n % 4 === 0;

/**
 * A coalesced call of increments on a board of many hidden items (issue #45): each request's rank counts
 * the hidden items ahead of it from their scores intersected once per window and call (moderation_lib's
 * held_scores), the hidden items written by earlier requests of the call brought up to date, not a
 * ZINTERSTORE per request and window (16 mid-table increments of a board at the moderation maxima: one
 * call of 154-156 M instructions, 120 M of them in 128 intersections). Each request answers what it
 * answers alone in a call of its own, hidden items passing, joining and leaving around it.
 */
describe('moderation: the ranks of a coalesced call among many hidden items (real Redis)', () => {
  const setup = useRankingFunctions();
  const { answersOf, moderate } = incrementTwins(setup);
  const client = () => setup.redis.client as Redis;
  const nowMs = T0 + 500;
  const request = (item: string, amount: number): CoalescedIncrement => ({ item, amount, newItems: 1, atMs: nowMs });

  /** A board of items i0.. scored ITEMS - n (2 apart, so a request lands between two), every fourth hidden. */
  async function seeded() {
    const board = await setup.board(WINDOWS, T0);
    await answersOf(
      board,
      nowMs,
      Array.from({ length: ITEMS }, (_, n) => request(`i${n}`, 2 * (ITEMS - n))),
    );
    for (let n = 0; n < ITEMS; n++) if (hidden(n)) await moderate(board, nowMs, `i${n}`, 'hidden');
    return board;
  }

  const standings = (answers: Awaited<ReturnType<typeof answersOf>>) =>
    answers.map((one) => (one instanceof Error ? one : one.value.standings.map((s) => [s.score, s.rank])));

  it('answers each request the ranks of a call of its own, intersecting the hidden items once a window', async () => {
    const [together, apart] = [await seeded(), await seeded()];
    const requests = [
      request('i61', 1),
      // A hidden item passes i61 and i58: later ranks count it at its new score.
      request('i60', 9),
      request('i58', 3),
      request('i61', 2),
      // A hidden item leaves the results (its sum back to 0), another one joins them mid-table.
      request('i56', -2 * (ITEMS - 56)),
      request('h-new', 2 * (ITEMS - 59) + 1),
      request('i62', 1),
      request('i57', 5),
    ];
    await moderate(together, nowMs, 'h-new', 'hidden');
    await moderate(apart, nowMs, 'h-new', 'hidden');
    const before = await commandCalls(client(), 'zinterstore');
    const answered = standings(await answersOf(together, nowMs, requests));
    const intersections = (await commandCalls(client(), 'zinterstore')) - before;
    const alone = [];
    for (const one of requests) alone.push(...standings(await answersOf(apart, nowMs, [one])));
    expect(answered).toEqual(alone);
    expect(intersections).toBeLessThanOrEqual(WINDOWS.length);
  });
});
