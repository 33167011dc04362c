import fc from 'fast-check';
import { validateConfig } from '../../src/common/config';
import { composeRanking, RankingGraph } from '../../harness/compose-ranking';
import { WriteCommands } from '../../src/ranking/writes/write-commands';
import { RedisService } from '../../src/redis/redis.service';
import { RedisSettings } from '../../src/redis/redis.settings';
import { RedisFunctions } from '../../src/redis/redis-functions';
import { FakeClock } from '../../harness/clock';
import { startTestRedis, TestRedis, TOPOLOGIES } from '../../harness/redis';

const TOP = 3;
const WINDOW = { name: 'w', period: 120, interval: 40, snapshots: { keep: 3, top: TOP } };
const ITEMS = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];

type Op = { kind: 'inc'; item: string; amount: number } | { kind: 'advance'; ms: number };
const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('inc' as const),
      item: fc.constantFrom(...ITEMS),
      amount: fc.integer({ min: 1, max: 9 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 50_000 }) }),
  },
);

type Row = { rank: number; item: string; score: number };
const rowsOf = (answer: { items: Row[] }): Row[] =>
  answer.items.map(({ rank, item, score }) => ({ rank, item, score }));

/** A snapshot with one item's row taken out, as the contract has it: the rows after it move up, nothing refills. */
function without(rows: Row[], item: string): Row[] {
  const kept = rows.filter((row) => row.item !== item);
  const ranked: Row[] = [];
  kept.forEach((row, i) => {
    const tied = i > 0 && row.score === kept[i - 1].score;
    ranked.push({ ...row, rank: tied ? ranked[i - 1].rank : i + 1 });
  });
  return ranked;
}

/**
 * An item retraction rewrites the kept snapshots: on 1 shard and on 3 alike, each snapshot is the one
 * taken at its boundary without the item's row (the rows after it move up; the row past the snapshot's
 * `top` does not move in), and an item's history agrees with it.
 */
