import fc from 'fast-check';
import { FakeClock } from '../../harness/clock';
import { SHARD_CELLS } from '../../harness/redis';
import { GroupedModel, ModelFilters } from '../support/grouped-model';
import { useFiltersGraph } from '../support/ranking-graph';

/** One window of six 20 s slots; its spans are checked against model windows of the span's period. */
const WINDOW = { name: 'w', periodSec: 120, intervalSec: 20 };
const SPANS_SEC = [20, 60, 120];
const MODEL_WINDOWS = [
  WINDOW,
  ...SPANS_SEC.map((spanSec) => ({ name: `s${spanSec}`, periodSec: spanSec, intervalSec: 20 })),
];
const ITEMS = ['a', 'b', 'c', 'd', 'é', 'a b/c'];
const GROUPS = ['x', 'y', 'z'];
const ACTORS = ['ann', 'bob', 'd:e'];

type Step =
  { kind: 'add'; item: string; amount: number; group?: string; actor?: string } | { kind: 'advance'; ms: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant('add' as const),
      item: fc.constantFrom(...ITEMS),
      amount: fc.constantFrom(-1, 1, 1, 2),
      group: fc.option(fc.constantFrom(...GROUPS), { nil: undefined }),
      actor: fc.option(fc.constantFrom(...ACTORS), { nil: undefined }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 50_000 }) }),
  },
);

const ASKS: ModelFilters[] = [
  { items: ['a', 'é'], groups: [] },
  { items: [], groups: ['y'] },
  { perGroup: 1, items: ['b'], groups: ['z'] },
  { minActors: 2, items: [], groups: [] },
  { minActors: 1, perGroup: 1, items: ['a b/c'], groups: ['x'] },
  { minActors: 3, items: [], groups: [] },
];

const add = (item: string, amount: number, actor?: string, group?: string): Step => ({
  kind: 'add',
  item,
  amount,
  actor,
  group,
});
const ADVANCE: Step = { kind: 'advance', ms: 20_000 };
/**
 * Always among the runs: every item over three slots, some tied, every group; `a` with two actors in
 * its first slot and one later, `c` with two in the second slot, so the spans' floors list other rows
 * than the window's.
 */
const EXAMPLE: [number, Step[]] = [
  1_600_000_000_000,
  [
    ...ITEMS.map((item, i) => add(item, 1 + (i % 2), ACTORS[i % 3], GROUPS[i % 3])),
    add('a', 1, 'bob'),
    ADVANCE,
    add('c', 2, 'bob'),
    add('c', 1, 'ann'),
    add('a', 1, 'ann'),
    ADVANCE,
    add('d', 1, undefined, 'x'),
  ],
];

const CASES = SHARD_CELLS;

describe.each(CASES)(
  'POST query with span against a brute-force model (property, %s, %i shard(s))',
  (topology, shards) => {
    const clock = new FakeClock(0);
    const world = useFiltersGraph(topology, clock);
    let board = 0;
    let listedRows = 0;
    /** Pages whose minActors floor lists other rows over the span than over the whole window. */
    let spanFloors = 0;

    it("a span's filtered page lists what the model's window of the span's period lists, with its ranks and its actors", async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 1_600_000_000_000, max: 1_900_000_000_000 }),
          fc.array(step, { minLength: 1, maxLength: 20 }),
          async (startMs, steps) => {
            const name = `fs${board++}`;
            clock.setMs(startMs);
            const windows = [{ name: WINDOW.name, period: WINDOW.periodSec, interval: WINDOW.intervalSec }];
            await world.graph.ranking.putBoard({ name, windows, shards, groups: true, actors: true });
            const model = new GroupedModel(MODEL_WINDOWS, [WINDOW.name]);
            for (const s of steps) {
              await apply(name, model, s);
              for (const spanSec of SPANS_SEC) await compare(name, model, spanSec);
              model.settle(clock.nowMs());
            }
            await world.graph.ranking.deleteBoard(name);
          },
        ),
        {
          numRuns: 12,
          // And an item back to 0 in the window while its span holds it: it keeps no group.
          examples: [EXAMPLE, [1_600_000_000_000, [add('a', -1), ADVANCE, add('a', 1, undefined, 'x')]]],
        },
      );
      expect(listedRows).toBeGreaterThan(50); // not vacuous
      expect(spanFloors).toBeGreaterThan(0);
    });

    async function apply(name: string, model: GroupedModel, s: Step): Promise<void> {
      const nowMs = clock.nowMs();
      if (s.kind === 'advance') return clock.advanceMs(s.ms);
      model.settle(nowMs);
      await world.graph.ranking.increment(
        world.commands.increment({ board: name, item: s.item, amount: s.amount, group: s.group, actor: s.actor }),
      );
      model.increment(nowMs, s.item, s.amount);
      model.acted(nowMs, s.item, s.actor);
      model.name(nowMs, s.item, s.group);
    }

    async function compare(name: string, model: GroupedModel, spanSec: number): Promise<void> {
      const nowMs = clock.nowMs();
      const span = `${spanSec}s`;
      const rows = (page: { items: Array<{ rank: number; item: string; score: number; group?: string }> }) =>
        page.items.map(({ rank, item, score, group }) => ({ rank, item, score, group }));
      const base = { board: name, window: WINDOW.name, span, offset: 0, limit: 20 };
      for (const ask of ASKS) {
        const want = model.page(`s${spanSec}`, nowMs, ask);
        listedRows += want.length;
        // The same floor counted over the whole window: what a read missing the span's slots would list.
        const floored = model.page(`s${spanSec}`, nowMs, ask, WINDOW.name);
        if (JSON.stringify(floored) !== JSON.stringify(want)) spanFloors++;
        const read = await world.filters.read({
          ...base,
          perGroup: ask.perGroup,
          minActors: ask.minActors,
          excludeItems: ask.items,
          excludeGroups: ask.groups,
        });
        expect({ truncated: read.truncated, rows: rows(read) }).toEqual({ truncated: false, rows: want });
        expect(Number(read.to) - Number(read.from)).toBe(spanSec);
        const page = await world.filters.read({
          ...base,
          offset: 1,
          limit: 2,
          perGroup: ask.perGroup,
          minActors: ask.minActors,
          excludeItems: ask.items,
        });
        expect(rows(page)).toEqual(model.page(`s${spanSec}`, nowMs, { ...ask, groups: [] }).slice(1, 3));
      }
    }
  },
);
