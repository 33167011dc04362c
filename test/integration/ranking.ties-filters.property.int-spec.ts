import fc from 'fast-check';
import { FakeClock } from '../../harness/clock';
import { SHARD_CELLS } from '../../harness/redis';
import { shardOf } from '../../src/ranking/core/shard-math';
import { filteredListing, GroupedModel, ModelFilters } from '../support/grouped-model';
import { useFiltersGraph } from '../support/ranking-graph';
import { TiesModel } from '../support/ties-model';

/**
 * Filtered reads of `ties: first` boards (GET top?perGroup=, POST …/query, minActors) against a brute-force model
 * (property, 1 and 3 shards, one Redis and a Cluster): the board's strict listing is checked against
 * the model (scores, and every pair in an order the model allows: a higher score, or the same reached
 * no later), and each filtered page is that listing without the excluded items and groups, at most
 * perGroup rows of a group (with minActors, only the items of that many distinct actors in the window),
 * each row with its strict board rank (its place in the listing).
 */
const WINDOWS = [
  { name: 'w1', periodSec: 60, intervalSec: 20 },
  { name: 'w2', periodSec: 90, intervalSec: 30 },
];
const ITEMS = ['a', 'b', 'c', 'd', 'é', 'a b/c'];
const GROUPS = ['x', 'y', 'z'];

type Entry = { item: string; amount: number; group?: string; actor?: string };
type Step = { kind: 'add'; entry: Entry } | { kind: 'batch'; entries: Entry[] } | { kind: 'advance'; ms: number };

// Positive amounts only: a score then moves on every change, so "when it reached its score" is one moment.
const entry: fc.Arbitrary<Entry> = fc.record({
  item: fc.constantFrom(...ITEMS),
  amount: fc.constantFrom(1, 1, 2),
  group: fc.option(fc.constantFrom(...GROUPS), { nil: undefined }),
  actor: fc.option(fc.constantFrom('ann', 'bob', 'cy'), { nil: undefined }),
});
const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 6, arbitrary: entry.map((e) => ({ kind: 'add' as const, entry: e })) },
  {
    weight: 2,
    arbitrary: fc.array(entry, { minLength: 1, maxLength: 4 }).map((entries) => ({ kind: 'batch' as const, entries })),
  },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 45_000 }) }),
  },
);

/**
 * Every item at one score, one ms apart (so the order across shards is known too), two of a group:
 * a shared rank, or a merge by id, lists or ranks them otherwise.
 */
const ONE_SCORE_IN_TURN: [number, Step[]] = [
  1_600_000_000_000,
  ITEMS.flatMap((item, i): Step[] => [
    { kind: 'add', entry: { item, amount: 1, group: GROUPS[i % 3] } },
    { kind: 'advance', ms: 1 },
  ]),
];

const CASES = SHARD_CELLS;

type Row = { rank: number; item: string; score: number; group?: string };

/** Each window's distinct actors of an item: the actors of its events in live slots (positive amounts only). */
class ActorsModel {
  private readonly events: Array<{ item: string; actor: string; atSec: number }> = [];

  add(nowMs: number, item: string, actor: string | undefined): void {
    if (actor !== undefined) this.events.push({ item, actor, atSec: Math.floor(nowMs / 1000) });
  }

  count(window: string, nowMs: number, item: string): number {
    const w = WINDOWS.find((candidate) => candidate.name === window)!;
    const slot = (sec: number) => Math.floor(sec / w.intervalSec) * w.intervalSec;
    const live = (sec: number) => slot(sec) > slot(Math.floor(nowMs / 1000)) - w.periodSec;
    return new Set(this.events.filter((e) => e.item === item && live(e.atSec)).map((e) => e.actor)).size;
  }
}

type Models = { order: TiesModel; groups: GroupedModel; actors: ActorsModel };

