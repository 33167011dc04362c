import fc from 'fast-check';
import { composeRanking, RankingGraph } from '../../harness/compose-ranking';
import { FakeClock } from '../../harness/clock';
import { startTestRedis, TestRedis, type TestRedisOptions, Topology } from '../../harness/redis';
import { FilteredPage, FilteredRead, FiltersService } from '../../src/ranking/filters/filters.service';
import { WriteCommands } from '../../src/ranking/writes/write-commands';
import { validateConfig } from '../../src/common/config';
import { WindowDrainingError } from '../../src/common/errors';
import { RedisService } from '../../src/redis/redis.service';
import { RedisSettings } from '../../src/redis/redis.settings';
import { RedisFunctions } from '../../src/redis/redis-functions';
import type { RankingService } from '../../src/ranking/ranking.service';
import type { ModelWindow } from './actor-caps-model';
import { startTimesMs } from './ranking-ops';
import { ExpiryService } from '../../src/ranking/expiry/expiry.service';
import type { Redis } from 'ioredis';
import { expirePassesLogged, loggedCalls, logEveryCommand, stopLoggingEveryCommand, type LoggedCall } from './slowlog';

type PutBoard = RankingService['putBoard'];

/** A board keeping actors, its windows given in the models' form (periodSec, intervalSec). */
export type ActorBoardShape = { windows: ModelWindow[] } & Pick<
  Parameters<PutBoard>[0],
  'shards' | 'views' | 'segmentsMax' | 'capPerItem'
>;

/** The composed ranking of a property spec (useRankingGraph). */
export interface RankingGraphWorld {
  graph: RankingGraph;
  /** The Redis of the describe block, set once beforeAll ran. */
  redis: TestRedis;
  /**
   * Asserts `run` over lists of `steps`, each run on a new board of `shape` with the clock at a random
   * start (or an example's); a passing run deletes its board.
   */
  assertOverBoards<Step>(
    shape: ActorBoardShape,
    steps: fc.Arbitrary<Step[]>,
    params: fc.Parameters<[number, Step[]]>,
    run: (name: string, steps: Step[]) => Promise<void>,
  ): Promise<void>;
  /**
   * `ranking.top`, sent again while it answers WINDOW_DRAINING, as a client retries a 503: with
   * EXPIRE_CHUNK 2 one slot of a large batch can take more drain calls than one read may send.
   */
  top(...args: Parameters<RankingService['top']>): ReturnType<RankingService['top']>;
}

/** How many reads top sends before a WINDOW_DRAINING answer is the test's failure. */
const DRAINING_READS = 20;

/**
 * Registers, in the calling describe block, a Redis of its own (`topology`) and the composed ranking on
 * it, driven by `clock`. EXPIRE_CHUNK is 2 unless `env` says otherwise: expiry of a slot (and of its
 * contributions) often takes several calls. Answers the world, whose `graph` and `redis` are set once
 * beforeAll ran; afterAll stops the re-weightings and retractions left running, the connection and the Redis.
 */
export function useRankingGraph(
  topology: Topology,
  clock: FakeClock,
  env: Record<string, string> = { EXPIRE_CHUNK: '2' },
): RankingGraphWorld {
  let boards = 0;
  const world = {
    assertOverBoards: (shape, steps, params, run) =>
      fc.assert(
        fc.asyncProperty(startTimesMs, steps, async (startMs, ops) => {
          const name = `b${boards++}`;
          clock.setMs(startMs);
          await putActorBoard(world.graph, name, shape);
          await run(name, ops);
          await world.graph.ranking.deleteBoard(name);
        }),
        params,
      ),
    top: async (...args) => {
      for (let read = 1; ; read++) {
        try {
          return await world.graph.ranking.top(...args);
        } catch (error) {
          if (!(error instanceof WindowDrainingError) || read >= DRAINING_READS) throw error;
        }
      }
    },
  } as RankingGraphWorld;
  let close: () => Promise<void>;
  beforeAll(async () => {
    const redis = (world.redis = await startTestRedis(topology));
    ({ graph: world.graph, close } = await composeGraph({ ...redis.env, ...env }, clock));
  });
  afterAll(async () => {
    await close();
    await world.redis.stop();
  });
  return world;
}

/**
 * The composed ranking on the Redis `env` names, at `env`'s settings (a command timeout of 5 s unless
 * it says otherwise), driven by `clock`; `close` stops the re-weightings and retractions left running
 * and the connection.
 */
