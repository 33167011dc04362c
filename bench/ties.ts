/**
 * ties: first and lookups (issue #25), on a private redis-server:
 *
 * memory: bytes Redis holds per item and window for the strict order of a `ties: first` board (the
 * order zset and the marks hash), beside the results zset every board has (16-character ids).
 * writes: Redis time per batch entry on a `ties: first` board against a shared one (batches as large as
 * a `ties: first` board's write call admits, the same on every board),
 * unsharded and over 8 shards.
 * lookup: one lookup of 1 000 ids on a board of 100 000 items, unsharded and over 8 shards (in one call,
 * and in the two rounds shards on several nodes take), wall time and Redis main-thread CPU.
 * reads: a top page of 100 and an item's rank over 8 shards, `ties: first` against shared.
 *
 * Run: npm run bench -- --part ties (BENCH_TIES_ITEMS: items per board, default 100 000).
 */
import Redis from 'ioredis';
import { SystemClock } from '../src/common/clock';
import { validateConfig } from '../src/common/config';
import { PreparedBoard } from '../src/ranking/core/board';
import { LookupStore } from '../src/ranking/lookup/lookup.store';
import { RankingService } from '../src/ranking/ranking.service';
import { composeRanking } from '../harness/compose-ranking';
import { RedisService } from '../src/redis/redis.service';
import { RedisSettings } from '../src/redis/redis.settings';
import { RedisFunctions } from '../src/redis/redis-functions';
import { stopChild } from '../harness/processes';
import { loadAverage, mainThreadCpu } from './call-rounds';
import { startRedisServer } from './process-stats';
import { entriesPerCall } from './write-batches';

const ITEMS = Number(process.env.BENCH_TIES_ITEMS ?? 100_000);
const WINDOWS = [{ name: 'w', period: 3600, interval: 60 }];
/** The costliest of the four boards sets the batch, so that every board is written alike. */
const BATCH = entriesPerCall({ windows: WINDOWS, ties: 'first' });
const idOf = (i: number) => `item-${String(i).padStart(11, '0')}`;
const BOARDS = ['shared', 'first', 'sharded', 'shardedFirst'] as const;

/** Median and p99 of timed calls (ms). */
function quantiles(times: number[]): string {
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.floor(q * (times.length - 1))].toFixed(2);
  return `${at(0.5)} ms | ${at(0.99)} ms`;
}

/**
 * A top page of 100, an item's rank and an around of radius 5 on the 8-shard boards, shared ties
 * against `ties: first`: 20 calls of each to warm up, then 200, the two boards call by call in turn.
 */
async function readBench(ranking: RankingService): Promise<void> {
  const reads = {
    'top 100': (name: string) => ranking.top(name, 'w', 0, 100),
    'item rank': (name: string, id: string) => ranking.item(name, 'w', id),
    'around, radius 5': (name: string, id: string) => ranking.around(name, 'w', id, 5),
  };
  console.log(`load average ${loadAverage()}\n`);
  console.log('| read, 8 shards, 100 000 items | shared ties: median | p99 | ties: first: median | p99 |');
  console.log('|---|---|---|---|---|');
  for (const [what, read] of Object.entries(reads)) {
    const times: Record<string, number[]> = { sharded: [], shardedFirst: [] };
    for (let run = -20; run < 200; run++) {
      const id = idOf((Math.abs(run) * 7919) % ITEMS);
      for (const name of ['sharded', 'shardedFirst']) {
        const started = process.hrtime.bigint();
        await read(name, id);
        if (run >= 0) times[name].push(Number(process.hrtime.bigint() - started) / 1e6);
      }
    }
    console.log(`| ${what} | ${quantiles(times.sharded)} | ${quantiles(times.shardedFirst)} |`);
  }
  const sample = idOf(4242);
  const ranks = await Promise.all(['sharded', 'shardedFirst'].map((name) => ranking.item(name, 'w', sample)));
  console.log(`\n(${sample}: rank ${ranks[0].rank} with shared ties, ${ranks[1].rank} with ties: first)\n`);
}