describe.each(TOPOLOGIES)('item retraction and kept snapshots, 1 shard or many (property, %s)', (topology) => {
  const clock = new FakeClock(0);
  const commands = new WriteCommands(clock);
  let redis: TestRedis;
  let redisService: RedisService;
  let graph: RankingGraph;
  let run = 0;

  beforeAll(async () => {
    redis = await startTestRedis(topology);
    const config = validateConfig({ ...redis.env, REDIS_COMMAND_TIMEOUT_MS: '5000' });
    redisService = new RedisService(RedisSettings.from(config), clock);
    await redisService.waitUntilReady(10_000);
    graph = await composeRanking(redisService, new RedisFunctions(redisService), config, clock);
  });

  afterAll(async () => {
    await graph.retractions.onApplicationShutdown();
    await redisService.onApplicationShutdown();
    await redis.stop();
  });

  it('every kept snapshot loses the row and nothing else', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1_600_000_000_000, max: 1_900_000_000_000 }),
        fc.array(op, { minLength: 4, maxLength: 25 }),
        fc.constantFrom(...ITEMS),
        async (startMs, ops, retracted) => {
          run++;
          clock.setMs(startMs);
          const boards = [`r1x${run}`, `r3x${run}`];
          await graph.ranking.putBoard({ name: boards[0], windows: [WINDOW], shards: 1, actors: true });
          await graph.ranking.putBoard({ name: boards[1], windows: [WINDOW], shards: 3, actors: true });
          for (const step of ops) {
            if (step.kind === 'advance') clock.advanceMs(step.ms);
            else
              for (const board of boards)
                await graph.ranking.increment(commands.increment({ board, item: step.item, amount: step.amount }));
          }
          // Past a boundary: a read takes the snapshot of the slot just closed, on every shard.
          clock.advanceMs(40_000);
          for (const board of boards) await graph.ranking.top(board, 'w', 0, 10);
          const before = await snapshots(boards[0]);
          for (const board of boards) {
            const started = (await graph.retractions.start(board, { kind: 'item', id: retracted })).body;
            await graph.retractions.settled(board, started.id);
          }
          const wanted = before.map((snapshot) => ({ ...snapshot, rows: without(snapshot.rows, retracted) }));
          for (const board of boards) {
            expect([board, await snapshots(board)]).toEqual([board, wanted]);
            // Each item at each boundary whose snapshot listed it before (an item past a snapshot's rows
            // that ties its last row has a rank but no row: not compared here).
            for (const item of new Set(before.flatMap((snapshot) => snapshot.rows.map((row) => row.item)))) {
              const history = await graph.ranking.itemHistory(board, 'w', item, undefined, undefined);
              const listedAt = (at: number) =>
                before.some((snapshot) => snapshot.at === at && snapshot.rows.some((row) => row.item === item));
              const points = history.points.filter(({ at }) => listedAt(at)).map(({ at, rank }) => ({ at, rank }));
              const expected = wanted
                .filter(({ at }) => listedAt(at))
                .map(({ at, rows }) => ({ at, rank: rows.find((row) => row.item === item)?.rank ?? null }));
              expect([board, item, points]).toEqual([board, item, expected]);
            }
          }
          for (const board of boards) await graph.ranking.deleteBoard(board);
        },
      ),
      { numRuns: topology === 'single' ? 30 : 10 },
    );
    // Over 14 s measured on a busy 2-core machine, where a 21 s test also ran past 60 s: room to spare.
  }, 180_000);

  // A calendar day's archive: each shard keeps its own top rows of the day as well.
  it('every archive loses the row and nothing else', async () => {
    const DAY_MS = 86_400_000;
    const day = { name: 'day', calendar: 'day', archive: { keep: 2, top: TOP } };
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 19_000, max: 21_000 }),
        fc.array(op, { minLength: 4, maxLength: 20 }),
        fc.constantFrom(...ITEMS),
        async (dayNumber, ops, retracted) => {
          run++;
          clock.setMs(dayNumber * DAY_MS + 3_600_000);
          const boards = [`a1x${run}`, `a3x${run}`];
          await graph.ranking.putBoard({ name: boards[0], windows: [day], shards: 1 });
          await graph.ranking.putBoard({ name: boards[1], windows: [day], shards: 3 });
          for (const step of ops) {
            if (step.kind === 'advance') clock.advanceMs(step.ms);
            else
              for (const board of boards)
                await graph.ranking.increment(commands.increment({ board, item: step.item, amount: step.amount }));
          }
          clock.setMs((dayNumber + 1) * DAY_MS + 60_000);
          const before = await archived(boards[0]);
          for (const board of boards) {
            await archived(board);
            const started = (await graph.retractions.start(board, { kind: 'item', id: retracted })).body;
            await graph.retractions.settled(board, started.id);
          }
          const wanted = without(before, retracted);
          for (const board of boards) expect([board, await archived(board)]).toEqual([board, wanted]);
          for (const board of boards) await graph.ranking.deleteBoard(board);
        },
      ),
      { numRuns: topology === 'single' ? 30 : 10 },
    );
  });

  /** The board's archive of the day closed (a read drains chunks; while it is pending it may answer WINDOW_DRAINING). */
  async function archived(board: string): Promise<Row[]> {
    for (let i = 0; i < 50; i++) {
      try {
        return rowsOf(await graph.ranking.archive(board, 'day', undefined, { offset: 0, limit: 100 }));
      } catch (error) {
        if ((error as { code?: string }).code !== 'WINDOW_DRAINING') throw error;
      }
    }
    throw new Error(`the archive of ${board} stayed pending`);
  }

  /** Every kept snapshot of the board's window, oldest first. */
  async function snapshots(board: string): Promise<Array<{ at: number; rows: Row[] }>> {
    const found: Array<{ at: number; rows: Row[] }> = [];
    let atSec: number | undefined = undefined;
    for (let i = 0; i < WINDOW.snapshots.keep; i++) {
      const answer: { at: number; items: Row[] } | undefined = await graph.ranking
        .history(board, 'w', atSec)
        .catch((error: { code?: string }) => {
          if (error.code !== 'SNAPSHOT_NOT_FOUND') throw error;
          return undefined;
        });
      if (!answer) break;
      found.unshift({ at: answer.at, rows: rowsOf(answer) });
      atSec = answer.at - 1;
    }
    return found;
  }
});
