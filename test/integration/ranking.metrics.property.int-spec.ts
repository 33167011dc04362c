import fc from 'fast-check';
import { useRankingService } from '../../harness/ranking';
import { SHARD_CELLS } from '../../harness/redis';
import type { BatchInput } from '../../src/ranking/writes/write-commands';

/** Two windows of unlike intervals, so their slots expire at different times. */
const WINDOWS = [
  { name: 'w1', period: 60, interval: 20 },
  { name: 'w2', period: 90, interval: 30 },
];
const METRICS = ['up', 'down', 'meh'];
const ITEMS = ['a', 'b', 'c', 'é', 'a b/c'];

type Step =
  | { kind: 'increment'; item: string; amount: number; metric: string; named: boolean; backMs: number }
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
      // The first metric sent by name or left out (its default).
      named: fc.boolean(),
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

/** A batch giving every item a distinct score on one metric. */
const everyItem = (metric: string): Step => ({
  kind: 'batch',
  metric,
  entries: ITEMS.map((item, i) => ({ item, amount: i + 1 })),
});

const CASES = SHARD_CELLS;

/**
 * A multi-metric board equals one board per metric: every write names a metric of one board (M) and
 * goes, without one, to that metric's own plain board; every read of M by metric answers what the
 * plain board answers (which the other property tests hold to brute-force models).
 */
describe.each(CASES)('metrics: one board per metric (property, %s, %i shard(s))', (topology, shards) => {
  const setup = useRankingService(topology);
  const { clock } = setup;
  let board = 0;
  let listedRows = 0;

  it('every window read by metric equals the read of that metric on a board of its own', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1_600_000_000_000, max: 1_900_000_000_000 }),
        fc.array(step, { minLength: 1, maxLength: 16 }),
        async (startMs, steps) => {
          const name = `m${board++}`;
          clock.setMs(startMs);
          await setup.ranking.putBoard({ name, windows: WINDOWS, shards, metrics: METRICS });
          for (const metric of METRICS)
            await setup.ranking.putBoard({ name: `${name}-${metric}`, windows: WINDOWS, shards });
          for (const s of steps) {
            await apply(name, s);
            for (const w of WINDOWS) {
              const scores = await countsOf(name, w.name);
              for (const metric of METRICS) await compare(name, metric, w.name, scores);
            }
          }
          await setup.ranking.deleteBoard(name);
          for (const metric of METRICS) await setup.ranking.deleteBoard(`${name}-${metric}`);
        },
      ),
      { numRuns: 8, examples: [[1_600_000_000_000, METRICS.map((metric) => everyItem(metric))]] },
    );
    expect(listedRows).toBeGreaterThan(30); // not vacuous (the example alone lists 60 rows)
  }, 300_000);

  async function apply(name: string, s: Step): Promise<void> {
    const nowMs = clock.nowMs();
    if (s.kind === 'advance') return clock.advanceMs(s.ms);
    if (s.kind === 'batch') {
      const entries: BatchInput[] = s.entries.map((e) => ({ ...e, metric: s.metric }));
      await setup.ranking.incrementBatch(name, entries);
      await setup.ranking.incrementBatch(`${name}-${s.metric}`, s.entries);
      return;
    }
    const atSec = (nowMs - s.backMs) / 1000;
    const metric = s.metric === METRICS[0] && !s.named ? undefined : s.metric;
    const context = { nowMs };
    const fields = { kind: 'increment' as const, item: s.item, amount: s.amount, atSec, context };
    const [got, want] = await Promise.all([
      setup.ranking.increment({ ...fields, board: name, metric }).catch((e: Error) => e.message),
      setup.ranking.increment({ ...fields, board: `${name}-${s.metric}` }).catch((e: Error) => e.message),
    ]);
    // The write's answer: each window's score, rank and previous rank as on the metric's own board.
    const windowsOf = (answer: typeof got) => (typeof answer === 'string' ? answer : answer.body.windows);
    expect(JSON.stringify(windowsOf(got)).replaceAll(`${name}-${s.metric}`, name)).toEqual(
      JSON.stringify(windowsOf(want)).replaceAll(`${name}-${s.metric}`, name),
    );
  }

  /** Each item's score in `window` on each metric's own board. */
  async function countsOf(name: string, window: string): Promise<Map<string, Record<string, number>>> {
    const read = (item: string, metric: string) => setup.ranking.item(`${name}-${metric}`, window, item);
    const rows = await Promise.all(
      ITEMS.map(async (item) => {
        const scores = await Promise.all(METRICS.map(async (metric) => [metric, (await read(item, metric)).score]));
        return [item, Object.fromEntries(scores) as Record<string, number>] as const;
      }),
    );
    return new Map(rows);
  }

  async function compare(
    name: string,
    metric: string,
    window: string,
    scores: Map<string, Record<string, number>>,
  ): Promise<void> {
    const own = `${name}-${metric}`;
    const asked = metric === METRICS[0] ? undefined : metric;
    const [got, want] = await Promise.all([
      setup.ranking.top(name, window, 0, 20, { metric: asked }),
      setup.ranking.top(own, window, 0, 20),
    ]);
    listedRows += want.items.length;
    const rows = (page: typeof got) => page.items.map(({ rank, item, score }) => ({ rank, item, score }));
    expect([metric, window, rows(got)]).toEqual([metric, window, rows(want)]);
    // Every row answers every metric: each the item's score on that metric's own board.
    expect(got.items.map((row) => [row.item, (row as { metrics?: object }).metrics])).toEqual(
      got.items.map((row) => [row.item, scores.get(row.item)]),
    );
    for (const item of ITEMS) {
      const [a, b] = await Promise.all([
        setup.ranking.item(name, window, item, { metric }),
        setup.ranking.item(own, window, item),
      ]);
      expect({ ...a, board: own }).toEqual({ ...b, metrics: scores.get(item) });
    }
    const first = want.items[0];
    if (first) {
      const [a, b] = await Promise.all([
        setup.ranking.around(name, window, first.item, 1, { metric }),
        setup.ranking.around(own, window, first.item, 1),
      ]);
      expect(a.items).toEqual(b.items.map((row) => ({ ...row, metrics: scores.get(row.item) })));
    }
  }
});
