import fc from 'fast-check';
import { FakeClock } from '../../harness/clock';
import { SHARD_CELLS } from '../../harness/redis';
import { filteredListing, GroupedModel, ModelFilters } from '../support/grouped-model';
import { useFiltersGraph } from '../support/ranking-graph';
import { TrendingModel, TrendView } from '../support/trending-model';

/**
 * Filtered reads of trending views (GET top?window=<view>&perGroup=, POST …/query with exclude) against
 * a brute-force model (property, 1 and 3 shards, one Redis and a Cluster): each view's listing is
 * checked against the trending model (its items, each score within rounding), and each filtered page
 * is that listing without the excluded items and groups, at most perGroup rows of a group (the groups
 * model's), each row with its view rank and group.
 */
const WINDOWS = [
  { name: 'w1', periodSec: 60, intervalSec: 20 },
  { name: 'w2', periodSec: 90, intervalSec: 30 },
];
const VIEWS: TrendView[] = [
  { name: 'fade', mode: 'decay', window: 'w1', halfLifeSec: 7 },
  { name: 'slowfade', mode: 'decay', window: 'w2', halfLifeSec: 45 },
];
const VIEW_INPUTS = [
  { name: 'fade', mode: 'decay', window: 'w1', halfLife: 7 },
  { name: 'slowfade', mode: 'decay', window: 'w2', halfLife: 45 },
];
const ITEMS = ['a', 'b', 'c', 'd', 'é', 'a b/c'];
const GROUPS = ['x', 'y', 'z'];

type Entry = { item: string; amount: number; group?: string };
type Step = { kind: 'batch'; entries: Entry[] } | { kind: 'advance'; ms: number };

// Positive amounts only, as the trending model takes them.
const entry: fc.Arbitrary<Entry> = fc.record({
  item: fc.constantFrom(...ITEMS),
  amount: fc.constantFrom(1, 1, 2),
  group: fc.option(fc.constantFrom(...GROUPS), { nil: undefined }),
});
const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.array(entry, { minLength: 1, maxLength: 4 }).map((entries) => ({ kind: 'batch' as const, entries })),
  },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 45_000 }) }),
  },
);

/** Every item at one sum in one slot (equal decayed scores, one competition rank), two of a group. */
const ONE_SCORE: [number, Step[]] = [
  1_600_000_000_000,
  [{ kind: 'batch', entries: ITEMS.map((item, i) => ({ item, amount: 1, group: GROUPS[i % 3] })) }],
];

const CASES = SHARD_CELLS;

type Row = { rank: number; item: string; score: number; group?: string };

describe.each(CASES)(
  'filtered reads of views against a brute-force model (property, %s, %i shard(s))',
  (topology, shards) => {
    const clock = new FakeClock(0);
    const world = useFiltersGraph(topology, clock);
    let board = 0;
    let filteredOut = 0;

    it('perGroup and exclusions list the view without the filtered rows, view ranks kept', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 1_600_000_000_000, max: 1_900_000_000_000 }),
          fc.array(step, { minLength: 1, maxLength: 12 }),
          async (startMs, steps) => {
            const name = `vf${board++}`;
            clock.setMs(startMs);
            const windows = WINDOWS.map((w) => ({ name: w.name, period: w.periodSec, interval: w.intervalSec }));
            await world.graph.ranking.putBoard({ name, windows, shards, groups: true, views: VIEW_INPUTS });
            const trends = new TrendingModel(WINDOWS, VIEWS);
            const groups = new GroupedModel(WINDOWS);
            for (const s of steps) {
              await apply(name, trends, groups, s);
              for (const v of VIEWS) await compare(name, trends, groups, v.name);
              groups.settle(clock.nowMs());
            }
            await world.graph.ranking.deleteBoard(name);
          },
        ),
        { numRuns: 12, examples: [ONE_SCORE] },
      );
      // Not vacuous: filters left rows of the views out.
      expect(filteredOut).toBeGreaterThan(10);
    });

    async function apply(name: string, trends: TrendingModel, groups: GroupedModel, s: Step): Promise<void> {
      const nowMs = clock.nowMs();
      if (s.kind === 'advance') return clock.advanceMs(s.ms);
      groups.settle(nowMs);
      await world.graph.ranking.incrementBatch(world.commands.batch({ board: name, entries: s.entries }));
      for (const e of s.entries) trends.add(nowMs, e.item, e.amount);
      for (const e of s.entries) groups.increment(nowMs, e.item, e.amount);
      for (const e of s.entries) groups.name(nowMs, e.item, e.group);
    }

    /** The view's listing, checked against the model: its items, each score within rounding. */
    async function viewListing(name: string, trends: TrendingModel, view: string): Promise<Row[]> {
      const rows = (await world.graph.ranking.top(name, view, 0, 20)).items.map(pick);
      const wanted = new Map(trends.listing(view, clock.nowMs()).map((row) => [row.item, row.score]));
      expect(rows.map((row) => row.item).sort()).toEqual([...wanted.keys()].sort());
      for (const row of rows) expect(row.score).toBeCloseTo(wanted.get(row.item)!, 9);
      return rows.map(({ rank, item, score }) => ({ rank, item, score }));
    }

    async function compare(name: string, trends: TrendingModel, groups: GroupedModel, view: string): Promise<void> {
      const listing = await viewListing(name, trends, view);
      const want = (ask: ModelFilters) => filteredListing(listing, (item) => groups.groups.get(item), ask);
      for (const perGroup of [1, 2]) {
        const read = await world.graph.ranking.topFiltered(
          name,
          { window: view, limit: 20, perGroup },
          () => undefined,
        );
        expect(read.items.map(pick)).toEqual(want({ perGroup }));
        const part = await world.graph.ranking.topFiltered(
          name,
          { window: view, offset: 1, limit: 2, perGroup },
          () => undefined,
        );
        expect(part.items.map(pick)).toEqual(want({ perGroup }).slice(1, 3));
      }
      const ask = { perGroup: 2, items: ['b', 'é'], groups: ['y'] };
      const read = await world.filters.read({
        board: name,
        window: view,
        offset: 0,
        limit: 20,
        perGroup: ask.perGroup,
        excludeItems: ask.items,
        excludeGroups: ask.groups,
      });
      const rows = read.items.map(pick);
      expect({ truncated: read.truncated, rows }).toEqual({ truncated: false, rows: want(ask) });
      filteredOut += listing.length - rows.length;
    }
  },
);

function pick({ rank, item, score, group }: Row): Row {
  return { rank, item, score, group };
}
