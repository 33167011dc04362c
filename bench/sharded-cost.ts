/**
 * Redis cost of a 64-shard board's reads and writes (BENCH_SKIP=shards leaves it out): Redis time per
 * request from INFO commandstats (all script calls), the code's path against the path before this
 * change (one count_above per shard for a rank; every shard's head down to offset + limit for a top
 * page), and writes/s with 64 writes in flight. The board holds SHARDED_BENCH_ITEMS_PER_SHARD items per
 * shard; a second board puts the top items in blocks of 1 700 per shard (the costliest layout the unit
 * tests found for the progressive merge), with ids chosen by their hash.
 */
import Redis from 'ioredis';
import { UNLIMITED } from '../src/governance/growth-quota';
import { SystemClock } from '../src/common/clock';
import { validateConfig } from '../src/common/config';
import { RANKING } from '../src/ranking/ranking.functions';
import { composeRanking } from '../harness/compose-ranking';
import { shardOf } from '../src/ranking/core/shard-math';
import { RedisService } from '../src/redis/redis.service';
import { RedisSettings } from '../src/redis/redis.settings';
import { RedisFunctions } from '../src/redis/redis-functions';
import { throughput } from './load';
import { scriptCommandStats } from './script-calls';

const S = RANKING.functions;

const SHARDS = 64;
const ITEMS_PER_SHARD = Number(process.env.SHARDED_BENCH_ITEMS_PER_SHARD ?? 100_000);
const WINDOWS = [{ period: '24h', interval: '1h' }];

type Composed = Awaited<ReturnType<typeof composeRanking>>;
type Request = () => Promise<unknown>;
/** Redis's time per request inside scripts (INFO commandstats), over `times` requests one after another. */
type RedisMicros = (run: Request, times: number) => Promise<number>;

function redisMicrosOn(admin: Redis): RedisMicros {
  return async (run, times) => {
    await admin.config('RESETSTAT');
    for (let i = 0; i < times; i++) await run();
    const stats = await admin.info('commandstats');
    return scriptCommandStats(stats).micros / times;
  };
}

const ms = (micros: number) => (micros / 1000).toFixed(2);

/** The hashed board: `total` items s0.., 64 batches of 1 000 in flight. */
async function fillHashed(ranking: Composed['ranking'], total: number): Promise<void> {
  await ranking.putBoard({ name: 'hashed', windows: WINDOWS, shards: SHARDS });
  for (let first = 0; first < total; first += 64_000) {
    const batches = Array.from({ length: 64 }, (_, b) =>
      Array.from({ length: 1000 }, (_, i) => {
        const n = first + b * 1000 + i;
        return { item: `s${n}`, amount: 1 + (n % 100_000) };
      }),
    );
    await Promise.all(batches.map((entries) => ranking.incrementBatch('hashed', entries)));
  }
}

/** The requests now, and as they were made before (an increment then a count above on every other shard; a top from every shard). */
async function hashedRequests(bench: {
  ranking: Composed['ranking'];
  cache: Composed['cache'];
  functions: RedisFunctions;
  total: number;
}) {
  const { ranking, cache, functions, total } = bench;
  const board = await cache.get('hashed');
  const window = board.config.windows[0];
  const call = (shard: number) => ({ board, shard: board.shards[shard], nowMs: Date.now(), budgetFields: 100 });
  let n = 0;
  const write = () => ranking.increment('hashed', `s${(n++ * 7919) % total}`, 1);
  const writeBefore = async () => {
    const item = `s${(n++ * 7919) % total}`;
    const home = shardOf(item, SHARDS);
    const reply = await functions.call(S.increment, { ...call(home), item, amount: 1, newItems: UNLIMITED });
    const scores = reply.value.standings.map((s) => s.score);
    await Promise.all(
      board.shards.map((_, shard) =>
        shard === home ? undefined : functions.call(S.countAbove, { ...call(shard), windows: [window], scores }),
      ),
    );
  };
  const rank = () => ranking.item('hashed', undefined, `s${(n++ * 7919) % total}`);
  const top = (offset: number, limit: number) => () => ranking.top('hashed', undefined, offset, limit);
  const topBefore = (depth: number) => () =>
    Promise.all(
      board.shards.map((_, shard) => functions.call(S.readTop, { ...call(shard), window, offset: 0, limit: depth })),
    );
  const around = () => ranking.around('hashed', undefined, `s${(n++ * 7919) % total}`, 100);
  return { write, writeBefore, rank, top, topBefore, around };
}