/** The four boards filled alike: each one's wall time in its batch increments, ms. */
async function writeBoards(ranking: RankingService): Promise<Record<string, number>> {
  const writeMs: Record<string, number> = { shared: 0, first: 0, sharded: 0, shardedFirst: 0 };
  for (const [name, ties, shards] of [
    ['shared', 'shared', 1],
    ['first', 'first', 1],
    ['sharded', 'shared', 8],
    ['shardedFirst', 'first', 8],
  ] as const)
    await ranking.putBoard({ name, windows: WINDOWS, shards, ties });
  // Interleaved, batch by batch, so the boards share whatever else the machine is doing.
  for (let from = 0; from < ITEMS; from += BATCH) {
    const entries = Array.from({ length: Math.min(BATCH, ITEMS - from) }, (_, k) => ({
      item: idOf(from + k),
      amount: 1 + ((from + k) % 1000),
    }));
    for (const name of BOARDS) {
      const started = process.hrtime.bigint();
      await ranking.incrementBatch(name, entries);
      writeMs[name] += Number(process.hrtime.bigint() - started) / 1e6;
    }
  }
  return writeMs;
}

/** MEMORY USAGE per item of the results zset and of ties: first's order zset and marks hash, on one shard and on 8. */
async function memoryRows(raw: Redis): Promise<void> {
  const usage = async (key: string) => Number((await raw.call('MEMORY', 'USAGE', key, 'SAMPLES', '0')) ?? 0);
  const top = await usage('{bench:board:first}:w:top');
  const order = await usage('{bench:board:first}:w:order');
  const marks = await usage('{bench:board:first}:w:marks');
  console.log(`## ties: first, ${ITEMS.toLocaleString('en')} items (16-character ids), one window\n`);
  console.log('| key | MEMORY USAGE per item |\n|---|---|');
  console.log(`| results zset (every board) | ${(top / ITEMS).toFixed(1)} B |`);
  console.log(`| order zset (ties: first) | ${(order / ITEMS).toFixed(1)} B |`);
  console.log(`| marks hash (ties: first) | ${(marks / ITEMS).toFixed(1)} B |`);
  const shardTags = Array.from({ length: 8 }, (_, k) => `{bench:board:shardedFirst${k === 0 ? '' : `/${k}`}}`);
  let orderSharded = 0;
  let marksSharded = 0;
  for (const tag of shardTags) {
    orderSharded += await usage(`${tag}:w:order`);
    marksSharded += await usage(`${tag}:w:marks`);
  }
  console.log(`| order zset (ties: first, 8 shards) | ${(orderSharded / ITEMS).toFixed(1)} B |`);
  console.log(`| marks hash (ties: first, 8 shards) | ${(marksSharded / ITEMS).toFixed(1)} B |`);
  console.log();
}

export async function tiesBench(): Promise<void> {
  const server = await startRedisServer();
  const config = validateConfig({ REDIS_URL: server.url, KEY_PREFIX: 'bench:', REDIS_COMMAND_TIMEOUT_MS: '60000' });
  const clock = new SystemClock();
  const redisService = new RedisService(RedisSettings.from(config), clock);
  await redisService.waitUntilReady(10_000);
  const raw = new Redis(server.url);
  try {
    const functions = new RedisFunctions(redisService);
    const graph = await composeRanking(redisService, functions, config, clock);
    const writeMs = await writeBoards(graph.ranking);
    await memoryRows(raw);
    console.log(`| board | batch increments, wall time per entry (batches of ${BATCH}) |\n|---|---|`);
    for (const name of BOARDS) console.log(`| ${name} | ${((writeMs[name] * 1000) / ITEMS).toFixed(2)} µs |`);
    console.log();
    await readBench(graph.ranking);
    await lookupBench(redisService, functions, config);
  } finally {
    raw.disconnect();
    await redisService.onApplicationShutdown();
    await stopChild(server.child);
  }
}

