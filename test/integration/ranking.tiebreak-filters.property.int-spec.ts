import fc from 'fast-check';
import { FakeClock } from '../../harness/clock';
import { SHARD_CELLS } from '../../harness/redis';
import type { BestAggregate } from '../support/best-model';
import { TiebreakModel } from '../support/tiebreak-model';
import { useFiltersGraph } from '../support/ranking-graph';

/**
 * Filtered reads of `tiebreak` boards (GET top?perGroup=, POST …/query, the stream with perGroup)
 * against a brute-force model (property, 1 and 3 shards, one Redis and a Cluster): after random
 * (score, tiebreak) records of grouped items and clock moves, a filtered page is the model's pair
 * listing without the excluded items and groups, at most perGroup rows of a group, each row with its
 * board rank on the pair and its tiebreak.
 */
const WINDOWS = [
  { name: 'w1', periodSec: 60, intervalSec: 20 },
  { name: 'w2', periodSec: 90, intervalSec: 30 },
];
/** Each item's group, for good (none for the last two). */
const GROUP_OF: Record<string, string | undefined> = {
  a: 'x',
  b: 'x',
  c: 'x',
  d: 'y',
  e: 'y',
  é: undefined,
  'a b/c': undefined,
};
const ITEMS = Object.keys(GROUP_OF);

type Record_ = { item: string; score: number; tiebreak: number };
type Step = { kind: 'score'; entries: Record_[] } | { kind: 'advance'; ms: number };

const record: fc.Arbitrary<Record_> = fc.record({
  item: fc.constantFrom(...ITEMS),
  score: fc.integer({ min: -1, max: 1 }),
  tiebreak: fc.integer({ min: -2, max: 2 }),
});
const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.array(record, { minLength: 1, maxLength: 3 }).map((entries) => ({ kind: 'score' as const, entries })),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 45_000 }) }),
  },
);

/** Equal scores split only by their tiebreaks, in one group: a score-only merge or rank gets them wrong. */
const ONE_SCORE_MANY_TIEBREAKS: [number, Step[]] = [
  1_600_000_000_000,
  [{ kind: 'score', entries: ITEMS.map((item, i) => ({ item, score: 1, tiebreak: ((i * 3) % 5) - 2 })) }],
];

const CASES = SHARD_CELLS;
const SHAPES: Array<[BestAggregate, 'asc' | 'desc', 'asc' | 'desc']> = [
  ['max', 'desc', 'desc'],
  ['min', 'asc', 'asc'],
  ['last', 'asc', 'desc'],
];

type Row = { rank: number; item: string; score: number; tiebreak?: number };

describe.each(CASES)(
  'tiebreak filtered reads against a brute-force model (property, %s, %i shard(s))',
  (topology, shards) => {
    const clock = new FakeClock(0);
    const world = useFiltersGraph(topology, clock);
    let board = 0;
    let splitTies = 0;

    it.each(SHAPES)('%s, tiebreak %s, order %s: filtered pages rank the pairs', async (aggregate, tb, order) => {
      splitTies = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 1_600_000_000_000, max: 1_900_000_000_000 }),
          fc.array(step, { minLength: 1, maxLength: 10 }),
          async (startMs, steps) => {
            const name = `tbf${board++}`;
            clock.setMs(startMs);
            const windows = WINDOWS.map((w) => ({ name: w.name, period: w.periodSec, interval: w.intervalSec }));
            await world.graph.ranking.putBoard({
              name,
              windows,
              shards,
              aggregate,
              order,
              groups: true,
              tiebreak: { order: tb },
            });
            const model = new TiebreakModel(WINDOWS, aggregate, tb, order);
            for (const s of steps) {
              if (s.kind === 'advance') clock.advanceMs(s.ms);
              else {
                const entries = s.entries.map((e) => ({
                  ...e,
                  ...(GROUP_OF[e.item] ? { group: GROUP_OF[e.item] } : {}),
                }));
                await world.graph.ranking.incrementBatch(world.commands.batch({ board: name, entries }));
                for (const e of s.entries) model.record(clock.nowMs(), clock.nowMs(), e.item, e.score, e.tiebreak);
              }
              for (const w of WINDOWS) await compare(name, model, w.name);
            }
            await world.graph.ranking.deleteBoard(name);
          },
        ),
        { numRuns: 12, examples: [ONE_SCORE_MANY_TIEBREAKS] },
      );
      // Not vacuous: filtered pages held rows of one score told apart by their tiebreaks.
      expect(splitTies).toBeGreaterThan(0);
    });

    /** The model's filtered page: exclusions, then at most perGroup rows of a group in board order. */
    function page(
      model: TiebreakModel,
      window: string,
      ask: { perGroup?: number; items?: string[]; groups?: string[] },
    ) {
      const counts = new Map<string, number>();
      return model
        .listing(window, clock.nowMs())
        .filter((row) => {
          const group = GROUP_OF[row.item];
          if (ask.items?.includes(row.item) || (group && ask.groups?.includes(group))) return false;
          if (ask.perGroup === undefined || group === undefined) return true;
          const taken = counts.get(group) ?? 0;
          counts.set(group, taken + 1);
          return taken < ask.perGroup;
        })
        .map(({ rank, item, score, tiebreak }) => ({ rank, item, score, tiebreak }));
    }

    async function compare(name: string, model: TiebreakModel, window: string): Promise<void> {
      const rows = (read: { items: Row[] }) =>
        read.items.map(({ rank, item, score, tiebreak }) => ({ rank, item, score, tiebreak }));
      for (const perGroup of [1, 2]) {
        const want = page(model, window, { perGroup });
        const read = await world.graph.ranking.topFiltered(name, { window, limit: 20, perGroup }, () => undefined);
        expect(rows(read)).toEqual(want);
        const part = await world.graph.ranking.topFiltered(
          name,
          { window, offset: 1, limit: 2, perGroup },
          () => undefined,
        );
        expect(rows(part)).toEqual(want.slice(1, 3));
        if (want.some((row, i) => i > 0 && row.score === want[i - 1].score && row.rank !== want[i - 1].rank))
          splitTies++;
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
      expect({ truncated: read.truncated, rows: rows(read) }).toEqual({
        truncated: false,
        rows: page(model, window, ask),
      });
    }
  },
);