async function requestRows(
  rows: Awaited<ReturnType<typeof hashedRequests>> & { redisMicros: RedisMicros; repeats: number },
): Promise<void> {
  const { write, writeBefore, rank, top, topBefore, around, redisMicros, repeats } = rows;
  console.log('| request | before: Redis ms | now: Redis ms |');
  console.log('|---|---|---|');
  const row = async (what: string, now: Request, before: Request | undefined, times: number) => {
    const b = before ? ms(await redisMicros(before, times)) : '—';
    console.log(`| ${what} | ${b} | ${ms(await redisMicros(now, times))} |`);
  };
  await row('increment (answer with board-wide rank)', write, writeBefore, 200 * repeats);
  await row('item rank / percentile', rank, undefined, 200 * repeats);
  await row('top-10', top(0, 10), topBefore(10), 50 * repeats);
  await row('top, offset 0, limit 1000', top(0, 1000), topBefore(1000), 10 * repeats);
  await row('top, offset 9000, limit 1000 (deepest)', top(9000, 1000), topBefore(10_000), 5 * repeats);
  await row('around, radius 100 (largest)', around, undefined, 20 * repeats);
  console.log(
    `\nWrites/s with 64 in flight (one client process): before ${Math.round(await throughput(writeBefore, 3))}, now ${Math.round(await throughput(write, 3))}\n`,
  );
}

/** The costliest layout found for the progressive merge: the top 200 000 items in blocks of 1 700 per shard. */
async function blocksRow(bench: { ranking: Composed['ranking']; redisMicros: RedisMicros; repeats: number }) {
  const { ranking, redisMicros, repeats } = bench;
  const pools: string[][] = Array.from({ length: SHARDS }, () => []);
  for (let c = 0; pools.some((pool) => pool.length < 4000); c++) {
    const id = `b${c}`;
    const pool = pools[shardOf(id, SHARDS)];
    if (pool.length < 4000) pool.push(id);
  }
  await ranking.putBoard({ name: 'blocks', windows: WINDOWS, shards: SHARDS });
  const used = new Array(SHARDS).fill(0);
  const entries = Array.from({ length: 200_000 }, (_, i) => {
    const shard = Math.floor(i / 1700) % SHARDS;
    return { item: pools[shard][used[shard]++], amount: 200_000 - i };
  });
  for (let i = 0; i < entries.length; i += 1000) await ranking.incrementBatch('blocks', entries.slice(i, i + 1000));
  const deepest = await redisMicros(() => ranking.top('blocks', undefined, 9000, 1000), 5 * repeats);
  console.log(
    `Top, offset 9000, limit 1000 on a board whose top 200 000 items lie in blocks of 1 700 per shard: ${ms(deepest)} Redis ms per read\n`,
  );
}

export async function shardedCostBench(redisUrl: string, repeats: number): Promise<void> {
  const config = validateConfig({ REDIS_URL: redisUrl, KEY_PREFIX: 'bshard:', REDIS_COMMAND_TIMEOUT_MS: '60000' });
  const redisService = new RedisService(RedisSettings.from(config), new SystemClock());
  const functions = new RedisFunctions(redisService);
  await redisService.waitUntilReady(10_000);
  const { ranking, cache } = await composeRanking(redisService, functions, config, new SystemClock());
  const admin = new Redis(redisUrl);
  const redisMicros = redisMicrosOn(admin);
  const total = SHARDS * ITEMS_PER_SHARD;
  console.log(`## A board of ${SHARDS} shards, ${total.toLocaleString('en')} items (Redis time per request)\n`);
  await fillHashed(ranking, total);
  await requestRows({ ...(await hashedRequests({ ranking, cache, functions, total })), redisMicros, repeats });
  await blocksRow({ ranking, redisMicros, repeats });
  await ranking.deleteBoard('hashed');
  await ranking.deleteBoard('blocks');
  admin.disconnect();
  await redisService.onApplicationShutdown();
}