/**
 * The two rounds a lookup of a sharded board takes when its shards are on several Redis nodes: this
 * connection reports each shard on a node of its own (the bench's one redis-server serves them all).
 */
class ShardPerNode extends RedisService {
  override groupByNode(keys: string[]): number[][] {
    return keys.map((_, i) => [i]);
  }
}

/** 200 lookups of 1 000 ids with board ranks: median and p99 wall time, Redis CPU per lookup, its longest call. */
async function lookupRow(row: { raw: Redis; name: string; board: PreparedBoard; store: LookupStore; how: string }) {
  const { raw, name, board, store, how } = row;
  const window = board.window()!;
  const times: number[] = [];
  await raw.call('CONFIG', 'SET', 'slowlog-log-slower-than', '0', 'slowlog-max-len', '100000');
  await raw.call('SLOWLOG', 'RESET');
  const cpuBefore = await mainThreadCpu(raw);
  for (let run = 0; run < 200; run++) {
    const items = Array.from({ length: 1000 }, (_, k) => idOf((run * 7919 + k * 97) % ITEMS));
    const started = process.hrtime.bigint();
    await store.lookup({ board, window, nowMs: Date.now() }, { items, boardRanks: true, withData: false });
    times.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
  const cpuMs = (((await mainThreadCpu(raw)) - cpuBefore) * 1000) / 200;
  // The longest single Redis call of the 200 lookups (SLOWLOG: wall time inside Redis).
  const calls = (await raw.call('SLOWLOG', 'GET', '-1')) as Array<[number, number, number, string[]]>;
  const longestMs = Math.max(...calls.filter((c) => /^fcall/i.test(c[3][0])).map((c) => c[2])) / 1000;
  await raw.call('CONFIG', 'SET', 'slowlog-log-slower-than', '10000');
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.floor(q * (times.length - 1))].toFixed(2);
  const shards = `${board.shards.length} shard${board.shards.length > 1 ? 's' : ''}`;
  console.log(
    `| ${name} (${shards}${how}) | ${at(0.5)} ms | ${at(0.99)} ms | ${cpuMs.toFixed(2)} ms | ${longestMs.toFixed(2)} ms |`,
  );
}

async function lookupBench(
  redisService: RedisService,
  functions: RedisFunctions,
  config: ReturnType<typeof validateConfig>,
): Promise<void> {
  const { module, cache } = await composeRanking(redisService, functions, config, new SystemClock());
  const oneCall = module.get(LookupStore);
  const perNode = new ShardPerNode(RedisSettings.from(config), new SystemClock());
  await perNode.waitUntilReady(10_000);
  const twoRounds = (await composeRanking(perNode, new RedisFunctions(perNode), config, new SystemClock())).module.get(
    LookupStore,
  );
  const raw = new Redis(config.REDIS_URL!);
  console.log(`load average ${loadAverage()}\n`);
  console.log(
    '| lookup of 1 000 ids (board ranks) | median | p99 | Redis CPU per lookup | longest Redis call |\n|---|---|---|---|---|',
  );
  const variants = [
    ['shared', oneCall, ''],
    ['first', oneCall, ''],
    ['sharded', oneCall, ', one round (one Redis node)'],
    ['sharded', twoRounds, ', two rounds (as on shards of several nodes)'],
    ['shardedFirst', oneCall, ', one round (one Redis node)'],
    ['shardedFirst', twoRounds, ', two rounds (as on shards of several nodes)'],
  ] as const;
  for (const [name, store, how] of variants) await lookupRow({ raw, name, board: await cache.get(name), store, how });
  console.log(`\nload average ${loadAverage()}`);
  raw.disconnect();
  await perNode.onApplicationShutdown();
}
