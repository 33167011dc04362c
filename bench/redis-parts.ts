/**
 * The parts of `npm run bench` (bench/run.ts) measured at the Redis level, with no HTTP: calls/s of the
 * ranking functions with 64 calls in flight, what growth quotas cost a write, memory per item and per
 * idempotency key, the expiry of one 1 000 000-field slot, and a three-master Cluster.
 */
import calculateSlot from 'cluster-key-slot';
import { randomUUID } from 'node:crypto';
import Redis, { Cluster } from 'ioredis';
import { clusterClient, startRedisCluster } from '../harness/cluster';
import { PreparedBoard } from '../src/ranking/core/board';
import { RANKING } from '../src/ranking/ranking.functions';
import { RankingKeys } from '../src/ranking/core/ranking.keys';
import { BoardCall } from '../src/ranking/core/script-call';
import { loadLibraries } from '../src/redis/functions';
import { callFunction } from '../src/redis/redis-functions';
import { AppConfig } from '../src/common/config';
import { adminStepUnits } from '../src/ranking/core/write-cost';
import { DURATION_SEC, fmt, median, throughput } from './load';
import { UNLIMITED } from '../src/governance/growth-quota';
import { CounterKeys } from '../src/counters/counter-keys';
import { COUNTERS } from '../src/counters/counters.functions';
import { isScriptCall } from './script-calls';

/** An expire call's units, as the app's ExpiryStore gives them at the default WRITE_COST_PER_CALL. */
const EXPIRE_UNITS = adminStepUnits(new AppConfig().WRITE_COST_PER_CALL);

const S = RANKING.functions;
const EXPIRE_CHUNK = new AppConfig().EXPIRE_CHUNK;
/** The benches' key prefix: the service's KEY_PREFIX in bench/http.ts, and these parts' keys. */
export const PREFIX = 'bench:';

/** The increment script's throughput and Redis time per call, by windows and batch size. */
async function writeRows(redis: Redis, keys: RankingKeys): Promise<void> {
  for (const windows of [1, 3]) {
    const board = await makeBoard(redis, keys, `lvl${windows}`, windows);
    for (const batchSize of [1, 100, 1000]) {
      let n = 0;
      await redis.config('RESETSTAT');
      const callsPerSec = await throughputOf(() => {
        n++;
        if (batchSize === 1)
          return callFunction(redis, S.increment, { ...on(board, Date.now()), item: `i${n % 100_000}`, amount: 1 });
        const entries = Array.from({ length: batchSize }, (_, i) => ({
          item: `i${(n * batchSize + i) % 100_000}`,
          amount: 1,
        }));
        return callFunction(redis, S.incrementBatch, { ...on(board, Date.now()), entries });
      });
      console.log(
        `| increment script, ${windows} window(s), batch of ${batchSize} | ${fmt(callsPerSec)} | ${fmt(callsPerSec * batchSize)} | ${(await scriptMicrosPerCall(redis)).toFixed(1)} |`,
      );
    }
  }
}

/** Top-10 and rank reads on boards of 10 000 and 1 000 000 items. */
async function readRows(redis: Redis, keys: RankingKeys): Promise<void> {
  for (const size of [10_000, 1_000_000]) {
    const board = await makeBoard(redis, keys, `read${size}`, 1);
    await seed(redis, board, size, Date.now());
    const w = board.config.windows[0];
    const read = () => ({ ...on(board, Date.now()), window: w });
    await redis.config('RESETSTAT');
    const top = await throughputOf(() => callFunction(redis, S.readTop, { ...read(), offset: 0, limit: 10 }));
    const topMicros = await scriptMicrosPerCall(redis);
    let k = 0;
    await redis.config('RESETSTAT');
    const rank = await throughputOf(() =>
      callFunction(redis, S.readItem, { ...read(), item: `s${(k++ * 7919) % size}` }),
    );
    console.log(`| top-10 read, ${size.toLocaleString('en')} items | ${fmt(top)} | | ${topMicros.toFixed(1)} |`);
    console.log(
      `| rank read, ${size.toLocaleString('en')} items | ${fmt(rank)} | | ${(await scriptMicrosPerCall(redis)).toFixed(1)} |`,
    );
  }
}

