import { validateConfig } from '../../../src/common/config';
import { composeRanking, RankingGraph } from '../../../harness/compose-ranking';
import { StandingStore } from '../../../src/ranking/standing/standing.store';
import { WriteCommands } from '../../../src/ranking/writes/write-commands';
import { RedisFunctions } from '../../../src/redis/redis-functions';
import { RedisService } from '../../../src/redis/redis.service';
import { RedisSettings } from '../../../src/redis/redis.settings';
import { FakeClock } from '../../../harness/clock';
import { startTestRedis, TestRedis } from '../../../harness/redis';
import { rowsEachCall } from '../../support/tail-calls';

const ITEMS = 2000;
/** The harness's deepest page of a one-shard tail board: offset + limit and the lookahead. */
const PAGE_ROWS = 2064;
/** Row cache entries of the small cache: a listpack (hash-max-listpack-entries, 512 by default) through the reads. */
const SMALL_CACHE = 300;

/** A ranking graph of its own over `redis` (its service kept in `services`, for the describe to shut down). */
async function graphOn(
  redis: TestRedis,
  clock: FakeClock,
  services: RedisService[],
  env: Record<string, string>,
): Promise<RankingGraph> {
  const config = validateConfig({ ...redis.env, REDIS_COMMAND_TIMEOUT_MS: '5000', ...env });
  const service = new RedisService(RedisSettings.from(config), clock);
  services.push(service);
  await service.waitUntilReady(10_000);
  return composeRanking(service, new RedisFunctions(service), config, clock);
}

/**
 * A tail page's row cache is read in time linear in the page whatever its encoding (issue #45): read
 * field by field (HMGET), a cache small enough to be a listpack was scanned whole for each of the page's
 * rows (2 064 rows against ~500 entries: 2.5 ms an HMGET, the one-shard worst-case row's calls at
 * 10-29 ms). A listpack cache is now read whole, once a call (HGETALL), and a hash table by fields
 * (HMGET): counted from Redis's commandstats, not timed.
 */
describe('the row cache of a tail page (single)', () => {
  const clock = new FakeClock(1_700_000_000_000);
  const commands = new WriteCommands(clock);
  let redis: TestRedis;
  const services: RedisService[] = [];
  let seeder: RankingGraph;
  let reader: RankingGraph;

  const graphWith = (env: Record<string, string>) => graphOn(redis, clock, services, env);

  beforeAll(async () => {
    redis = await startTestRedis('single');
    // The seeder prunes and learns every row in a call; the reader's calls look at 5 filter bits each.
    seeder = await graphWith({ WRITE_COST_PER_CALL: '1000000', EXPIRE_CHUNK: '5000' });
    reader = await graphWith({ EXPIRE_CHUNK: '1' });
    const windows = [{ name: 'h', period: '1h', interval: '1m' }];
    await seeder.ranking.putBoard({ name: 't', windows, tail: { exact: 1000, below: 1000 } });
    // Four minutes of every item (three closed slots, pruned of all but the best 1 000).
    for (let minute = 0; minute < 4; minute++) {
      clock.advanceMs(60_000);
      for (let first = 0; first < ITEMS; first += 500) {
        const entries = Array.from({ length: 500 }, (_, k) => ({
          item: `i${first + k}`,
          amount: 1 + ((first + k) % 3),
        }));
        await seeder.ranking.incrementBatch(commands.batch({ board: 't', entries }));
      }
    }
    await page(seeder);
  }, 120_000);

  afterAll(async () => {
    for (const service of services) await service.onApplicationShutdown();
    await redis.stop();
  });

  async function page(graph: RankingGraph): Promise<void> {
    const board = await graph.cache.get('t');
    await graph.module
      .get(StandingStore)
      .tailTop({ board, window: board.config.windows[0], nowMs: clock.nowMs() }, PAGE_ROWS);
  }

  /**
   * The script calls of one page read, and the hash reads (HMGET, HGETALL) they ran (Redis's
   * commandstats); after a read that settles what the cache's change left to prune.
   */
  async function pageReads(): Promise<{ calls: number; hmget: number; hgetall: number }> {
    await page(reader);
    await redis.client.config('RESETSTAT');
    await page(reader);
    const stats = await redis.client.info('commandstats');
    const count = (name: string) => Number(stats.match(new RegExp(`cmdstat_${name}:calls=(\\d+)`))?.[1] ?? 0);
    return { calls: count('fcall'), hmget: count('hmget'), hgetall: count('hgetall') };
  }

  it('reads a small cache (a listpack) whole once a call, a cache of every row (a hash table) by fields', async () => {
    const board = await seeder.cache.get('t');
    const cacheKey = board.shards[0].keys.slots('h').replace(/slots$/, 'tailrows');
    const every = await redis.client.hgetall(cacheKey);
    expect(Object.keys(every).length).toBeGreaterThanOrEqual(ITEMS - 10);
    // A call reads the board's tail hash whole (one HGETALL) besides its row cache.
    const full = await pageReads();
    expect(full.hgetall).toBe(full.calls);
    await redis.client.del(cacheKey);
    await redis.client.hset(cacheKey, Object.fromEntries(Object.entries(every).slice(0, SMALL_CACHE)));
    expect(await redis.client.object('ENCODING', cacheKey)).toBe('listpack');
    const small = await pageReads();
    // Every call but the first (which copies the page) reads the listpack cache with one more HGETALL,
    // and none of its fields by HMGET: fewer HMGETs a call than against the hash table.
    expect(small.hgetall - small.calls).toBe(small.calls - 1);
    expect(small.hmget / small.calls).toBeLessThan(full.hmget / full.calls);
    expect(await redis.client.object('ENCODING', cacheKey)).toBe('listpack');
  }, 120_000);
});

