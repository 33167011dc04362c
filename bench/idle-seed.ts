/**
 * Bulk seeding for the idle-boards bench (IDLE_BENCH_SEED=bulk, the default): the boards are made by the
 * service's own code in this process (RankingService.putBoard and increment, what the PUT and increment
 * routes call, scheduler off), many in flight, without an HTTP request per board. Through HTTP 10⁶
 * boards take over an hour on a loaded 2-core machine; this path makes the same keys (the bench checks
 * it: sameKeys compares a board made each way, key by key, `MEMORY USAGE` included).
 */
import { fork } from 'node:child_process';
import Redis from 'ioredis';
import { createApp } from '../src/bootstrap';
import { RedisService } from '../src/redis/redis.service';
import { RankingService } from '../src/ranking/ranking.service';
import type { PutBoardInput } from '../src/ranking/boards/boards.service';

/** Boards under way at once in each seeding process: enough to keep Redis busy, few enough to bound its memory. */
const SEED_IN_FLIGHT = 256;
/** IDLE_BENCH_SEED_PROCESSES: seeding processes side by side (default 4), each its share of the names. */
const SEED_PROCESSES = Number(process.env.IDLE_BENCH_SEED_PROCESSES ?? 4);

type SeedConfig = Omit<PutBoardInput, 'name'>;

/**
 * Creates each board with `config` and increments its item `x` once, as PUT then POST …/increment would:
 * a few boards in this process, many split over SEED_PROCESSES child processes (one JS thread each).
 */
export async function seedBoards(redisUrl: string, names: string[], config: SeedConfig): Promise<void> {
  if (names.length < 1000) return seedHere(redisUrl, names, config);
  const share = Math.ceil(names.length / SEED_PROCESSES);
  await Promise.all(
    Array.from({ length: SEED_PROCESSES }, (_, i) => {
      const child = fork(__filename, [], { execArgv: ['-r', 'ts-node/register/transpile-only'] });
      child.send({ redisUrl, names: names.slice(i * share, (i + 1) * share), config });
      return new Promise<void>((resolve, reject) =>
        child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`seeding process exited ${code}`)))),
      );
    }),
  );
}

async function seedHere(redisUrl: string, names: string[], config: SeedConfig): Promise<void> {
  const app = await createApp({
    logDestination: { write: () => undefined },
    env: {
      REDIS_URL: redisUrl,
      ADMIN_TOKEN: 'bench-seed-token-0123456789abcdef',
      LOG_LEVEL: 'error',
      QUOTA_NEW_ITEMS: '0',
      SCHEDULER_ENABLED: 'false',
      // Hundreds of calls queue behind each other on a loaded machine: none is given up as late.
      REDIS_COMMAND_TIMEOUT_MS: '60000',
    },
  });
  try {
    await app.init();
    if (!(await app.get(RedisService).waitUntilReady(60_000)))
      throw new Error('the seeding process never reached Redis');
    const ranking = app.get(RankingService);
    let next = 0;
    const worker = async () => {
      while (next < names.length) {
        const name = names[next++];
        await ranking.putBoard({ ...config, name });
        await ranking.increment(name, 'x', 1);
      }
    };
    await Promise.all(Array.from({ length: SEED_IN_FLIGHT }, worker));
  } finally {
    await app.close();
  }
}

if (require.main === module)
  process.once('message', (job: { redisUrl: string; names: string[]; config: SeedConfig }) => {
    seedHere(job.redisUrl, job.names, job.config).then(
      () => process.exit(0),
      (error: unknown) => {
        console.error(error);
        process.exit(1);
      },
    );
  });

/**
 * Every key of board `name` (its name replaced by `<board>`) with its type and `MEMORY USAGE`, and its
 * registry and due-index entries: a board made by PUT and one made by seedBoards answer the same.
 */
export async function boardFootprint(redis: Redis, name: string, indexes: string[]): Promise<string[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [nextCursor, found] = await redis.scan(cursor, 'MATCH', `*${name}*`, 'COUNT', 10_000);
    keys.push(...found);
    cursor = nextCursor;
  } while (cursor !== '0');
  const rows: string[] = [];
  for (const key of keys.sort()) {
    const [type, bytes] = await Promise.all([redis.type(key), redis.memory('USAGE', key)]);
    rows.push(`${key.replace(name, '<board>')} ${type} ${bytes} B`);
  }
  for (const index of indexes) rows.push(`${index} holds it: ${(await redis.zscore(index, name)) !== null}`);
  return rows;
}