export async function redisBench(redis: Redis): Promise<void> {
  console.log('## Redis level (ioredis, 64 calls in flight, no HTTP)\n');
  console.log('| what | calls/s | item increments/s | µs per call inside Redis |');
  console.log('|---|---|---|---|');
  const keys = new RankingKeys(PREFIX);
  await writeRows(redis, keys);
  await readRows(redis, keys);
  console.log('');
}

// ---------------------------------------------------------------- memory

type GrowthRow = [string, (limited: boolean) => Promise<unknown>];

/** Item increments and batches of 100, on existing items and on new ones; `ids` numbers the items. */
function boardGrowthRows(rows: {
  redis: Redis;
  plain: PreparedBoard;
  capped: PreparedBoard;
  ids: { n: number };
}): GrowthRow[] {
  const { redis, plain, capped, ids } = rows;
  const existing = () => `s${ids.n++ % 10_000}`;
  const fresh = () => `g${ids.n++}`;
  const batchOf = (id: () => string) => Array.from({ length: 100 }, () => ({ item: id(), amount: 1 }));
  const increment = (limited: boolean, item: string) =>
    callFunction(redis, S.increment, { ...growthOn(limited ? capped : plain, limited, 1), item, amount: 1 });
  const batch = (limited: boolean, id: () => string) =>
    callFunction(redis, S.incrementBatch, {
      ...growthOn(limited ? capped : plain, limited, 100),
      entries: batchOf(id),
    });
  return [
    ['item increment, existing item, 3 windows', (limited) => increment(limited, existing())],
    ['item increment, new item, 3 windows', (limited) => increment(limited, fresh())],
    ['batch of 100, existing items, 3 windows', (limited) => batch(limited, existing)],
    ['batch of 100, new items, 3 windows', (limited) => batch(limited, fresh)],
  ];
}

/** A counter increment over 1 000 counters, with the default precisions; `ids` numbers the counters. */
function counterGrowthRow(redis: Redis, ids: { n: number }): GrowthRow {
  return [
    'counter increment, existing counter, 7 precisions',
    (limited) => {
      const config = new AppConfig();
      return callFunction(redis, COUNTERS.functions.increment, {
        keys: new CounterKeys(PREFIX, config.COUNTER_INDEX_BUCKETS),
        name: `c${ids.n++ % 1000}`,
        precisionsSec: config.COUNTER_PRECISIONS.split(',').map(Number),
        samples: config.COUNTER_SAMPLES,
        nowMs: Date.now(),
        atSec: Math.floor(Date.now() / 1000),
        count: 1,
        newCounters: limited ? 1 : UNLIMITED,
        bucketCap: limited ? Math.ceil(config.MAX_COUNTERS / config.COUNTER_INDEX_BUCKETS) : 0,
      });
    },
  ];
}

/**
 * What the quotas on growth add inside Redis: each write once as it runs with no limit (no quota for
 * the client, a board without maxItems, no MAX_COUNTERS) and once with every check on (an allowance,
 * maxItems, a counter bucket cap), on existing entries and on new ones.
 */
export async function growthBench(redis: Redis): Promise<void> {
  console.log('## Quotas on growth: µs per call inside Redis, without and with the checks (64 calls in flight)\n');
  console.log('| write | no limits | quota + cap | with / without |');
  console.log('|---|---|---|---|');
  await loadLibraries(redis, [COUNTERS.library]);
  const keys = new RankingKeys(PREFIX);
  const plain = await makeBoard(redis, keys, 'growth-plain', 3);
  const capped = await makeBoard(redis, keys, 'growth-capped', 3, '24h', '1h', 1, 100_000_000);
  await seed(redis, plain, 10_000, Date.now());
  await seed(redis, capped, 10_000, Date.now());
  const micros = async (call: () => Promise<unknown>) => {
    await redis.config('RESETSTAT');
    await throughputOf(call);
    return scriptMicrosPerCall(redis);
  };
  const ids = { n: 0 };
  for (const [what, call] of [...boardGrowthRows({ redis, plain, capped, ids }), counterGrowthRow(redis, ids)]) {
    // ABBA order, each figure the mean of two runs: drift during the run weighs on both alike.
    const without1 = await micros(() => call(false));
    const with1 = await micros(() => call(true));
    const with2 = await micros(() => call(true));
    const without2 = await micros(() => call(false));
    const without = (without1 + without2) / 2;
    const withChecks = (with1 + with2) / 2;
    console.log(
      `| ${what} | ${without.toFixed(1)} | ${withChecks.toFixed(1)} | ${(withChecks / without).toFixed(2)} |`,
    );
  }
  console.log('');
}

