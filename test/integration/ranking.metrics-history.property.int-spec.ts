import fc from 'fast-check';
import { useRankingService } from '../../harness/ranking';
import { SHARD_CELLS } from '../../harness/redis';
import type { BatchInput } from '../../src/ranking/writes/write-commands';

const DAY_MS = 86_400_000;
/** The rows the rolling window's snapshots and the calendar window's archives keep. */
const TOP = 3;
/** A rolling window keeping snapshots and a calendar window keeping archives, each cut at 3 rows. */
const WINDOWS = [
  { name: 'w', period: 60, interval: 20, snapshots: { keep: 4, top: TOP } },
  { name: 'day', calendar: 'day', archive: { keep: 3, top: TOP } },
];
const METRICS = ['up', 'down', 'meh'];
const ITEMS = ['a', 'b', 'c', 'd', 'é'];

type Step =
  | { kind: 'increment'; item: string; amount: number; metric: string }
  | { kind: 'batch'; metric: string; entries: Array<{ item: string; amount: number }> }
  | { kind: 'advance'; ms: number };

const amount = fc.oneof({ weight: 4, arbitrary: fc.integer({ min: 1, max: 5 }) }, fc.constant(-2));
const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('increment' as const),
      item: fc.constantFrom(...ITEMS),
      amount,
      metric: fc.constantFrom(...METRICS),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('batch' as const),
      metric: fc.constantFrom(...METRICS),
      entries: fc.array(fc.record({ item: fc.constantFrom(...ITEMS), amount }), { minLength: 1, maxLength: 5 }),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('advance' as const),
      ms: fc.oneof(fc.integer({ min: 0, max: 45_000 }), fc.constant(DAY_MS)),
    }),
  },
);

const CASES = SHARD_CELLS;

/**
 * A multi-metric board's history, item histories and archives by metric m equal those of a board of
 * its own that received only m's events (the snapshot and calendar property tests hold that board to
 * brute-force models): every metric's windows keep their snapshots and archives at the same boundaries.
 */
