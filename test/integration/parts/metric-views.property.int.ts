import fc from 'fast-check';
import { useRankingService } from '../../../harness/ranking';
import { SHARD_CELLS } from '../../../harness/redis';
import { RankingKeys } from '../../../src/ranking/core/ranking.keys';
import { shardOf } from '../../../src/ranking/core/shard-math';
import { controversy, wilsonLowerBound } from '../../../src/ranking/options/metrics/metric-formulas';

/** Two windows of unlike intervals, so their slots expire at different times. */
const WINDOWS = [
  { name: 'w1', period: 60, interval: 20 },
  { name: 'w2', period: 90, interval: 30 },
];
const METRICS = ['up', 'down', 'meh'];
const ITEMS = ['a', 'b', 'c', 'é', 'a b/c'];

/** A view of two metrics: the first metric with another, and two others (keys "<window>~@<metric>" both). */
interface PairView {
  name: string;
  mode: 'wilson' | 'controversial';
  window: string;
  positive: string;
  negative: string;
}
const VIEWS: PairView[] = [
  { name: 'approval', mode: 'wilson', window: 'w1', positive: 'up', negative: 'down' },
  { name: 'argued', mode: 'controversial', window: 'w2', positive: 'meh', negative: 'down' },
  { name: 'disliked', mode: 'wilson', window: 'w2', positive: 'down', negative: 'up' },
];
const FORMULA = { wilson: wilsonLowerBound, controversial: controversy };

type Step =
  | { kind: 'increment'; item: string; amount: number; metric: string; backMs: number }
  | { kind: 'batch'; metric: string; entries: Array<{ item: string; amount: number }> }
  | { kind: 'advance'; ms: number };

const amount = fc.oneof({ weight: 4, arbitrary: fc.integer({ min: 1, max: 5 }) }, fc.constant(-2));
const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('increment' as const),
      item: fc.constantFrom(...ITEMS),
      amount,
      metric: fc.constantFrom(...METRICS),
      backMs: fc.oneof({ weight: 4, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.constant(30_000) }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('batch' as const),
      metric: fc.constantFrom(...METRICS),
      entries: fc.array(fc.record({ item: fc.constantFrom(...ITEMS), amount }), { minLength: 1, maxLength: 6 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 45_000 }) }),
  },
);

/**
 * Every metric of every item counted (distinct shares), then a move that expires w1's slots but not
 * w2's, then one more vote: every view lists several items before and after.
 */
const EXAMPLE: Step[] = [
  ...METRICS.map((metric, m) => ({
    kind: 'batch' as const,
    metric,
    entries: ITEMS.map((item, i) => ({ item, amount: ((i + 2) * (m + 3)) % 7 })).filter((e) => e.amount > 0),
  })),
  { kind: 'advance', ms: 45_000 },
  { kind: 'increment', item: 'b', amount: 3, metric: 'down', backMs: 0 },
  { kind: 'advance', ms: 30_000 },
  { kind: 'increment', item: 'c', amount: 2, metric: 'up', backMs: 0 },
];

/** Events as the model keeps them: every one, counted by brute force over the live slots at each read. */
interface Event {
  item: string;
  metric: string;
  amount: number;
  atSec: number;
}

function liveCount(events: Event[], item: string, metric: string, window: string, nowMs: number): number {
  const { period, interval } = WINDOWS.find((w) => w.name === window)!;
  const liveFrom = Math.floor(Math.floor(nowMs / 1000) / interval) * interval - period + interval;
  return events
    .filter((e) => e.item === item && e.metric === metric && Math.floor(e.atSec / interval) * interval >= liveFrom)
    .reduce((sum, e) => sum + e.amount, 0);
}

/** The model's rows of a view: every item whose formula is above 0, with its two counts. */
function modelRows(events: Event[], view: PairView, nowMs: number) {
  return ITEMS.flatMap((item) => {
    const positive = liveCount(events, item, view.positive, view.window, nowMs);
    const negative = liveCount(events, item, view.negative, view.window, nowMs);
    const score = FORMULA[view.mode](positive, negative);
    return score > 0 ? [{ item, score, metrics: { [view.positive]: positive, [view.negative]: negative } }] : [];
  });
}

const close = (a: number, b: number) => Math.abs(a - b) <= 1e-12 * Math.max(Math.abs(a), Math.abs(b));

type Row = { rank: number; item: string; score: number; metrics?: Record<string, number> };

/** Same items, scores within rounding of pow, the counts exactly, the model's order, competition ranks. */
function expectSameListing(rows: Row[], wanted: ReturnType<typeof modelRows>, label: string): void {
  expect([label, rows.map((row) => row.item).sort()]).toEqual([label, wanted.map((row) => row.item).sort()]);
  const byItem = new Map(wanted.map((row) => [row.item, row]));
  rows.forEach((row, i) => {
    const model = byItem.get(row.item)!;
    if (!close(row.score, model.score)) expect([label, row.item, row.score]).toEqual([label, row.item, model.score]);
    expect([label, row.item, row.metrics]).toEqual([label, row.item, model.metrics]);
    expect([label, row.item, row.rank]).toEqual([label, row.item, 1 + rows.filter((r) => r.score > row.score).length]);
    const next = rows[i + 1];
    if (next === undefined) return;
    const nextScore = byItem.get(next.item)!.score;
    if (nextScore > model.score && !close(nextScore, model.score))
      expect([label, 'order', row.item, next.item]).toEqual([label, 'order', next.item, row.item]);
  });
}