/** A board write's arguments with the growth allowance a client with quota left would get (or none). */
function growthOn(board: PreparedBoard, limited: boolean, allowance: number): BoardCall & { newItems: number } {
  return { ...on(board, Date.now()), newItems: limited ? allowance : UNLIMITED };
}

export async function memoryBench(redis: Redis): Promise<void> {
  const keys = new RankingKeys(PREFIX);
  await redis.flushall();
  const before = Number((await redis.info('memory')).match(/used_memory:(\d+)/)?.[1]);
  const board = await makeBoard(redis, keys, 'mem', 1, '24h', '1h');
  const startMs = Math.floor(Date.now() / 3_600_000) * 3_600_000 - 23 * 3_600_000;
  for (let hour = 0; hour < 24; hour++) await seed(redis, board, 100_000, startMs + hour * 3_600_000);
  const after = Number((await redis.info('memory')).match(/used_memory:(\d+)/)?.[1]);
  const w = board.config.windows[0];
  const slotStart = (await redis.zrange(board.keys.slots(w.name), 0, 0))[0];
  const slotBytes = Number(await redis.memory('USAGE', board.keys.slot(w.name, Number(slotStart)), 'SAMPLES', 0));
  const topBytes = Number(await redis.memory('USAGE', board.keys.top(w.name), 'SAMPLES', 0));
  console.log('## Memory (100 000 items x 24 one-hour slots)\n');
  console.log('| what | bytes |');
  console.log('|---|---|');
  console.log(
    `| one slot hash (100 000 items), MEMORY USAGE | ${fmt(slotBytes)} (${(slotBytes / 100_000).toFixed(1)} per item and slot) |`,
  );
  console.log(
    `| results zset (100 000 items), MEMORY USAGE | ${fmt(topBytes)} (${(topBytes / 100_000).toFixed(1)} per item) |`,
  );
  console.log(
    `| whole board, INFO used_memory delta | ${fmt(after - before)} (${((after - before) / 2_400_000).toFixed(1)} per item and slot, all in) |\n`,
  );
}

/** Bytes Redis holds per stored idempotency key (36 characters, a UUID), all in: 100 000 keyed increments. */
export async function idempotencyMemoryBench(redis: Redis): Promise<void> {
  const keys = new RankingKeys(PREFIX);
  await redis.flushall();
  const board = await makeBoard(redis, keys, 'idem', 1, '24h', '1h');
  const count = 100_000;
  const before = Number((await redis.info('memory')).match(/used_memory:(\d+)/)?.[1]);
  const pending: Array<Promise<unknown>> = [];
  for (let i = 0; i < count; i++) {
    const idem = { key: randomUUID(), fingerprint: 'f'.repeat(16), retentionMs: 86_400_000 };
    pending.push(callFunction(redis, S.increment, { ...on(board, Date.now()), idem, item: 'one-item', amount: 1 }));
    if (pending.length >= 64) await Promise.all(pending.splice(0));
  }
  await Promise.all(pending);
  const after = Number((await redis.info('memory')).match(/used_memory:(\d+)/)?.[1]);
  let bucketBytes = 0;
  for (const key of await redis.keys(`{${PREFIX}board:idem}:idem:*`))
    bucketBytes += Number(await redis.memory('USAGE', key, 'SAMPLES', 0));
  console.log('## Retry-safe writes: memory per stored Idempotency-Key (100 000 keys of 36 characters, one item)\n');
  console.log('| what | bytes per key |');
  console.log('|---|---|');
  console.log(`| idempotency buckets, MEMORY USAGE | ${(bucketBytes / count).toFixed(1)} |`);
  console.log(`| INFO used_memory delta (all in) | ${((after - before) / count).toFixed(1)} |\n`);
}

