import fc from 'fast-check';
import { useRankingService } from '../../harness/ranking';
import { SHARD_CELLS } from '../../harness/redis';
import { expectAroundAndLookup, expectRankOfScores, modelPercentile } from '../support/ranking-reads';

/** A rolling and a calendar window beside the all-time one: they expire while the all-time window keeps everything. */
const ROLLING = { name: 'w1', periodSec: 60, intervalSec: 20 };
const ITEMS = ['a', 'b', 'c', 'é', 'a b/c'];
const DAY_MS = 86_400_000;

type Aggregate = 'sum' | 'max';
type WindowName = 'w1' | 'day' | 'all';
const WINDOW_NAMES: WindowName[] = ['w1', 'day', 'all'];
type Step = { kind: 'event'; item: string; value: number; backMs: number } | { kind: 'advance'; ms: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('event' as const),
      item: fc.constantFrom(...ITEMS),
      value: fc.integer({ min: -3, max: 6 }),
      // Now, inside the rolling window, and far older than it (years: only the all-time window holds it).
      backMs: fc.constantFrom(0, 0, 30_000, 10 * DAY_MS, 5 * 365 * DAY_MS),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('advance' as const),
      ms: fc.oneof(fc.integer({ min: 0, max: 45_000 }), fc.constant(400 * DAY_MS)),
    }),
  },
);

interface Event {
  atMs: number;
  item: string;
  value: number;
}

/**
 * The oracle, as plain as possible: every event is kept. The rolling window's value of an item is
 * computed from the events whose slot is live now; the all-time window's from every event it took.
 */
class AllTimeModel {
  readonly events: Record<WindowName, Event[]> = { w1: [], day: [], all: [] };

  constructor(readonly aggregate: Aggregate) {}

  record(nowMs: number, event: Event): void {
    this.events.all.push(event);
    for (const window of ['w1', 'day'] as const) if (live(window, event.atMs, nowMs)) this.events[window].push(event);
  }

  /** Each item's value over the events the window holds now (a sum of 0 is held by no window). */
  values(window: WindowName, nowMs: number): Map<string, number> {
    const values = new Map<string, number>();
    for (const e of this.events[window]) {
      if (window !== 'all' && !live(window, e.atMs, nowMs)) continue;
      const held = values.get(e.item);
      if (this.aggregate === 'sum') values.set(e.item, (held ?? 0) + e.value);
      else values.set(e.item, held === undefined ? e.value : Math.max(held, e.value));
    }
    return values;
  }

  listing(window: WindowName, nowMs: number): Array<{ rank: number; item: string; score: number }> {
    const rows = [...this.values(window, nowMs)]
      .filter(([, score]) => this.aggregate !== 'sum' || score > 0)
      .sort(([a, sa], [b, sb]) => sb - sa || Buffer.compare(Buffer.from(b), Buffer.from(a)));
    return rows.map(([item, score]) => ({ rank: 1 + rows.filter(([, s]) => s > score).length, item, score }));
  }
}

function slotOf(ms: number): number {
  const sec = Math.floor(ms / 1000);
  return sec - (sec % ROLLING.intervalSec);
}

/** Whether a window holds an event at `atMs` now: w1 while its slot is live, day (UTC) inside today. */
function live(window: 'w1' | 'day', atMs: number, nowMs: number): boolean {
  if (window === 'day') return Math.floor(atMs / DAY_MS) === Math.floor(nowMs / DAY_MS);
  return slotOf(atMs) > slotOf(nowMs) - ROLLING.periodSec;
}

/**
 * Always among the runs: a century passes between two events, so the all-time window's one slot must
 * outlast it (the random runs move at most a few years on: a slot ending in 2033 passed every one).
 */
const KEPT_A_CENTURY: [number, Step[]] = [
  1_900_000_000_000,
  [
    { kind: 'event', item: 'a', value: 3, backMs: 0 },
    { kind: 'advance', ms: 100 * 365 * DAY_MS },
    { kind: 'event', item: 'b', value: 2, backMs: 5 * 365 * DAY_MS },
  ],
];

const CASES = SHARD_CELLS;