export async function composeGraph(
  env: Record<string, string>,
  clock: FakeClock,
): Promise<{ graph: RankingGraph; close: () => Promise<void> }> {
  const config = validateConfig({ REDIS_COMMAND_TIMEOUT_MS: '5000', ...env });
  const redisService = new RedisService(RedisSettings.from(config), clock);
  await redisService.waitUntilReady(10_000);
  const graph = await composeRanking(redisService, new RedisFunctions(redisService), config, clock);
  const close = async () => {
    await graph.actorWeights.onApplicationShutdown();
    await graph.aliases.onApplicationShutdown();
    await graph.retractions.onApplicationShutdown();
    await redisService.onApplicationShutdown();
  };
  return { graph, close };
}

/** Puts board `name` keeping actors (`board`). */
export function putActorBoard(graph: RankingGraph, name: string, board: ActorBoardShape): ReturnType<PutBoard> {
  const { windows, ...rest } = board;
  return graph.ranking.putBoard({
    name,
    windows: windows.map((w) => ({ name: w.name, period: w.periodSec, interval: w.intervalSec })),
    ...rest,
    actors: true,
  });
}

/** A scheduler pass of the expiry-bound specs: every board due claimed at once, leased long enough. */
const IDLE_PASS = { leaseMs: 30_000, claimBatch: 100 };

/** useIdleExpirer's answer. */
export interface IdleExpirer {
  world: RankingGraphWorld;
  /** The ranking of the instance whose scheduler the specs run, once beforeAll ran. */
  expirer: () => RankingGraph;
  /** Its scheduler's passes, logged, until nothing is still draining (expirePassesLogged). */
  expirePasses: (mostPasses: number) => Promise<{ calls: LoggedCall[]; passes: number }>;
}

/**
 * The expiry-bound specs' world: a ranking on a Redis of its own at an unbounded write cost (a default
 * instance refuses the costliest boards), seeded by `seed`; then, `idleMs` later, the composed ranking
 * of an instance at the default write bound and EXPIRE_CHUNK, whose scheduler the specs run.
 */
export function useIdleExpirer(
  clock: FakeClock,
  idleMs: number,
  seed: (graph: RankingGraph) => Promise<void>,
): IdleExpirer {
  const world = useRankingGraph('single', clock, { WRITE_COST_PER_CALL: '1000000' });
  let expirer: RankingGraph;
  let close = async () => {};
  beforeAll(async () => {
    await seed(world.graph);
    clock.advanceMs(idleMs);
    ({ graph: expirer, close } = await composeGraph(world.redis.env, clock));
  }, 120_000);
  afterAll(() => close());
  return {
    world,
    expirer: () => expirer,
    expirePasses: (mostPasses) =>
      expirePassesLogged(
        world.redis.client as never,
        () => expirer.module.get(ExpiryService).expireDue(IDLE_PASS),
        (ms) => clock.advanceMs(ms),
        mostPasses,
      ),
  };
}

/** The composed ranking with the filters slice's services (useFiltersGraph). */
export interface FiltersWorld {
  /** The Redis of the describe block, set once beforeAll ran. */
  redis: TestRedis;
  graph: RankingGraph;
  filters: FiltersService;
  commands: WriteCommands;
}

/**
 * Registers, in the calling describe block, a Redis (`topology`; `own` for a server of its own, whose
 * SLOWLOG counts only this file's calls) and the composed ranking on it at default settings, driven by
 * `clock`; the world's fields are set once beforeAll ran.
 */
export function useFiltersGraph(
  topology: Topology,
  clock: FakeClock,
  redisOptions: TestRedisOptions = {},
): FiltersWorld {
  const world = {} as FiltersWorld;
  let close: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    world.redis = await startTestRedis(topology, redisOptions);
    ({ graph: world.graph, close } = await composeGraph(world.redis.env, clock));
    world.filters = world.graph.module.get(FiltersService);
    world.commands = world.graph.module.get(WriteCommands);
  });
  afterAll(async () => {
    await close?.();
    await world.redis?.stop();
  });
  return world;
}

/** The filtered page `ask` answers on `world`, and the group_page calls Redis ran for it. */
export async function countedFilteredRead(
  world: FiltersWorld,
  ask: FilteredRead,
): Promise<{ page: FilteredPage; calls: number }> {
  const node = world.redis.client as Redis;
  await logEveryCommand(node);
  const page = await world.filters.read(ask);
  const calls = (await loggedCalls(node)).filter(({ call }) => /group_page$/.test(String(call[1]))).length;
  await stopLoggingEveryCommand(node);
  return { page, calls };
}

/** A filtered page's rows as [rank, item, score, group]. */
export const filteredRows = (page: FilteredPage) => page.items.map((row) => [row.rank, row.item, row.score, row.group]);