// ---------------------------------------------------------------- expiry of a 1 000 000-field slot

/** Expire calls until the slot is drained: how many, the longest round trip and the whole time. */
async function drainSlot(redis: Redis, board: PreparedBoard, laterMs: number) {
  const startedMs = performance.now();
  let calls = 0;
  let longestRoundTripMs = 0;
  for (;;) {
    const callStart = performance.now();
    const { draining } = await callFunction(redis, S.expire, { ...on(board, laterMs), units: EXPIRE_UNITS });
    longestRoundTripMs = Math.max(longestRoundTripMs, performance.now() - callStart);
    calls++;
    if (!draining) break;
  }
  return { calls, longestRoundTripMs, totalMs: performance.now() - startedMs };
}

export async function expiryBench(redis: Redis): Promise<void> {
  const keys = new RankingKeys(PREFIX);
  await redis.flushall();
  const board = await makeBoard(redis, keys, 'drain', 1, '1h', '1h');
  const t0 = Math.floor(Date.now() / 3_600_000) * 3_600_000;
  await seed(redis, board, 1_000_000, t0);
  await redis.config('SET', 'slowlog-log-slower-than', '200'); // only whole script calls: inner commands take µs
  await redis.config('SET', 'slowlog-max-len', '100000');
  await redis.slowlog('RESET');
  const { calls, longestRoundTripMs, totalMs } = await drainSlot(redis, board, t0 + 3_600_000);
  const log = (await redis.slowlog('GET', 100_000)) as Array<[number, number, number, string[]]>;
  const scriptMicros = log.filter((entry) => isScriptCall(String(entry[3][0]))).map((entry) => entry[2]);
  await redis.config('SET', 'slowlog-log-slower-than', '10000');
  console.log(`## Expiry of one 1 000 000-field slot (EXPIRE_CHUNK ${EXPIRE_CHUNK}, the default)\n`);
  console.log('| what | figure |');
  console.log('|---|---|');
  console.log(`| script calls to drain it | ${calls} |`);
  console.log(`| total time | ${totalMs.toFixed(0)} ms |`);
  console.log(
    `| longest single call inside Redis (SLOWLOG) | ${(Math.max(0, ...scriptMicros) / 1000).toFixed(2)} ms |`,
  );
  console.log(`| calls over 5 ms inside Redis | ${scriptMicros.filter((us) => us > 5000).length} of ${calls} |`);
  console.log(`| median call inside Redis (of those over 0.2 ms) | ${(median(scriptMicros) / 1000).toFixed(2)} ms |`);
  console.log(`| longest round trip seen by the client | ${longestRoundTripMs.toFixed(2)} ms |`);
  console.log(
    `| results zset afterwards | ${await redis.zcard(board.keys.top(board.config.windows[0].name))} items |\n`,
  );
}

// ---------------------------------------------------------------- a local three-master Cluster

export async function clusterBench(): Promise<void> {
  const cluster = await startRedisCluster();
  const client = clusterClient(cluster.nodes);
  try {
    await client.connect();
    await loadLibraries(client, [RANKING.library]);
    const keys = new RankingKeys(PREFIX);
    const boards = await Promise.all(Array.from({ length: 6 }, (_, i) => makeBoard(client, keys, `c${i}`, 1)));
    const slotsOf = new Set(boards.map((b) => client.slots[calculateSlotOf(b.keys.cfg())]?.[0]));
    console.log('## Redis Cluster, three masters on this machine (increment script, 1 window, 64 calls in flight)\n');
    console.log('| boards written | calls/s |');
    console.log('|---|---|');
    for (const count of [1, 6]) {
      let n = 0;
      const perSec = await throughputOf(() => {
        const board = boards[n++ % count];
        return callFunction(client, S.increment, { ...on(board, Date.now()), item: `i${n % 10_000}`, amount: 1 });
      });
      console.log(`| ${count} (${count === 1 ? 'one node' : `spread over ${slotsOf.size} nodes`}) | ${fmt(perSec)} |`);
    }
    for (const shards of [3, 6]) {
      const sharded = await makeBoard(client, keys, `sharded${shards}`, 1, '24h', '1h', shards);
      const nodesOf = new Set(sharded.shards.map((shard) => client.slots[calculateSlotOf(shard.keys.cfg())]?.[0]));
      let n = 0;
      const perSec = await throughputOf(() => {
        const item = `i${n++ % 10_000}`;
        return callFunction(client, S.increment, { ...on(sharded, Date.now(), item), item, amount: 1 });
      });
      console.log(`| 1 board of ${shards} shards (spread over ${nodesOf.size} nodes) | ${fmt(perSec)} |`);
    }
    console.log('');
  } finally {
    client.disconnect();
    await cluster.stopServer();
  }
}

