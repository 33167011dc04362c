import fc from 'fast-check';
import { BestAggregate, BestModel } from '../support/best-model';
import { useRankingService } from '../../harness/ranking';
import { SHARD_CELLS } from '../../harness/redis';
import { expectAroundAndLookup } from '../support/ranking-reads';

/** Two windows of unlike intervals, so their slots expire at different times. */
const WINDOWS = [
  { name: 'w1', periodSec: 60, intervalSec: 20 },
  { name: 'w2', periodSec: 90, intervalSec: 30 },
];
const ITEMS = ['a', 'b', 'c', 'd', 'é', 'a b/c'];

type Step = { kind: 'score'; item: string; score: number; backMs: number } | { kind: 'advance'; ms: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('score' as const),
      item: fc.constantFrom(...ITEMS),
      // Few distinct values around 0: equal, zero and negative scores are listed and ranked too.
      score: fc.integer({ min: -4, max: 6 }),
      backMs: fc.oneof({ weight: 4, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.constant(30_000) }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 45_000 }) }),
  },
);

/** Always among the runs: each item scored in turn (negative, zero and positive), listed in both windows. */
const EVERY_ITEM_SCORED: [number, Step[]] = [
  1_600_000_000_000,
  ITEMS.map((item, i): Step => ({ kind: 'score', item, score: i - 2, backMs: 0 })),
];

const CASES = SHARD_CELLS;

describe.each(CASES)('order: asc against a brute-force model (property, %s, %i shard(s))', (topology, shards) => {
  const setup = useRankingService(topology);
  const { clock } = setup;
  let board = 0;
  let listedRows = 0;

  // Sharded: top pages merge the shards lowest score first, an item's rank counts the lower scores on
  // every shard, around merges each shard's neighbours in that order, lookups count the same way.
  it.each<BestAggregate>(['max', 'min', 'last'])(
    '%s: every read lists and ranks the lowest score first, any sign',
    async (aggregate) => {
      listedRows = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 1_600_000_000_000, max: 1_900_000_000_000 }),
          fc.array(step, { minLength: 1, maxLength: 20 }),
          async (startMs, steps) => {
            const name = `o${board++}`;
            clock.setMs(startMs);
            const windows = WINDOWS.map((w) => ({ name: w.name, period: w.periodSec, interval: w.intervalSec }));
            await setup.ranking.putBoard({ name, windows, shards, aggregate, order: 'asc' });
            const model = new BestModel(WINDOWS, aggregate);
            for (const s of steps) {
              await apply(name, model, s);
              for (const w of WINDOWS) await compare(name, model, w.name);
            }
            await setup.ranking.deleteBoard(name);
          },
        ),
        // Each of these mistakes planted failed all 3 tests of the cells it was run in: a tied item's rank
        // counting its ties (score_order_lib's rank_hook, ZCOUNT to its own score: the 1-shard cell, at run
        // 10), a count ahead of a score taking its equals (ahead_hook: both 3-shard cells, run 1), equal
        // scores merged in descending byte order of id (shard-math's compareAscending: both 3-shard cells, run 10).
        { numRuns: 12, examples: [EVERY_ITEM_SCORED] },
      );
      expect(listedRows).toBeGreaterThan(30); // not vacuous (the example alone lists 42 rows)
    },
  );

  async function apply(name: string, model: BestModel, s: Step): Promise<void> {
    const nowMs = clock.nowMs();
    if (s.kind === 'advance') return clock.advanceMs(s.ms);
    const atMs = nowMs - s.backMs;
    if (!model.lands(nowMs, atMs)) return;
    model.record(nowMs, atMs, s.item, s.score);
    const answer = await setup.ranking.score(name, s.item, s.score, undefined, undefined, atMs / 1000);
    // The write's answer ranks the item as the model does after it.
    // One expect for all windows (and below, all items): an expectation costs more to build than a row to compare.
    expect(WINDOWS.map((w) => [w.name, s.item, answer.body.windows[w.name]?.rank ?? null])).toEqual(
      WINDOWS.map((w) => [
        w.name,
        s.item,
        model.listing(w.name, nowMs, true).find((row) => row.item === s.item)?.rank ?? null,
      ]),
    );
  }

  async function compare(name: string, model: BestModel, window: string): Promise<void> {
    const expected = model.listing(window, clock.nowMs(), true);
    listedRows += expected.length;
    const top = await setup.ranking.top(name, window, 0, 20);
    expect(top.items.map(({ rank, item, score }) => ({ rank, item, score }))).toEqual(expected);
    const page = await setup.ranking.top(name, window, 1, 2);
    expect(page.items.map(({ rank, item }) => ({ rank, item }))).toEqual(
      expected.slice(1, 3).map(({ rank, item }) => ({ rank, item })),
    );
    const percentile = (rank: number) =>
      expected.length <= 1 ? 100 : Math.round(((expected.length - rank) / (expected.length - 1)) * 10000) / 100;
    const reads = [];
    for (const item of ITEMS) {
      const read = await setup.ranking.item(name, window, item);
      reads.push({ item, rank: read.rank, score: read.score, percentile: read.percentile });
    }
    expect(reads).toEqual(
      ITEMS.map((item) => {
        const row = expected.find((r) => r.item === item);
        return { item, rank: row?.rank ?? null, score: row?.score ?? 0, percentile: row ? percentile(row.rank) : null };
      }),
    );
    await expectAroundAndLookup(setup, { name, window, ids: [...ITEMS, 'absent'] }, expected);
    // Ranks among some ids: 1 + the listed ones given with a lower score.
    const some = ['a', 'c', 'é', 'absent'];
    const given = expected.filter((r) => some.includes(r.item));
    const among = await setup.lookup.lookup({ name, window, items: some, relative: true, withData: false });
    expect(among.items.map((row) => [row.item, row.rank])).toEqual(
      some.map((id) => {
        const row = given.find((r) => r.item === id);
        return [id, row ? 1 + given.filter((r) => r.score < row.score).length : null];
      }),
    );
  }
});