/** id, time, µs, arguments, client address, client name. */
type SlowlogEntry = [number, number, number, string[], string, string];
const SCRIPT_CLIENT = '?:0';
/**
 * Most commands the first call of a tail page may run while it prunes a closed slot whose fields all
 * leave it: EXPIRE_CHUNK (100) budget units, a dropped field 3 of them (about 12 commands: ZREVRANK, a
 * GETBIT, HDEL, 4 SETBITs, ZINCRBY, ZREM, the results hooks), so 34 fields (~330 commands), and its few
 * reads (it keeps the page and answers no row).
 */
const TAIL_CALL_COMMANDS = 400;
/**
 * Most commands a call answering a part of the page may run: its looks (TAIL_LOOKS_PER_EXPIRE_FIELD x
 * EXPIRE_CHUNK, 150 GETBITs, a row's last slot 3 more), its few reads, and one field of expiry and pruning
 * (TAIL_PART_EXPIRE_FIELDS). When each part call also pruned within EXPIRE_CHUNK, they ran ~520-550
 * commands (12-13.5 M instructions).
 */
const TAIL_PART_COMMANDS = 220;
/** A page one call answers whole (tail_read_lib's ROWS_PER_CALL is 256): the harness's `limit 100` read with the lookahead. */
const SMALL_PAGE_ROWS = 164;

describe('a tail page that prunes a closed slot (single)', () => {
  const clock = new FakeClock(1_700_000_000_000);
  const commands = new WriteCommands(clock);
  let redis: TestRedis;
  let service: RedisService;
  let graph: RankingGraph;

  beforeAll(async () => {
    // A server of its own: the test reads every command a call ran from its SLOWLOG.
    redis = await startTestRedis('single', { own: true });
    const config = validateConfig({ ...redis.env, REDIS_COMMAND_TIMEOUT_MS: '5000' });
    service = new RedisService(RedisSettings.from(config), clock);
    await service.waitUntilReady(10_000);
    graph = await composeRanking(service, new RedisFunctions(service), config, clock);
  });
  afterAll(async () => {
    await service.onApplicationShutdown();
    await redis.stop();
  });

  /** The commands each tail read FCALL's script ran, since the last reset. */
  async function tailCalls(): Promise<number[]> {
    const entries = (await redis.client.slowlog('GET', 100_000)) as SlowlogEntry[];
    const calls: number[] = [];
    let inCall = 0;
    // Oldest first: a script's commands are logged before the call that ran them.
    for (const [, , , args, client] of entries.reverse()) {
      if (client === SCRIPT_CLIENT) inCall += 1;
      else {
        if (/_tail_top$/.test(String(args[1]))) calls.push(inCall);
        inCall = 0;
      }
    }
    return calls;
  }

  it('answers the page part by part, each row once, its first call within TAIL_CALL_COMMANDS, its parts within TAIL_PART_COMMANDS', async () => {
    const windows = [{ name: 'h', period: '1h', interval: '1m' }];
    await graph.ranking.putBoard({ name: 'p', windows, tail: { exact: 10, below: 1000 } });
    // A minute of 2 000 items seen once each: once closed, every field but the best 10 leaves its slot.
    for (let first = 0; first < ITEMS; first += 500) {
      const entries = Array.from({ length: 500 }, (_, k) => ({ item: `i${first + k}`, amount: 1 }));
      await graph.ranking.incrementBatch(commands.batch({ board: 'p', entries }));
    }
    clock.advanceMs(60_000);
    await redis.client.config('SET', 'slowlog-log-slower-than', '0');
    await redis.client.config('SET', 'slowlog-max-len', '100000');
    await redis.client.slowlog('RESET');
    const board = await graph.cache.get('p');
    const store = graph.module.get(StandingStore);
    // The rows each call answers: a part of the page, each row once (no call answers the whole page again).
    const { answered, restore } = rowsEachCall(store);
    const read = { board, window: board.config.windows[0], nowMs: clock.nowMs() };
    const [shard] = await store.tailTop(read, PAGE_ROWS);
    const calls = await tailCalls();
    // A page of one part while the slot is still being pruned: its first call prunes and keeps the page,
    // answering no row, and a part call answers it (no call pays for both).
    await redis.client.slowlog('RESET');
    const pageAnswered = answered.splice(0);
    const [small] = await store.tailTop(read, SMALL_PAGE_ROWS);
    restore();
    const smallCalls = await tailCalls();
    await redis.client.config('SET', 'slowlog-log-slower-than', '10000');
    expect(small.rows).toHaveLength(SMALL_PAGE_ROWS);
    expect(answered[0]).toBe(0);
    expect(smallCalls[0]).toBeLessThanOrEqual(TAIL_CALL_COMMANDS);
    expect(Math.max(...smallCalls.slice(1))).toBeLessThanOrEqual(TAIL_PART_COMMANDS);
    expect(calls.length).toBeGreaterThan(1);
    expect(calls[0]).toBeLessThanOrEqual(TAIL_CALL_COMMANDS);
    expect(Math.max(...calls.slice(1))).toBeLessThanOrEqual(TAIL_PART_COMMANDS);
    expect(pageAnswered).toHaveLength(calls.length);
    expect(pageAnswered.reduce((sum, rows) => sum + rows, 0)).toBe(shard.rows.length);
    expect(answered).toHaveLength(smallCalls.length);
    expect(new Set(shard.rows.map((row) => row.item)).size).toBe(shard.rows.length);
    // The read's bits reach most rows: a bound below the shard's hidden mass (0 here: one pruned slot).
    expect(shard.rows.filter((row) => row.dropped < shard.hidden).length).toBeGreaterThan(shard.rows.length / 2);
  });
});