describe.each(CASES)(
  'ties: first filtered reads against a brute-force model (property, %s, %i shard(s))',
  (topology, shards) => {
    const clock = new FakeClock(0);
    const world = useFiltersGraph(topology, clock);
    let board = 0;
    let strictTies = 0;
    let thinned = 0;

    it('perGroup, exclusions and minActors list the strict listing without the filtered rows, ranks strict', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 1_600_000_000_000, max: 1_900_000_000_000 }),
          fc.array(step, { minLength: 1, maxLength: 20 }),
          async (startMs, steps) => {
            const name = `tf${board++}`;
            clock.setMs(startMs);
            const windows = WINDOWS.map((w) => ({ name: w.name, period: w.periodSec, interval: w.intervalSec }));
            await world.graph.ranking.putBoard({ name, windows, shards, groups: true, actors: true, ties: 'first' });
            const order = new TiesModel(WINDOWS, shards > 1 ? (id) => shardOf(id, shards) : undefined);
            const groups = new GroupedModel(WINDOWS);
            const actors = new ActorsModel();
            for (const s of steps) {
              await apply(name, { order, groups, actors }, s);
              for (const w of WINDOWS) await compare(name, { order, groups, actors }, w.name);
              groups.settle(clock.nowMs());
            }
            await world.graph.ranking.deleteBoard(name);
          },
        ),
        { numRuns: 15, examples: [ONE_SCORE_IN_TURN] },
      );
      // Not vacuous: filtered pages held rows of one score at distinct ranks (the example alone: many),
      // and minActors left some rows out while listing others.
      expect(strictTies).toBeGreaterThan(10);
      expect(thinned).toBeGreaterThan(0);
    });

    // Beside a tiebreak the strict order is the pair order's (its marks end with the tie mark and id).
    it('with a tiebreak: equal pairs rank in the order they were reached, a better pair first', async () => {
      const name = `tft${board++}`;
      clock.setMs(1_700_000_000_000);
      const windows = [{ name: 'w', period: 60, interval: 20 }];
      const config = { name, windows, shards, aggregate: 'max' as const, tiebreak: { order: 'desc' as const } };
      await world.graph.ranking.putBoard({ ...config, groups: true, ties: 'first' });
      const entries = [...ITEMS.map((item) => ({ item, tiebreak: 0 })), { item: 'late', tiebreak: 1 }];
      for (const [i, e] of entries.entries()) {
        const entry = { ...e, score: 7, group: GROUPS[i % 3] };
        await world.graph.ranking.incrementBatch(world.commands.batch({ board: name, entries: [entry] }));
        clock.advanceMs(1);
      }
      const listing = ['late', ...ITEMS].map((item, i) => ({ rank: i + 1, item, score: 7 }));
      const groupOf = (item: string) => GROUPS[entries.findIndex((e) => e.item === item) % 3];
      expect((await world.graph.ranking.top(name, 'w', 0, 20)).items.map(pick)).toEqual(
        filteredListing(listing, groupOf, {}),
      );
      const read = await world.graph.ranking.topFiltered(name, { window: 'w', limit: 20, perGroup: 1 }, () => {});
      expect(read.items.map(pick)).toEqual(filteredListing(listing, groupOf, { perGroup: 1 }));
      const ask = { items: ['late'], groups: ['y'] };
      const page = await world.filters.read({
        board: name,
        window: 'w',
        offset: 1,
        limit: 3,
        excludeItems: ask.items,
        excludeGroups: ask.groups,
      });
      expect(page.items.map(pick)).toEqual(filteredListing(listing, groupOf, ask).slice(1, 4));
      await world.graph.ranking.deleteBoard(name);
    });

    async function apply(name: string, { order, groups, actors }: Models, s: Step): Promise<void> {
      const nowMs = clock.nowMs();
      if (s.kind === 'advance') {
        clock.advanceMs(s.ms);
        return order.expire(clock.nowMs());
      }
      groups.settle(nowMs);
      const entries = s.kind === 'add' ? [s.entry] : s.entries;
      if (s.kind === 'add') await world.graph.ranking.increment(world.commands.increment({ board: name, ...s.entry }));
      else await world.graph.ranking.incrementBatch(world.commands.batch({ board: name, entries }));
      order.expire(nowMs);
      for (const e of entries) order.increment(nowMs, e.item, e.amount);
      for (const e of entries) groups.increment(nowMs, e.item, e.amount);
      for (const e of entries) groups.name(nowMs, e.item, e.group);
      for (const e of entries) actors.add(nowMs, e.item, e.actor);
    }

    /** The board's listing, checked against the model: its scores, and an order the model allows. */
    async function strictListing(name: string, order: TiesModel, groups: GroupedModel, window: string) {
      const rows = (await world.graph.ranking.top(name, window, 0, 20)).items.map(pick);
      const expected = order.rows(window);
      expect(rows.map((row) => [row.rank, row.score])).toEqual(expected.map((row, i) => [i + 1, row.score]));
      expect(rows.map((row) => row.item).sort()).toEqual(expected.map((row) => row.item).sort());
      for (const [i, a] of rows.entries())
        for (const b of rows.slice(i + 1))
          expect([a.item, b.item, order.mayPrecede(window, a.item, b.item)]).toEqual([a.item, b.item, true]);
      expect(rows).toEqual(filteredListing(rows, (item) => groups.groups.get(item), {}));
      return rows;
    }

    async function compare(name: string, { order, groups, actors }: Models, window: string): Promise<void> {
      const listing = await strictListing(name, order, groups, window);
      const want = (ask: ModelFilters) => filteredListing(listing, (item) => groups.groups.get(item), ask);
      for (const perGroup of [1, 2]) {
        const read = await world.graph.ranking.topFiltered(name, { window, limit: 20, perGroup }, () => undefined);
        expect(read.items.map(pick)).toEqual(want({ perGroup }));
        const part = await world.graph.ranking.topFiltered(
          name,
          { window, offset: 1, limit: 2, perGroup },
          () => undefined,
        );
        expect(part.items.map(pick)).toEqual(want({ perGroup }).slice(1, 3));
      }
      const ask = { perGroup: 2, items: ['b', 'é'], groups: ['y'] };
      const read = await world.filters.read({
        board: name,
        window,
        offset: 0,
        limit: 20,
        perGroup: ask.perGroup,
        excludeItems: ask.items,
        excludeGroups: ask.groups,
      });
      const rows = read.items.map(pick);
      expect({ truncated: read.truncated, rows }).toEqual({ truncated: false, rows: want(ask) });
      strictTies += rows.filter((row, i) => i > 0 && row.score === rows[i - 1].score).length;
      const acted = await world.filters.read({ board: name, window, offset: 0, limit: 20, minActors: 2 });
      const many = listing.filter((row) => actors.count(window, clock.nowMs(), row.item) >= 2);
      expect(acted.items.map(pick)).toEqual(filteredListing(many, (item) => groups.groups.get(item), {}));
      if (many.length > 0 && many.length < listing.length) thinned++;
    }
  },
);

function pick({ rank, item, score, group }: Row): Row {
  return { rank, item, score, group };
}
