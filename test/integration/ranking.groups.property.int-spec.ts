import fc from 'fast-check';
import { FakeClock } from '../../harness/clock';
import { SHARD_CELLS } from '../../harness/redis';
import { GroupedModel } from '../support/grouped-model';
import { useFiltersGraph } from '../support/ranking-graph';

/** Two windows of unlike intervals, so their slots expire at different times. */
const WINDOWS = [
  { name: 'w1', periodSec: 60, intervalSec: 20 },
  { name: 'w2', periodSec: 90, intervalSec: 30 },
];
const ITEMS = ['a', 'b', 'c', 'é', 'a b/c'];
const GROUPS = ['x', 'y', 'z'];

type Step =
  | { kind: 'add'; item: string; amount: number; group?: string }
  | { kind: 'batch'; entries: Array<{ item: string; amount: number; group?: string }> }
  | { kind: 'advance'; ms: number };

const entry = fc.record({
  item: fc.constantFrom(...ITEMS),
  // Few values, some negative: ties, and items taken to exactly 0 (they leave, their group with them).
  amount: fc.constantFrom(-1, -1, 1, 2),
  group: fc.option(fc.constantFrom(...GROUPS), { nil: undefined }),
});
const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 6, arbitrary: entry.map((e) => ({ kind: 'add' as const, ...e })) },
  {
    weight: 2,
    arbitrary: fc.array(entry, { minLength: 1, maxLength: 4 }).map((entries) => ({ kind: 'batch' as const, entries })),
  },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 45_000 }) }),
  },
);

const CASES = SHARD_CELLS;

describe.each(CASES)('groups against a brute-force model (property, %s, %i shard(s))', (topology, shards) => {
  const clock = new FakeClock(0);
  const world = useFiltersGraph(topology, clock);
  let board = 0;
  let groupedRows = 0;

  it('rows carry the latest group; perGroup and exclusions list what the model lists, with board ranks', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1_600_000_000_000, max: 1_900_000_000_000 }),
        fc.array(step, { minLength: 1, maxLength: 24 }),
        async (startMs, steps) => {
          const name = `gp${board++}`;
          clock.setMs(startMs);
          const windows = WINDOWS.map((w) => ({ name: w.name, period: w.periodSec, interval: w.intervalSec }));
          await world.graph.ranking.putBoard({ name, windows, shards, groups: true });
          const model = new GroupedModel(WINDOWS);
          for (const s of steps) {
            await apply(name, model, s);
            for (const w of WINDOWS) await compare(name, model, w.name);
            model.settle(clock.nowMs());
          }
          await world.graph.ranking.deleteBoard(name);
        },
      ),
      {
        numRuns: 20,
        // An item taken to exactly 0 leaves with its group, and comes back without one.
        examples: [
          [
            1_600_000_000_000,
            [
              { kind: 'add', item: 'a', amount: 2, group: 'x' },
              { kind: 'add', item: 'a', amount: -2 },
              { kind: 'add', item: 'a', amount: 1 },
            ],
          ],
          // Five grouped items, some tied, listed after each add in both windows: 30 grouped rows.
          [
            1_600_000_000_000,
            ITEMS.map((item, i) => ({ kind: 'add' as const, item, amount: 1 + (i % 2), group: GROUPS[i % 3] })),
          ],
        ],
      },
    );
    expect(groupedRows).toBeGreaterThan(20); // not vacuous (the second example alone lists 30)
  });

  async function apply(name: string, model: GroupedModel, s: Step): Promise<void> {
    const nowMs = clock.nowMs();
    if (s.kind === 'advance') return clock.advanceMs(s.ms);
    model.settle(nowMs);
    if (s.kind === 'add') {
      await world.graph.ranking.increment(
        world.commands.increment({ board: name, item: s.item, amount: s.amount, group: s.group }),
      );
      model.increment(nowMs, s.item, s.amount);
      model.name(nowMs, s.item, s.group);
      return;
    }
    await world.graph.ranking.incrementBatch(world.commands.batch({ board: name, entries: s.entries }));
    for (const e of s.entries) model.increment(nowMs, e.item, e.amount);
    for (const e of s.entries) model.name(nowMs, e.item, e.group);
  }

  async function compare(name: string, model: GroupedModel, window: string): Promise<void> {
    const nowMs = clock.nowMs();
    const rows = (page: { items: Array<{ rank: number; item: string; score: number; group?: string }> }) =>
      page.items.map(({ rank, item, score, group }) => ({ rank, item, score, group }));
    const all = model.page(window, nowMs, {});
    groupedRows += all.filter((row) => row.group !== undefined).length;
    expect(rows(await world.graph.ranking.top(name, window, 0, 20))).toEqual(all);
    for (const perGroup of [1, 2]) {
      const want = model.page(window, nowMs, { perGroup });
      const read = await world.graph.ranking.topFiltered(name, { window, limit: 20, perGroup }, () => undefined);
      expect(rows(read)).toEqual(want);
      const page = await world.graph.ranking.topFiltered(
        name,
        { window, offset: 1, limit: 2, perGroup },
        () => undefined,
      );
      expect(rows(page)).toEqual(want.slice(1, 3));
    }
    const ask = { perGroup: 1, items: ['a', 'é'], groups: ['y'] };
    const read = await world.filters.read({
      board: name,
      window,
      offset: 0,
      limit: 20,
      perGroup: ask.perGroup,
      excludeItems: ask.items,
      excludeGroups: ask.groups,
    });
    expect({ truncated: read.truncated, rows: rows(read) }).toEqual({
      truncated: false,
      rows: model.page(window, nowMs, ask),
    });
  }
});