/** Closed minutes of the chunked page's board, each pruned of every item: a row takes 4 bits of each slot's filter. */
const PRUNED_MINUTES = 10;
const CHUNK_ITEMS = 600;
/** Rows one read of a part takes (tail_read_lib's ROWS_PER_CHUNK). */
const ROWS_PER_CHUNK = 32;

/**
 * A call whose filter bits reach a few rows reads about as many (issue #45): at full size a call answering
 * 2 rows of a 60-slot window read a part of 256 (its ZREVRANGE, its cache entries, ~5 M instructions) for
 * them. Counted from the SLOWLOG: the rows each call's ZREVRANGEs ask for against the rows it answers.
 */
describe('a tail page whose rows take many filter bits (single)', () => {
  const clock = new FakeClock(1_700_000_000_000);
  const commands = new WriteCommands(clock);
  let redis: TestRedis;
  const services: RedisService[] = [];

  const graphWith = (env: Record<string, string>) => graphOn(redis, clock, services, env);

  beforeAll(async () => {
    redis = await startTestRedis('single', { own: true });
  });
  afterAll(async () => {
    for (const service of services) await service.onApplicationShutdown();
    await redis.stop();
  });

  /** Per tail_top call of the SLOWLOG (oldest first): the rows its ZREVRANGEs asked for. */
  async function rowsAsked(): Promise<number[]> {
    const entries = (await redis.client.slowlog('GET', 100_000)) as SlowlogEntry[];
    const calls: number[] = [];
    let asked = 0;
    for (const [, , , args, client] of entries.reverse()) {
      if (client === SCRIPT_CLIENT) {
        if (/^zrevrange$/i.test(args[0])) asked += Number(args[3]) - Number(args[2]) + 1;
      } else {
        if (/_tail_top$/.test(String(args[1]))) calls.push(asked);
        asked = 0;
      }
    }
    return calls;
  }

  it('reads a part in chunks: a call stopped by its filter bits asks for at most a chunk more rows than it answers', async () => {
    const seeder = await graphWith({ WRITE_COST_PER_CALL: '1000000', EXPIRE_CHUNK: '5000' });
    const windows = [{ name: 'h', period: '1h', interval: '1m' }];
    await seeder.ranking.putBoard({ name: 'c', windows, tail: { exact: 10, below: 1000 } });
    // Every item once a minute: each closed minute drops all but the best 10, the current one holds them all.
    for (let minute = 0; minute <= PRUNED_MINUTES; minute++) {
      if (minute > 0) clock.advanceMs(60_000);
      const entries = Array.from({ length: CHUNK_ITEMS }, (_, n) => ({ item: `i${n}`, amount: 1 }));
      await seeder.ranking.incrementBatch(commands.batch({ board: 'c', entries }));
    }
    const reader = await graphWith({});
    const board = await reader.cache.get('c');
    const store = reader.module.get(StandingStore);
    const { answered, restore } = rowsEachCall(store);
    await redis.client.config('SET', 'slowlog-log-slower-than', '0');
    await redis.client.config('SET', 'slowlog-max-len', '100000');
    await redis.client.slowlog('RESET');
    const [shard] = await store.tailTop({ board, window: board.config.windows[0], nowMs: clock.nowMs() }, CHUNK_ITEMS);
    restore();
    const asked = await rowsAsked();
    await redis.client.config('SET', 'slowlog-log-slower-than', '10000');
    expect(shard.rows).toHaveLength(CHUNK_ITEMS);
    expect(asked).toHaveLength(answered.length);
    // The calls after the first (which keeps the page) whose bits ran out before a whole part.
    const stopped = answered.flatMap((rows, i) => (i > 0 && rows < ROWS_PER_CHUNK ? [i] : []));
    expect(stopped.length).toBeGreaterThan(10);
    for (const i of stopped) expect(asked[i]).toBeLessThanOrEqual(answered[i] + ROWS_PER_CHUNK);
  }, 120_000);
});