function calculateSlotOf(key: string): number {
  return calculateSlot(key);
}

/** The arguments every board script takes, on the shard of `item` (shard 0 without one). */
function on(board: PreparedBoard, nowMs: number, item?: string): BoardCall & { newItems: number } {
  const shard = item === undefined ? board.shards[0] : board.shardOf(item);
  return { board, shard, nowMs, budgetFields: EXPIRE_CHUNK, newItems: UNLIMITED };
}

/** `count` windows w0.. of `interval` slots, the nth `n + 1` times `period` long (durations as 1h, 24h). */
function windowsOf(count: number, period: string, interval: string) {
  const parse = (d: string) =>
    Number(d.slice(0, -1)) * ({ h: 3600, d: 86400, m: 60 } as Record<string, number>)[d.slice(-1)];
  return Array.from({ length: count }, (_, i) => ({
    name: `w${i}`,
    periodSec: parse(period) * (i + 1),
    intervalSec: parse(interval),
  }));
}

async function makeBoard(
  redis: Redis | Cluster,
  keys: RankingKeys,
  name: string,
  windowCount: number,
  period = '24h',
  interval = '1h',
  shards = 1,
  maxItems?: number,
): Promise<PreparedBoard> {
  const windows = windowsOf(windowCount, period, interval);
  const nowMs = Date.now();
  const reply = await callFunction(redis, S.boardPut, {
    keys: keys.board(name),
    windows,
    shards,
    maxItems,
    views: [],
    version: `v-${name}`,
    reset: false,
    nowMs,
  });
  if (reply.status === 'conflict') throw new Error(`board ${name}: ${reply.message}`);
  for (let shard = 1; shard < shards; shard++)
    await callFunction(redis, S.shardSync, { keys: keys.board(name, shard), ...reply, nowMs });
  return new PreparedBoard(
    {
      name,
      version: reply.version,
      shards,
      maxItems: reply.maxItems,
      windows: JSON.parse(reply.windowsJson),
      views: [],
    },
    (shard) => keys.board(name, shard),
  );
}

async function seed(redis: Redis, board: PreparedBoard, items: number, atMs: number): Promise<void> {
  const pending: Array<Promise<unknown>> = [];
  for (let first = 0; first < items; first += 1000) {
    const entries = Array.from({ length: Math.min(1000, items - first) }, (_, i) => ({
      item: `s${first + i}`,
      amount: 1 + ((first + i) % 1000),
    }));
    pending.push(callFunction(redis, S.incrementBatch, { ...on(board, atMs), entries }));
    if (pending.length >= 16) await Promise.all(pending.splice(0));
  }
  await Promise.all(pending);
}

/** Mean time Redis spent inside one FCALL since the last CONFIG RESETSTAT (INFO commandstats). */
async function scriptMicrosPerCall(redis: Redis): Promise<number> {
  const stats = await redis.info('commandstats');
  return Number(/cmdstat_fcall:calls=\d+,usec=\d+,usec_per_call=([\d.]+)/.exec(stats)?.[1] ?? NaN);
}

/** Calls per second of `call`, 64 in flight, over half a run (at least 1 s). */
function throughputOf(call: () => Promise<unknown>): Promise<number> {
  return throughput(call, Math.max(1, DURATION_SEC / 2));
}
