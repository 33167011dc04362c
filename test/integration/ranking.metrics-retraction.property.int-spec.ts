import fc from 'fast-check';
import { validateConfig } from '../../src/common/config';
import { composeRanking, RankingGraph } from '../../harness/compose-ranking';
import { RedisService } from '../../src/redis/redis.service';
import { RedisSettings } from '../../src/redis/redis.settings';
import { RedisFunctions } from '../../src/redis/redis-functions';
import { FakeClock } from '../../harness/clock';
import { startTestRedis, TestRedis, SHARD_CELLS } from '../../harness/redis';
import { compareMetricHistory } from '../support/metrics-twins';

const DAY_MS = 86_400_000;
/** A rolling window keeping snapshots and a calendar window keeping archives, each cut at 3 rows. */
const WINDOWS = [
  { name: 'w', period: 60, interval: 20, snapshots: { keep: 3, top: 3 } },
  { name: 'day', calendar: 'day', archive: { keep: 2, top: 3 } },
];
const METRICS = ['up', 'down', 'meh'];
/** Views of two metrics: the first metric with another, and two others. */
const VIEWS = [
  { name: 'best', mode: 'wilson', window: 'w', positive: 'up', negative: 'down' },
  { name: 'argued', mode: 'controversial', window: 'w', positive: 'meh', negative: 'down' },
];
const ITEMS = ['a', 'b', 'c', 'd', 'é'];

type Step =
  { kind: 'batch'; metric: string; entries: Array<{ item: string; amount: number }> } | { kind: 'advance'; ms: number };

const amount = fc.oneof({ weight: 4, arbitrary: fc.integer({ min: 1, max: 5 }) }, fc.constant(-2));
const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('batch' as const),
      metric: fc.constantFrom(...METRICS),
      entries: fc.array(fc.record({ item: fc.constantFrom(...ITEMS), amount }), { minLength: 1, maxLength: 4 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('advance' as const),
      ms: fc.oneof({ weight: 5, arbitrary: fc.integer({ min: 0, max: 45_000 }) }, fc.constant(DAY_MS)),
    }),
  },
);

const CASES = SHARD_CELLS;

/**
 * An item retraction on a board of several metrics reaches every metric: afterwards, by every metric,
 * its windows, ranks, lookups and wilson / controversial views answer what a twin board that never
 * received the item's events answers (and keep doing so as later events and expiry come), and its
 * history and archives answer what a board of that metric alone answers after the same retraction
 * (the item's row out of each listing, the rows after it moved up: retraction-history's property).
 */
