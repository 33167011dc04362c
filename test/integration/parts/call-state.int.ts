import type Redis from 'ioredis';
import { RANKING } from '../../../src/ranking/ranking.functions';
import { HEADER_WINDOW_FIELDS } from '../../../src/redis/function-args';
import { fcallArgs } from '../../../src/redis/redis-functions';
import { incrementTwins } from '../../support/increment-twins';
import { useRankingFunctions } from '../../support/ranking-functions';

const T0 = 1_700_000_000_000;
const WINDOWS = [{ name: 'min', periodSec: 60, intervalSec: 10 }];

/**
 * A function library keeps its Lua state from call to call (call_lib's CONFIG, order_lib's call
 * caches): what one call leaves there must not reach the next call, on the same board or another one.
 */
describe('the ranking library state one call leaves (real Redis)', () => {
  const setup = useRankingFunctions();
  const { answersOf, moderate } = incrementTwins(setup);
  const S = RANKING.functions;
  const client = () => setup.redis.client as Redis;

  it("keeps each board's moderation config its own when two boards of the same options are moderated in turn", async () => {
    const [first, second] = [await setup.board(WINDOWS, T0), await setup.board(WINDOWS, T0)];
    // Both read the same `options` value till moderated: the first one's write of modeff (built)
    // must not reach the second one's call.
    await moderate(first, T0, 'x', 'hidden');
    await moderate(second, T0, 'y', 'hidden');
    for (const board of [first, second]) {
      const cfg = await client().hgetall(board.shards[0].keys.cfg());
      expect([cfg.modeff, cfg.modheld]).toEqual(['1', '1']);
    }
  });

  it('ranks a request among the scores earlier requests of its call gave a hidden item, plain, general or watched', async () => {
    const nowMs = T0 + 500;
    const requests = [
      { item: 'a', amount: 1, newItems: 1, atMs: nowMs },
      { item: 'h', amount: 3, newItems: 1, atMs: nowMs },
      { item: 'a', amount: 1, newItems: 1, atMs: nowMs },
    ];
    const [plain, general, other] = [
      await setup.board(WINDOWS, T0),
      await setup.board(WINDOWS, T0),
      await setup.board(WINDOWS, T0),
    ];
    // A groups board's windows are watched: its adds tell the options (window_lib's results_changed).
    const watched = await setup.board(WINDOWS, T0, undefined, { groups: true });
    for (const board of [plain, general, watched]) {
      await moderate(board, T0, 'h', 'hidden');
      // The slots of now indexed: the plain call takes the plain path from its first request.
      await answersOf(board, nowMs, [{ item: 'z', amount: -1, newItems: 1, atMs: nowMs }]);
      // Another board's call between them, as a shared Redis runs them.
      await answersOf(other, nowMs, [{ item: 'a', amount: 5, newItems: 1, atMs: nowMs }]);
    }
    const full = requests.map((r) => ({ ...r, createdMs: nowMs }));
    const answers = [
      await answersOf(plain, nowMs, requests),
      await answersOf(general, nowMs, full),
      await answersOf(watched, nowMs, full),
    ];
    for (const answer of answers) {
      const standings = answer.map((one) => (one instanceof Error ? one : one.value.standings[0]));
      // h above a, hidden: a ranks first, as alone in its call.
      expect(standings.map((one) => (one instanceof Error ? one : [one.score, one.rank]))).toEqual([
        [1, 1],
        [3, null],
        [2, 1],
      ]);
    }
  });

  it("ranks a request without an item its call's earlier request put in a hidden group, as a call each does", async () => {
    const nowMs = T0 + 500;
    const [together, apart] = [
      await setup.board(WINDOWS, T0, undefined, { groups: true }),
      await setup.board(WINDOWS, T0, undefined, { groups: true }),
    ];
    for (const board of [together, apart]) {
      const call = { board, shard: board.shards[0], nowMs, budgetFields: 1000, group: 'g', state: 'hidden' as const };
      const set = S.moderationGroupSet;
      await client().fcall(set.redisName, ...fcallArgs(set, set.build({ ...call, apply: true })));
    }
    const requests = [
      { item: 'a', amount: 1, newItems: 1, atMs: nowMs, group: '' },
      { item: 'x', amount: 5, newItems: 1, atMs: nowMs, group: 'g' },
      { item: 'a', amount: 1, newItems: 1, atMs: nowMs, group: '' },
    ];
    const one = await answersOf(together, nowMs, requests);
    const each: unknown[] = [];
    for (const r of requests) each.push(...(await answersOf(apart, nowMs, [r])));
    expect(one).toEqual(each);
    const standings = one.map((answer) => (answer instanceof Error ? answer : answer.value.standings[0]));
    // x ranks as of its own addition, before it joined g; then it is hidden, and a ranks first.
    expect(standings.map((s) => (s instanceof Error ? s : [s.score, s.rank]))).toEqual([
      [1, 1],
      [5, 1],
      [2, 1],
    ]);
  });

  it('names a bad window rule of a hot call, and binds the next call from its own arguments', async () => {
    const nowMs = T0 + 500;
    const board = await setup.board(WINDOWS, T0);
    const requests = [{ item: 'a', amount: 1, newItems: 1, atMs: nowMs }];
    await answersOf(board, nowMs, requests);
    const call = { board, shard: board.shards[0], nowMs, budgetFields: 1000, requests };
    const [keyCount, ...rest] = fcallArgs(S.increments, S.increments.build(call));
    // The window's interval, by its name: after the keys, the header's version, now, budget and W.
    const interval = keyCount + 4 + Object.keys(HEADER_WINDOW_FIELDS).indexOf('interval_sec');
    rest[interval] = 'x';
    await expect(client().fcall(S.increments.redisName, keyCount, ...rest)).rejects.toThrow(
      /TB_BAD_ARGS window interval \(args\[\d+\]\) is not a number: x/,
    );
    const again = await answersOf(board, nowMs, requests);
    expect(again.map((one) => (one instanceof Error ? one : one.value.standings[0]))).toMatchObject([
      { score: 2, rank: 1 },
    ]);
  });
});
