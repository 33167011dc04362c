/**
 * `npm run bench`: starts a private redis-server, the service (dist/main.js, as `npm start` runs it)
 * and the bare floor server (bench/bare-server.ts) on free ports, measures, prints markdown tables,
 * and stops everything. Knobs: BENCH_DURATION_SEC (default 5), BENCH_REPEATS (default 5),
 * BENCH_SKIP=http,redis,functions,trending,signals,shards,worst,growth,memory,expiry,history,cluster,coalescing,idle,masters,stream,leagues,competition
 * to leave parts out; the leagues rollover's size: LEAGUE_BENCH_PLAYERS (default 10⁶) and the knobs of
 * bench/league-rollover.ts.
 */
import { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import Redis from 'ioredis';
import { stopChild } from '../harness/processes';
import { RANKING } from '../src/ranking/ranking.functions';
import { loadLibraries } from '../src/redis/functions';
import { AppConfig } from '../src/common/config';
import { coalescingBench } from './coalescing';
import { competitionOptionsBench } from './competition-options';
import { functionsFixedCostBench } from './functions';
import { functionsRankingBench } from './functions-ranking';
import { idleBoardsBench } from './idle-boards';
import { leagueRolloverBench } from './league-rollover';
import { mastersBench } from './masters';
import { startBareServer, startRedisServer, startService, waitForHttp } from './process-stats';
import { cannon, DURATION_SEC, fmt, medianOf, pairedRatio, RunFigures, summarize } from './load';
import {
  clusterBench,
  expiryBench,
  growthBench,
  idempotencyMemoryBench,
  memoryBench,
  PREFIX,
  redisBench,
} from './redis-parts';
import { shardedCostBench } from './sharded-cost';
import { trendingBench } from './trending';
import { signalsShardedBench } from './signals-sharded';
import { worstRequestsBench } from './worst-requests';
import { historyMemoryBench, streamBench } from './history';

const REPEATS = Number(process.env.BENCH_REPEATS ?? 5);
/** An unrecorded run before each route's measured runs, per server: JIT and caches warm, both servers alike. */
const WARMUP_SEC = 1;
const SKIP = new Set((process.env.BENCH_SKIP ?? '').split(',').filter(Boolean));
const ADMIN_TOKEN = 'bench-admin-token-0123456789';
const EXPIRE_CHUNK = new AppConfig().EXPIRE_CHUNK;
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
  if (!SKIP.has('signals')) await signalsShardedBench(REPEATS, Math.max(1, DURATION_SEC / 2));
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
  if (!SKIP.has('masters')) await mastersBench();
  if (!SKIP.has('stream')) await streamBench();
  // Issue #48: the rollover of 10⁶ players' leagues, on a redis-server of its own.
  if (!SKIP.has('leagues')) await leagueRolloverBench();
  // Issue #48: a write and a read of each competition option against a plain board's, on a redis-server of its own.
  if (!SKIP.has('competition')) await competitionOptionsBench();
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