describe.each(CASES)(
  'metrics: an item retraction reaches every metric (property, %s, %i shard(s))',
  (topology, shards) => {
    const clock = new FakeClock(0);
    let redis: TestRedis;
    let connection: RedisService;
    let graph: RankingGraph;
    let run = 0;
    let comparedRows = 0;

    beforeAll(async () => {
      redis = await startTestRedis(topology);
      const config = validateConfig({ ...redis.env, REDIS_COMMAND_TIMEOUT_MS: '5000' });
      connection = new RedisService(RedisSettings.from(config), clock);
      await connection.waitUntilReady(10_000);
      graph = await composeRanking(connection, new RedisFunctions(connection), config, clock);
    });

    afterAll(async () => {
      await graph.retractions.onApplicationShutdown();
      await connection.onApplicationShutdown();
      await redis.stop();
    });

    it("every metric's answers equal a twin's that never had the item, its history a one-metric board's", async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 1_600_000_000_000, max: 1_900_000_000_000 }),
          fc.array(step, { minLength: 2, maxLength: 12 }),
          fc.array(step, { maxLength: 4 }),
          fc.constantFrom(...ITEMS),
          async (startMs, before, after, retracted) => {
            const boards = await putBoards(`mr${run++}`, startMs);
            for (const s of before) await apply(boards, s, retracted, true);
            // Past a boundary: the retraction's first step crosses it on every metric, as a call of each would.
            clock.advanceMs(20_000);
            const amounts = await retract(boards, retracted);
            await compare(boards, retracted);
            expect(amounts.board).toBe(amounts.alone);
            for (const s of after) await apply(boards, s, retracted, false);
            await compare(boards, retracted);
            for (const board of [boards.name, boards.twin, ...Object.values(boards.alone)])
              await graph.ranking.deleteBoard(board);
          },
        ),
        // 8 runs on either topology: each mistake planted in retract_item.lua that 25 single-node runs caught
        // (a sibling's windows, or its calendar window, not crossed; not drained, or the board's drained
        // instead; the siblings' windows or histories left out) failed by the 7th run, the example included.
        { numRuns: 8, examples: [[1_700_000_000_000, everyMetricTwice(), [], 'b']] },
      );
      expect(comparedRows).toBeGreaterThan(100); // not vacuous
    }, 400_000);

    type Boards = { name: string; twin: string; alone: Record<string, string> };

    async function putBoards(name: string, startMs: number): Promise<Boards> {
      clock.setMs(startMs);
      const boards = { name, twin: `${name}t`, alone: Object.fromEntries(METRICS.map((m) => [m, `${name}-${m}`])) };
      for (const board of [boards.name, boards.twin])
        await graph.ranking.putBoard({ name: board, windows: WINDOWS, shards, metrics: METRICS, views: VIEWS });
      for (const board of Object.values(boards.alone))
        await graph.ranking.putBoard({ name: board, windows: WINDOWS, shards });
      return boards;
    }

    /** A batch to the board and its metric's board alone (the item's entries too, while `withItem`), the rest to the twin. */
    async function apply(boards: Boards, s: Step, item: string, withItem: boolean): Promise<void> {
      if (s.kind === 'advance') return clock.advanceMs(s.ms);
      const entries = withItem ? s.entries : s.entries.filter((e) => e.item !== item);
      const others = s.entries.filter((e) => e.item !== item);
      const batch = (board: string, rows: typeof entries, metric?: string) =>
        rows.length === 0
          ? undefined
          : graph.ranking.incrementBatch(
              board,
              rows.map((e) => ({ ...e, metric })),
            );
      await batch(boards.name, entries, s.metric);
      await batch(boards.alone[s.metric], entries);
      await batch(boards.twin, others, s.metric);
    }

    /** The item retracted on the board and on each metric's board alone: the amounts each counted. */
    async function retract(boards: Boards, item: string): Promise<{ board: number; alone: number }> {
      const one = async (board: string) => {
        const started = (await graph.retractions.start(board, { kind: 'item', id: item })).body;
        await graph.retractions.settled(board, started.id);
        const view = await graph.retractions.get(board, started.id);
        expect([board, view.state]).toEqual([board, 'done']);
        return view.amount;
      };
      const board = await one(boards.name);
      let alone = 0;
      for (const metric of METRICS) alone += await one(boards.alone[metric]);
      return { board, alone };
    }

    /**
     * A read's answer, or the code of its error, with the board's name as `name`; with `live`, without
     * previous ranks (the twin's snapshots may hold a row past `top` where the retracted item's was).
     */
    const answerOf = async (read: Promise<unknown>, own: string, name: string, live: boolean) =>
      JSON.stringify(
        await read.catch((error: { code?: string }) => error.code ?? String(error)),
        (key, value: unknown) => (live && key === 'previousRank' ? undefined : value),
      ).replaceAll(`"${own}"`, `"${name}"`);

    /** `read` of the board (by `board`) equals it of `other`: its twin (live), or a metric's board alone. */
    async function same(label: string, read: (board: string) => Promise<unknown>, name: string, other: string) {
      const live = other === `${name}t`; // the twin (putBoards' name), not a metric's board alone
      const [a, b] = [await answerOf(read(name), other, name, live), await answerOf(read(other), other, name, live)];
      comparedRows += (b.match(/"item"/g) ?? []).length;
      expect([label, a]).toEqual([label, b]);
    }

    async function compare(boards: Boards, item: string): Promise<void> {
      const { ranking, lookup, standing } = graph;
      const { name, twin } = boards;
      for (const metric of METRICS) {
        await same(`${metric} top`, (b) => ranking.top(b, 'w', 0, 10, { metric }), name, twin);
        const asked = { window: 'w', items: ITEMS, relative: false, withData: false, metric };
        await same(`${metric} lookup`, (b) => lookup.lookup({ ...asked, name: b }), name, twin);
        for (const score of [1, 3])
          await same(
            `${metric} rank ${score}`,
            (b) => standing.rank({ name: b, window: 'w', metric, score }),
            name,
            twin,
          );
        for (const one of ITEMS)
          await same(`${metric} item ${one}`, (b) => ranking.item(b, 'w', one, { metric }), name, twin);
        await compareHistory(name, boards.alone[metric], metric);
      }
      for (const view of VIEWS) {
        await same(view.name, (b) => ranking.top(b, view.name, 0, 10), name, twin);
        await same(`${view.name} ${item}`, (b) => ranking.item(b, view.name, item), name, twin);
      }
    }

    /** The board's history by `metric` against its board alone's: snapshots, item histories, archives, previous ranks. */
    function compareHistory(name: string, alone: string, metric: string): Promise<void> {
      return compareMetricHistory(graph.ranking, same, { name, alone, metric, items: ITEMS });
    }
  },
);

/** Distinct counts of every item on every metric, a slot apart, then a day later: snapshots and an archive of each. */
function everyMetricTwice(): Step[] {
  const writes = METRICS.map((metric, m): Step => ({
    kind: 'batch',
    metric,
    entries: ITEMS.map((item, i) => ({ item, amount: ((i + m) % 5) + 1 })),
  }));
  return [...writes, { kind: 'advance', ms: 20_000 }, ...writes, { kind: 'advance', ms: DAY_MS }, ...writes];
}