describe.each(CASES)('all-time windows against a brute-force model (property, %s, %i shard(s))', (topology, shards) => {
  const setup = useRankingService(topology);
  const { clock } = setup;
  let board = 0;
  let oldRows = 0;

  it.each<Aggregate>(['sum', 'max'])(
    '%s: the all-time window keeps every event (any age), beside a rolling window that expires',
    async (aggregate) => {
      oldRows = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 1_600_000_000_000, max: 1_900_000_000_000 }),
          fc.array(step, { minLength: 1, maxLength: 16 }),
          async (startMs, steps) => {
            const name = `at${board++}`;
            clock.setMs(startMs);
            const windows = [
              { name: ROLLING.name, period: ROLLING.periodSec, interval: ROLLING.intervalSec },
              { name: 'day', calendar: 'day' as const },
              { name: 'all', allTime: true },
            ];
            await setup.ranking.putBoard({ name, windows, shards, aggregate, maxItems: 100 });
            const model = new AllTimeModel(aggregate);
            for (const s of steps) {
              await apply(name, model, s);
              for (const window of WINDOW_NAMES) await compare(name, model, window);
            }
            await setup.ranking.deleteBoard(name);
          },
        ),
        // Always among the runs: an event years back, which only the all-time window lists; a century passing.
        // The all-time slot planted shorter (ALL_TIME_SEC 3e8: it ends in 1979, or 2e9: in 2033) failed all 6
        // tests, at run 1 and at run 2 (the century: without it the 2033 slot passed every run).
        {
          numRuns: 10,
          examples: [
            [1_600_000_000_000, [{ kind: 'event', item: 'a', value: 3, backMs: 5 * 365 * DAY_MS }]],
            KEPT_A_CENTURY,
          ],
        },
      );
      // Not vacuous: the all-time window listed rows the rolling one no longer held (the example's at least).
      expect(oldRows).toBeGreaterThan(0);
    },
  );

  async function apply(name: string, model: AllTimeModel, s: Step): Promise<void> {
    if (s.kind === 'advance') return clock.advanceMs(s.ms);
    const nowMs = clock.nowMs();
    const atMs = nowMs - s.backMs;
    if (aggregateOf(model) === 'sum' && s.value === 0) return;
    model.record(nowMs, { atMs, item: s.item, value: s.value });
    const answer =
      aggregateOf(model) === 'sum'
        ? await setup.ranking.increment(name, s.item, s.value, undefined, undefined, atMs / 1000)
        : await setup.ranking.score(name, s.item, s.value, undefined, undefined, atMs / 1000);
    // The write ranks the item in each window as the model does after it (the rolling one took it or not).
    for (const window of WINDOW_NAMES) {
      const rank = model.listing(window, nowMs).find((row) => row.item === s.item)?.rank ?? null;
      expect([window, answer.body.windows[window]?.rank ?? null]).toEqual([window, rank]);
    }
  }

  function aggregateOf(model: AllTimeModel): Aggregate {
    return model.aggregate;
  }

  async function compare(name: string, model: AllTimeModel, window: WindowName): Promise<void> {
    const nowMs = clock.nowMs();
    const expected = model.listing(window, nowMs);
    if (window === 'all') {
      const rolling = new Set(model.listing('w1', nowMs).map((row) => row.item));
      oldRows += expected.filter((row) => !rolling.has(row.item)).length;
    }
    const top = await setup.ranking.top(name, window, 0, 20);
    expect(top.items.map(({ rank, item, score }) => ({ rank, item, score }))).toEqual(expected);
    expect(window === 'all' ? [top.from, top.to] : [typeof top.from, typeof top.to]).toEqual(
      window === 'all' ? [null, null] : ['number', 'number'],
    );
    const values = model.values(window, nowMs);
    for (const item of ITEMS) {
      const read = await setup.ranking.item(name, window, item);
      const row = expected.find((r) => r.item === item);
      expect({ item, rank: read.rank, score: read.score, percentile: read.percentile }).toEqual({
        item,
        rank: row?.rank ?? null,
        score: values.get(item) ?? 0,
        percentile: modelPercentile(expected, item),
      });
    }
    await expectAroundAndLookup(setup, { name, window, ids: [...ITEMS, 'absent'] }, expected);
    // A record of a listed row's score (tied with its holders) and of a score just below it.
    const probe = expected[Math.floor(expected.length / 2)]?.score ?? 1;
    const listed = (score: number) => aggregateOf(model) !== 'sum' || score > 0;
    await expectRankOfScores(setup.standing, { name, window, scores: [probe, probe - 0.5], listed }, expected);
  }
});