const CASES = SHARD_CELLS;

/**
 * wilson and controversial views of a board with metrics, against a model that keeps every event:
 * after every write and clock move each view's full listing is the formula over each item's live
 * counts. Expiry chunks of 2 fields leave a metric's expired slots undrained while the other metric
 * is written (each write drains only its own metric's windows).
 */
describe.each(CASES)(
  'wilson and controversial views against a model (property, %s, %i shard(s))',
  (topology, shards) => {
    const setup = useRankingService(topology, { EXPIRE_CHUNK: '2' });
    const { clock } = setup;
    let board = 0;
    let listedRows = 0;

    it('every view lists the formula over the live counts of its two metrics, after every step', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 1_600_000_000_000, max: 1_900_000_000_000 }),
          fc.array(step, { minLength: 1, maxLength: 14 }),
          async (startMs, steps) => {
            const name = `mv${board++}`;
            clock.setMs(startMs);
            await setup.ranking.putBoard({ name, windows: WINDOWS, shards, metrics: METRICS, views: VIEWS });
            const events: Event[] = [];
            for (const [index, s] of steps.entries()) {
              await apply(name, s, events);
              await expectExactAtWrite(name, s, events);
              // No read right after a move: the next write then meets the expired slots no read drained.
              if (s.kind === 'advance' && index < steps.length - 1) continue;
              for (const view of VIEWS) await compare(name, view, events, ITEMS[index % ITEMS.length]);
            }
            await setup.ranking.deleteBoard(name);
          },
        ),
        { numRuns: topology === 'single' ? 10 : 4, examples: [[1_600_000_000_000, EXAMPLE]] },
      );
      expect(listedRows).toBeGreaterThan(40); // not vacuous (the example alone lists more than 40 rows)
    }, 180_000);

    async function apply(name: string, s: Step, events: Event[]): Promise<void> {
      const nowMs = clock.nowMs();
      if (s.kind === 'advance') return clock.advanceMs(s.ms);
      if (s.kind === 'batch') {
        await setup.ranking.incrementBatch(
          name,
          s.entries.map((e) => ({ ...e, metric: s.metric })),
        );
        for (const e of s.entries) events.push({ ...e, metric: s.metric, atSec: nowMs / 1000 });
        return;
      }
      const atSec = (nowMs - s.backMs) / 1000;
      const { item, metric } = s;
      const fields = { kind: 'increment' as const, board: name, item, amount: s.amount, atSec, metric };
      await setup.ranking.increment({ ...fields, context: { nowMs } });
      events.push({ item, metric, amount: s.amount, atSec });
    }

    /**
     * Right after a write, before any read drains the other metric's windows: each view reading the
     * written metric holds each written item at the formula over its live counts (the stored zset).
     */
    async function expectExactAtWrite(name: string, s: Step, events: Event[]): Promise<void> {
      if (s.kind === 'advance') return;
      const written = s.kind === 'batch' ? s.entries.map((e) => e.item) : [s.item];
      const keys = new RankingKeys(setup.redis.prefix);
      for (const view of VIEWS.filter((v) => v.positive === s.metric || v.negative === s.metric))
        for (const item of new Set(written)) {
          const stored = await setup.redis.client.zscore(keys.board(name, shardOf(item, shards)).top(view.name), item);
          const wanted = modelRows(events, view, clock.nowMs()).find((row) => row.item === item)?.score ?? 0;
          if (!close(Number(stored ?? 0), wanted))
            expect([name, view.name, item, Number(stored ?? 0)]).toEqual([name, view.name, item, wanted]);
        }
    }

    async function compare(name: string, view: PairView, events: Event[], probe: string): Promise<void> {
      const label = `${name} ${view.name} @${clock.nowMs()}`;
      // 2-field expiry chunks: a read drains a chunk and says `draining` until the expired slots are gone.
      let top = await setup.ranking.top(name, view.name, 0, 100);
      while (top.draining) top = await setup.ranking.top(name, view.name, 0, 100);
      expect(top.mode).toBe(view.mode);
      const wanted = modelRows(events, view, clock.nowMs());
      expectSameListing(top.items as Row[], wanted, label);
      listedRows += top.items.length;
      // An item read agrees with the listing (sharded: another path).
      const listed = top.items.find((row) => row.item === probe) as Row | undefined;
      const item = await setup.ranking.item(name, view.name, probe);
      expect([label, item.rank, item.score]).toEqual([label, listed?.rank ?? null, listed?.score ?? 0]);
    }
  },
);
