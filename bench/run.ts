/**
 * `npm run bench`: starts a private redis-server, the service (dist/main.js, as `npm start` runs it)
 * and the bare floor server (bench/bare-server.ts) on free ports, measures, prints markdown tables,
 * and stops everything. Knobs: BENCH_DURATION_SEC (default 5), BENCH_REPEATS (default 5),
 * BENCH_SKIP=http,redis,functions,trending,shards,worst,growth,memory,expiry,history,cluster,coalescing,idle,stream to leave
 * parts out.
 */
import calculateSlot from 'cluster-key-slot';
import { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import Redis, { Cluster } from 'ioredis';
import { clusterClient, startRedisCluster } from '../test/support/cluster';
import { stopChild } from '../test/support/processes';
import { PreparedBoard } from '../src/ranking/core/board';
import { RANKING } from '../src/ranking/ranking.functions';
import { RankingKeys } from '../src/ranking/core/ranking.keys';
import { BoardCall } from '../src/ranking/core/script-call';
import { callFunction, loadLibraries } from '../src/redis/functions';
import { AppConfig } from '../src/common/config';
import { coalescingBench } from './coalescing';
import { functionsFixedCostBench } from './functions';
import { functionsRankingBench } from './functions-ranking';
import { idleBoardsBench } from './idle-boards';
import { startBareServer, startRedisServer, startService, waitForHttp } from './process-stats';
import { cannon, DURATION_SEC, fmt, median, medianOf, pairedRatio, RunFigures, summarize, throughput } from './load';
import { shardedCostBench } from './sharded-cost';
import { trendingBench } from './trending';
import { worstRequestsBench } from './worst-requests';
import { historyMemoryBench, streamBench } from './history';
import { UNLIMITED } from '../src/governance/growth-quota';
import { CounterKeys } from '../src/counters/counter-keys';
import { COUNTERS } from '../src/counters/counters.functions';

const S = RANKING.functions;

const REPEATS = Number(process.env.BENCH_REPEATS ?? 5);
/** An unrecorded run before each route's measured runs, per server: JIT and caches warm, both servers alike. */
const WARMUP_SEC = 1;
const SKIP = new Set((process.env.BENCH_SKIP ?? '').split(',').filter(Boolean));
const ADMIN_TOKEN = 'bench-admin-token-0123456789';
const EXPIRE_CHUNK = new AppConfig().EXPIRE_CHUNK;
const PREFIX = 'bench:';
const children: ChildProcess[] = [];

async function main(): Promise<void> {
  const redisServer = await startRedisServer();
  children.push(redisServer.child);
  const redisUrl = redisServer.url;
  // A plain client: in this tight loop auto-pipelining makes the client the bottleneck (about a third
  // fewer calls/s, see docs/benchmarks.md); the 'inside Redis' column does not depend on the client.
  const redis = new Redis(redisUrl);
  await loadLibraries(redis, [RANKING.library]);

  console.log(`# trendboard benchmarks\n`);
  console.log(
    `Machine: ${cpus()[0].model}, ${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB; Node ${process.version}; ${(await redis.info('server')).match(/redis_version:(\S+)/)?.[1]} Redis`,
  );
  console.log(`Date: ${new Date().toISOString()}; ${DURATION_SEC} s per run, ${REPEATS} runs each (best / median)\n`);

  if (!SKIP.has('http')) await httpBench(redisUrl, redis);
  if (!SKIP.has('redis')) await redisBench(redis);
  // Issue #23's Redis targets: each on a redis-server of its own.
  if (!SKIP.has('functions')) {
    await functionsRankingBench();
    await functionsFixedCostBench();
  }
  if (!SKIP.has('trending')) await trendingBench(redisUrl, REPEATS, Math.max(1, DURATION_SEC / 2));
  if (!SKIP.has('shards')) await shardedCostBench(redisUrl, REPEATS);
  if (!SKIP.has('worst')) await worstRequestsBench(redisUrl);
  if (!SKIP.has('growth')) await growthBench(redis);
  if (!SKIP.has('memory')) await memoryBench(redis);
  if (!SKIP.has('idempotency')) await idempotencyMemoryBench(redis);
  if (!SKIP.has('expiry')) await expiryBench(redis);
  if (!SKIP.has('history')) await historyMemoryBench(redis, EXPIRE_CHUNK);
  redis.disconnect();
  if (!SKIP.has('cluster')) await clusterBench();
  if (!SKIP.has('coalescing')) await coalescingBench(REPEATS);
  if (!SKIP.has('idle')) await idleBoardsBench();
  if (!SKIP.has('stream')) await streamBench();
}

// ---------------------------------------------------------------- HTTP: service vs bare floor

async function httpBench(redisUrl: string, redis: Redis): Promise<void> {
  const { child: service, url: serviceUrl } = await startService({
    REDIS_URL: redisUrl,
    KEY_PREFIX: PREFIX,
    ADMIN_TOKEN,
    LOG_LEVEL: 'warn',
    RATE_LIMIT_PER_SEC: '0',
    // One load generator stands for many clients: quotas on growth would refuse its new items.
    QUOTA_NEW_ITEMS: '0',
    QUOTA_NEW_LIKE_USERS: '0',
    QUOTA_NEW_COUNTERS: '0',
    QUOTA_NEW_STATS_PAIRS: '0',
  });
  children.push(service);
  await waitForHttp(`${serviceUrl}/health/ready`);
  await createSeededBoard(serviceUrl, 'bench', { windows: [{ period: '24h', interval: '1h' }] });

  const { child: bare, url: bareUrl } = await startBareServer({
    REDIS_URL: redisUrl,
    KEY_PREFIX: PREFIX,
    BOARD: 'bench',
  });
  children.push(bare);

  const batch = JSON.stringify({ items: Array.from({ length: 100 }, (_, i) => ({ item: `batch-${i}`, amount: 1 })) });
  const routes: Array<{ name: string; method: 'GET' | 'POST'; path: string; body?: string; items?: number }> = [
    { name: 'increment', method: 'POST', path: '/boards/bench/items/item-[<id>]/increment', body: '{"amount":1}' },
    { name: 'batch increment (100 items)', method: 'POST', path: '/boards/bench/increments', body: batch, items: 100 },
    { name: 'top-10', method: 'GET', path: '/boards/bench/top?limit=10' },
    { name: 'item rank', method: 'GET', path: '/boards/bench/items/seed-4242' },
    { name: 'around', method: 'GET', path: '/boards/bench/items/seed-4242/around' },
    { name: 'counter increment', method: 'POST', path: '/counters/hits:home/increment', body: '{"count":1}' },
    { name: 'stats record', method: 'POST', path: '/stats/ProfilePage/Load', body: '{"value":0.42}' },
  ];
  console.log('## HTTP (autocannon, 50 connections)\n');
  console.log(
    '| route | service req/s best / median | bare req/s best / median | ratio (median of paired runs) | service p50 / p99 ms | bare p50 / p99 ms | CPU µs per request, service / bare | item increments/s (service) |',
  );
  console.log('|---|---|---|---|---|---|---|---|');
  let peakRssMb = 0;
  for (const route of SKIP.has('routes') ? [] : routes) {
    const serviceRuns: RunFigures[] = [];
    const bareRuns: RunFigures[] = [];
    await cannon(serviceUrl, route, undefined, WARMUP_SEC);
    await cannon(bareUrl, route, undefined, WARMUP_SEC);
    for (let r = 0; r < REPEATS; r++) {
      serviceRuns.push(await cannon(serviceUrl, route, service.pid));
      peakRssMb = Math.max(peakRssMb, rssMb(service.pid));
      bareRuns.push(await cannon(bareUrl, route, bare.pid));
    }
    const s = summarize(serviceRuns);
    const b = summarize(bareRuns);
    const perItem = route.items ? `${Math.round(s.median.reqPerSec * route.items).toLocaleString('en')}` : '';
    console.log(
      `| ${route.name} | ${fmt(s.best.reqPerSec)} / ${fmt(s.median.reqPerSec)} | ${fmt(b.best.reqPerSec)} / ${fmt(b.median.reqPerSec)} | ${pairedRatio(serviceRuns, bareRuns).toFixed(2)} | ${s.median.p50} / ${s.median.p99} | ${b.median.p50} / ${b.median.p99} | ${medianOf(serviceRuns, (x) => x.cpuMicrosPerRequest).toFixed(0)} / ${medianOf(bareRuns, (x) => x.cpuMicrosPerRequest).toFixed(0)} | ${perItem} |`,
    );
    if (serviceRuns.some((x) => x.non2xx > 0) || bareRuns.some((x) => x.non2xx > 0))
      console.log(
        `\n(non-2xx answers during ${route.name}: service ${serviceRuns.map((x) => x.non2xx)}, bare ${bareRuns.map((x) => x.non2xx)})\n`,
      );
  }
  console.log(
    `\nService RSS under load (peak seen): ${peakRssMb.toFixed(0)} MB; board size after the runs: ${(await redis.zcard(`{${PREFIX}board:bench}:24h:top`)).toLocaleString('en')} items\n`,
  );
  if (!SKIP.has('idempotent')) await idempotentHttpBench(serviceUrl, service.pid);
  if (!SKIP.has('sharded')) await shardedHttpBench(serviceUrl);
  await stopChild(bare);
  await stopChild(service);
}

/** Increments with a fresh Idempotency-Key each against increments without one, paired runs of the same service. */
async function idempotentHttpBench(serviceUrl: string, servicePid: number | undefined): Promise<void> {
  const plain = { method: 'POST' as const, path: '/boards/bench/items/item-[<id>]/increment', body: '{"amount":1}' };
  const keyed = { ...plain, idempotencyKeys: true };
  const plainRuns: RunFigures[] = [];
  const keyedRuns: RunFigures[] = [];
  await cannon(serviceUrl, keyed, undefined, WARMUP_SEC);
  for (let r = 0; r < REPEATS; r++) {
    plainRuns.push(await cannon(serviceUrl, plain, servicePid));
    keyedRuns.push(await cannon(serviceUrl, keyed, servicePid));
  }
  const p = summarize(plainRuns).median;
  const k = summarize(keyedRuns).median;
  console.log('## Retry-safe increments (a fresh 36-character Idempotency-Key per request)\n');
  console.log('| increment | req/s median | p50 / p99 ms | CPU µs per request (service) |');
  console.log('|---|---|---|---|');
  console.log(`| without a key | ${fmt(p.reqPerSec)} | ${p.p50} / ${p.p99} | ${p.cpuMicrosPerRequest.toFixed(0)} |`);
  console.log(`| with a key | ${fmt(k.reqPerSec)} | ${k.p50} / ${k.p99} | ${k.cpuMicrosPerRequest.toFixed(0)} |`);
  console.log(`\nWith a key / without, median of paired runs: ${pairedRatio(keyedRuns, plainRuns).toFixed(2)}\n`);
}

/** The same service routes on a board of 4 shards (the floor server has no sharding: service only). */
async function shardedHttpBench(serviceUrl: string): Promise<void> {
  await createSeededBoard(serviceUrl, 'sharded', { windows: [{ period: '24h', interval: '1h' }], shards: 4 });
  const routes = [
    {
      name: 'increment',
      method: 'POST' as const,
      path: '/boards/sharded/items/item-[<id>]/increment',
      body: '{"amount":1}',
    },
    { name: 'top-10', method: 'GET' as const, path: '/boards/sharded/top?limit=10' },
    { name: 'item rank', method: 'GET' as const, path: '/boards/sharded/items/seed-4242' },
    { name: 'around', method: 'GET' as const, path: '/boards/sharded/items/seed-4242/around' },
  ];
  console.log('## HTTP on a board of 4 shards (service only; compare with the service column above)\n');
  console.log('| route | req/s best / median | p50 / p99 ms |');
  console.log('|---|---|---|');
  for (const route of routes) {
    const runs: RunFigures[] = [];
    await cannon(serviceUrl, route, undefined, WARMUP_SEC);
    for (let r = 0; r < REPEATS; r++) runs.push(await cannon(serviceUrl, route, undefined));
    const { best, median } = summarize(runs);
    console.log(
      `| ${route.name} | ${fmt(best.reqPerSec)} / ${fmt(median.reqPerSec)} | ${median.p50} / ${median.p99} |`,
    );
    if (runs.some((x) => x.non2xx > 0))
      console.log(`\n(non-2xx answers during ${route.name}: ${runs.map((x) => x.non2xx)})\n`);
  }
  console.log('');
}

// ---------------------------------------------------------------- Redis level

async function redisBench(redis: Redis): Promise<void> {
  console.log('## Redis level (ioredis, 64 calls in flight, no HTTP)\n');
  console.log('| what | calls/s | item increments/s | µs per call inside Redis |');
  console.log('|---|---|---|---|');
  const keys = new RankingKeys(PREFIX);
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
  console.log('');
}

// ---------------------------------------------------------------- memory

/**
 * What the quotas on growth add inside Redis: each write once as it runs with no limit (no quota for
 * the client, a board without maxItems, no MAX_COUNTERS) and once with every check on (an allowance,
 * maxItems, a counter bucket cap), on existing entries and on new ones.
 */
async function growthBench(redis: Redis): Promise<void> {
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
  let n = 0;
  const existing = () => `s${n++ % 10_000}`;
  const fresh = () => `g${n++}`;
  const batchOf = (id: () => string) => Array.from({ length: 100 }, () => ({ item: id(), amount: 1 }));
  const rows: Array<[string, (limited: boolean) => Promise<unknown>]> = [
    [
      'item increment, existing item, 3 windows',
      (limited) =>
        callFunction(redis, S.increment, {
          ...growthOn(limited ? capped : plain, limited, 1),
          item: existing(),
          amount: 1,
        }),
    ],
    [
      'item increment, new item, 3 windows',
      (limited) =>
        callFunction(redis, S.increment, {
          ...growthOn(limited ? capped : plain, limited, 1),
          item: fresh(),
          amount: 1,
        }),
    ],
    [
      'batch of 100, existing items, 3 windows',
      (limited) =>
        callFunction(redis, S.incrementBatch, {
          ...growthOn(limited ? capped : plain, limited, 100),
          entries: batchOf(existing),
        }),
    ],
    [
      'batch of 100, new items, 3 windows',
      (limited) =>
        callFunction(redis, S.incrementBatch, {
          ...growthOn(limited ? capped : plain, limited, 100),
          entries: batchOf(fresh),
        }),
    ],
    [
      'counter increment, existing counter, 7 precisions',
      (limited) => {
        const config = new AppConfig();
        return callFunction(redis, COUNTERS.functions.increment, {
          keys: new CounterKeys(PREFIX, config.COUNTER_INDEX_BUCKETS),
          name: `c${n++ % 1000}`,
          precisionsSec: config.COUNTER_PRECISIONS.split(',').map(Number),
          samples: config.COUNTER_SAMPLES,
          nowMs: Date.now(),
          atSec: Math.floor(Date.now() / 1000),
          count: 1,
          newCounters: limited ? 1 : UNLIMITED,
          bucketCap: limited ? Math.ceil(config.MAX_COUNTERS / config.COUNTER_INDEX_BUCKETS) : 0,
        });
      },
    ],
  ];
  for (const [what, call] of rows) {
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

async function memoryBench(redis: Redis): Promise<void> {
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
async function idempotencyMemoryBench(redis: Redis): Promise<void> {
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

async function expiryBench(redis: Redis): Promise<void> {
  const keys = new RankingKeys(PREFIX);
  await redis.flushall();
  const board = await makeBoard(redis, keys, 'drain', 1, '1h', '1h');
  const t0 = Math.floor(Date.now() / 3_600_000) * 3_600_000;
  await seed(redis, board, 1_000_000, t0);
  await redis.config('SET', 'slowlog-log-slower-than', '200'); // only whole script calls: inner commands take µs
  await redis.config('SET', 'slowlog-max-len', '100000');
  await redis.slowlog('RESET');
  const later = t0 + 3_600_000;
  const startedMs = performance.now();
  let calls = 0;
  let longestRoundTripMs = 0;
  for (;;) {
    const callStart = performance.now();
    const { draining } = await callFunction(redis, S.expire, on(board, later));
    longestRoundTripMs = Math.max(longestRoundTripMs, performance.now() - callStart);
    calls++;
    if (!draining) break;
  }
  const totalMs = performance.now() - startedMs;
  const log = (await redis.slowlog('GET', 100_000)) as Array<[number, number, number, string[]]>;
  const scriptMicros = log
    .filter((entry) => String(entry[3][0]).toLowerCase().startsWith('eval'))
    .map((entry) => entry[2]);
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

async function clusterBench(): Promise<void> {
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

// ---------------------------------------------------------------- helpers

/** Creates a board through the service and fills it with 10 000 seeded items (seed-0 ... seed-9999). */
async function createSeededBoard(serviceUrl: string, name: string, config: object): Promise<void> {
  const put = await fetch(`${serviceUrl}/admin/boards/${name}`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(config),
  });
  if (put.status !== 201) throw new Error(`creating the bench board ${name} failed: ${put.status}`);
  for (let i = 0; i < 10; i++) {
    const items = Array.from({ length: 1000 }, (_, j) => ({
      item: `seed-${i * 1000 + j}`,
      amount: 1 + ((i * 1000 + j) % 97),
    }));
    await fetch(`${serviceUrl}/boards/${name}/increments`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ items }),
    });
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
  const parse = (d: string) =>
    Number(d.slice(0, -1)) * ({ h: 3600, d: 86400, m: 60 } as Record<string, number>)[d.slice(-1)];
  const windows = Array.from({ length: windowCount }, (_, i) => ({
    name: `w${i}`,
    periodSec: parse(period) * (i + 1),
    intervalSec: parse(interval),
  }));
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

function rssMb(pid: number | undefined): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    return Number(status.match(/VmRSS:\s+(\d+)/)?.[1] ?? 0) / 1024;
  } catch {
    return 0;
  }
}

main()
  .catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  })
  .finally(async () => {
    await Promise.all(children.map(stopChild));
    // Clients left open by a failure (reconnecting to a stopped server) must not keep the bench alive.
    process.exit();
  });