describe.each(CASES)('metrics: history and archives by metric (property, %s, %i shard(s))', (topology, shards) => {
  const setup = useRankingService(topology);
  const { clock } = setup;
  let board = 0;
  let comparedRows = 0;
  let countedRows = 0;
  let countedPoints = 0;
  let countedArchiveRows = 0;

  it('every snapshot read by metric equals that metric read on a board of its own', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1_600_000_000_000, max: 1_900_000_000_000 }),
        fc.array(step, { minLength: 1, maxLength: 14 }),
        async (startMs, steps) => {
          const name = `mh${board++}`;
          clock.setMs(startMs);
          await setup.ranking.putBoard({ name, windows: WINDOWS, shards, metrics: METRICS });
          for (const metric of METRICS)
            await setup.ranking.putBoard({ name: `${name}-${metric}`, windows: WINDOWS, shards });
          for (const s of steps) {
            await apply(name, s);
            for (const metric of METRICS) await compare(name, metric);
          }
          await setup.ranking.deleteBoard(name);
          for (const metric of METRICS) await setup.ranking.deleteBoard(`${name}-${metric}`);
        },
      ),
      { numRuns: 12, examples: [[1_600_000_000_000, dayOfEveryMetric()]] },
    );
    expect(comparedRows).toBeGreaterThan(30); // not vacuous
    expect(countedRows).toBeGreaterThan(10);
    expect(countedPoints).toBeGreaterThan(10);
    expect(countedArchiveRows).toBeGreaterThan(10);
  }, 300_000);

  it('reads a metric the board does not declare as 400 UNKNOWN_METRIC; refuses 2 metrics of 8 windows keeping their largest history', async () => {
    const name = `mh${board++}`;
    await setup.ranking.putBoard({ name, windows: WINDOWS, shards, metrics: METRICS });
    const code = (read: Promise<unknown>) => read.then(() => 'ok').catch((error: { code?: string }) => error.code);
    expect(await code(setup.ranking.history(name, 'w', undefined, undefined, 'nope'))).toBe('UNKNOWN_METRIC');
    expect(await code(setup.ranking.archives(name, 'day', 1, undefined, {}, { metric: 'nope' }))).toBe(
      'UNKNOWN_METRIC',
    );
    const largest = { period: 60, interval: 20, snapshots: { keep: 1000, top: 1000 } };
    const windows = Array.from({ length: 8 }, (_, i) => ({ name: `w${i}`, ...largest }));
    const put = (metrics: string[]) => code(setup.ranking.putBoard({ name: `${name}x`, windows, shards, metrics }));
    expect(await put(['up', 'down'])).toBe('INVALID_INPUT');
    const one = await code(
      setup.ranking.putBoard({ name: `${name}y`, windows: windows.slice(0, 4), shards, metrics: ['up', 'down'] }),
    );
    expect(one).toBe('ok');
    await setup.ranking.deleteBoard(name);
    await setup.ranking.deleteBoard(`${name}y`);
  });

  it("drops every metric's history with its window's when the window's snapshot setting changes", async () => {
    const name = `mh${board++}`;
    clock.setMs(1_700_000_000_000);
    await setup.ranking.putBoard({ name, windows: WINDOWS, shards, metrics: METRICS });
    const kept = () =>
      Promise.all(
        METRICS.map((metric) =>
          setup.ranking.history(name, 'w', undefined, undefined, metric).then(
            (answer) => answer.items.length,
            (error: { code?: string }) => error.code,
          ),
        ),
      );
    for (const metric of METRICS) await setup.ranking.incrementBatch(name, [{ item: 'a', amount: 1, metric }]);
    clock.advanceMs(20_000);
    expect(await kept()).toEqual([1, 1, 1]);
    const resnapshotted = WINDOWS.map((w) => (w.name === 'w' ? { ...w, snapshots: { keep: 5, top: 3 } } : w));
    await setup.ranking.putBoard({ name, windows: resnapshotted, shards, metrics: METRICS });
    expect(await kept()).toEqual(METRICS.map(() => 'SNAPSHOT_NOT_FOUND'));
    await setup.ranking.deleteBoard(name);
  });

  it("the scheduler crosses a metric's boundaries when only that metric holds data", async () => {
    const name = `mh${board++}`;
    clock.setMs(1_700_000_000_000);
    await setup.ranking.putBoard({ name, windows: WINDOWS, shards, metrics: METRICS });
    await setup.ranking.incrementBatch(name, [{ item: 'a', amount: 2, metric: 'meh' }]);
    for (let pass = 0; pass < 3; pass++) {
      clock.advanceMs(20_000);
      await setup.ranking.expireDue({ leaseMs: 30_000, claimBatch: 100 });
    }
    const { points } = await setup.ranking.itemHistory(name, 'w', 'a', undefined, undefined, undefined, 'meh');
    // One snapshot at each boundary the passes crossed (the first call only marked its slot).
    expect(points.map((point) => point.score)).toEqual([2, 2, 2]);
    await setup.ranking.deleteBoard(name);
  });

  async function apply(name: string, s: Step): Promise<void> {
    if (s.kind === 'advance') return clock.advanceMs(s.ms);
    const own = `${name}-${s.metric}`;
    if (s.kind === 'batch') {
      const entries: BatchInput[] = s.entries.map((e) => ({ ...e, metric: s.metric }));
      await setup.ranking.incrementBatch(name, entries);
      await setup.ranking.incrementBatch(own, s.entries);
      return;
    }
    const context = { nowMs: clock.nowMs() };
    const fields = { kind: 'increment' as const, item: s.item, amount: s.amount, atSec: clock.nowMs() / 1000, context };
    await setup.ranking.increment({ ...fields, board: name, metric: s.metric });
    await setup.ranking.increment({ ...fields, board: own });
  }

  /**
   * The board's history by `metric`, each row's `metrics` checked against every metric's board of its
   * own at the same boundary (its count where that listing holds the item; 0 where it holds fewer than
   * `top` rows; absent where it is full without the item or has no listing there), then left out.
   */
  async function historyCounted(name: string, metric: string): Promise<object> {
    const answer = await setup.ranking.history(name, 'w', undefined, undefined, metric);
    const theirs = new Map<string, { at: number; items: Array<{ item: string; score: number }> } | undefined>();
    for (const other of METRICS)
      theirs.set(other, await setup.ranking.history(`${name}-${other}`, 'w', answer.at).catch(() => undefined));
    const items = answer.items.map(({ metrics, ...row }: { metrics?: Record<string, number>; item: string }) => {
      const want: Record<string, number> = {};
      for (const other of METRICS) {
        const listing = theirs.get(other);
        if (listing?.at !== answer.at) continue;
        const count = listing.items.find((r) => r.item === row.item)?.score;
        if (count !== undefined || listing.items.length < TOP) want[other] = count ?? 0;
      }
      expect([metric, row.item, metrics]).toEqual([metric, row.item, want]);
      countedRows += 1;
      return row;
    });
    return { ...answer, items };
  }

  /**
   * The board's archives by `metric`, each row's `metrics` checked against every metric's board of its
   * own (its archive of the same period: the item's count where it lists the item; 0 where it holds
   * fewer than `top` rows; absent where it is full without the item or keeps no such period), then left out.
   */
  async function archivesCounted(name: string, metric: string): Promise<object> {
    const answer = await setup.ranking.archives(name, 'day', 10, undefined, {}, { metric });
    const theirs = new Map<string, Array<{ from: number; items: Array<{ item: string; score: number }> }>>();
    for (const other of METRICS)
      theirs.set(other, (await setup.ranking.archives(`${name}-${other}`, 'day', 10, undefined)).periods);
    const periods = answer.periods.map((period) => ({
      ...period,
      items: period.items.map(({ metrics, ...row }) => {
        const want: Record<string, number> = {};
        for (const other of METRICS) {
          const kept = theirs.get(other)?.find((p) => p.from === period.from);
          if (kept === undefined) continue;
          const count = kept.items.find((r) => r.item === row.item)?.score;
          if (count !== undefined || kept.items.length < TOP) want[other] = count ?? 0;
        }
        expect([metric, period.from, row.item, metrics]).toEqual([metric, period.from, row.item, want]);
        countedArchiveRows += 1;
        return row;
      }),
    }));
    return { ...answer, periods };
  }

  /**
   * The item's history by `metric`, each point's `metrics` checked against the item's history on every
   * metric's board of its own (its score where that board lists it at the boundary; 0 where that
   * board's snapshot there holds fewer than `top` rows; absent where it is full or has none), then left out.
   */
  async function itemHistoryCounted(name: string, metric: string, item: string): Promise<object> {
    const answer = await setup.ranking.itemHistory(name, 'w', item, undefined, undefined, undefined, metric);
    const theirs = new Map<string, Array<{ at: number; score: number | null }>>();
    for (const other of METRICS)
      theirs.set(other, (await setup.ranking.itemHistory(`${name}-${other}`, 'w', item, undefined, undefined)).points);
    const points: object[] = [];
    for (const { metrics, ...point } of answer.points) {
      const want: Record<string, number> = {};
      for (const other of METRICS) {
        const own = theirs.get(other)?.find((p) => p.at === point.at);
        if (own === undefined) continue;
        if (own.score !== null) want[other] = own.score;
        else if ((await setup.ranking.history(`${name}-${other}`, 'w', point.at)).items.length < TOP) want[other] = 0;
      }
      expect([metric, item, point.at, metrics]).toEqual([metric, item, point.at, want]);
      countedPoints += 1;
      points.push(point);
    }
    return { ...answer, points };
  }

  /** A read's answer with the board's name as `name`, or the code of its error. */
  const answerOf = async (read: Promise<object>, own: string, name: string) =>
    JSON.stringify(await read.catch((error: { code?: string }) => error.code ?? String(error))).replaceAll(own, name);

  async function compare(name: string, metric: string): Promise<void> {
    const own = `${name}-${metric}`;
    const ranking = setup.ranking;
    // previousRank by metric comes from that metric's latest snapshot.
    const ranks = (page: Promise<{ items: Array<{ item: string; rank: number; previousRank?: number | null }> }>) =>
      page.then(({ items }) => items.map(({ item, rank, previousRank }) => ({ item, rank, previousRank })));
    const pairs: Array<[string, Promise<object>, Promise<object>]> = [
      ['top', ranks(ranking.top(name, 'w', 0, 5, { metric })), ranks(ranking.top(own, 'w', 0, 5))],
      ['history', historyCounted(name, metric), ranking.history(own, 'w', undefined)],
      ['archives', archivesCounted(name, metric), ranking.archives(own, 'day', 10, undefined)],
      ...ITEMS.map((item): [string, Promise<object>, Promise<object>] => [
        `item ${item}`,
        itemHistoryCounted(name, metric, item),
        ranking.itemHistory(own, 'w', item, undefined, undefined),
      ]),
    ];
    for (const [label, got, want] of pairs) {
      const [a, b] = [await answerOf(got, own, name), await answerOf(want, own, name)];
      comparedRows += (b.match(/"item"/g) ?? []).length;
      expect([metric, label, a]).toEqual([metric, label, b]);
    }
  }
});

/** Distinct scores on every metric, a slot and a day later: a snapshot and an archive of each. */
function dayOfEveryMetric(): Step[] {
  const writes = METRICS.map((metric, m): Step => ({
    kind: 'batch',
    metric,
    entries: ITEMS.map((item, i) => ({ item, amount: ((i + m) % 5) + 1 })),
  }));
  return [...writes, { kind: 'advance', ms: 20_000 }, ...writes, { kind: 'advance', ms: DAY_MS }];
}
