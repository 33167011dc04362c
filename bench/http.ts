/**
 * The `http` part of `npm run bench`: the service (dist/main.js, as `npm start` runs it) and the bare floor
 * server (bench/bare-server.ts) on the runner's shared redis-server, every route under autocannon at 50
 * connections, paired runs of the two servers; then retry-safe increments and a board of 4 shards on the
 * service alone. BENCH_SKIP=routes, idempotent or sharded leaves one of the three out.
 */
import { readFileSync } from 'node:fs';
import type Redis from 'ioredis';
import { stopChild } from '../harness/processes';
import { cannon, fmt, medianOf, pairedRatio, RunFigures, summarize } from './load';
import type { BenchContext } from './parts/part';
import { startBareServer, startService, waitForHttp } from './process-stats';
import { PREFIX } from './redis-parts';

/** An unrecorded run before each route's measured runs, per server: JIT and caches warm, both servers alike. */
const WARMUP_SEC = 1;
const ADMIN_TOKEN = 'bench-admin-token-0123456789';
const SEEDED_ITEMS = 10_000;

interface Route {
  name: string;
  method: 'GET' | 'POST';
  path: string;
  body?: string;
  /** Item increments a request carries (a batch's entries). */
  items?: number;
}

const BATCH = JSON.stringify({ items: Array.from({ length: 100 }, (_, i) => ({ item: `batch-${i}`, amount: 1 })) });
const ROUTES: Route[] = [
  { name: 'increment', method: 'POST', path: '/boards/bench/items/item-[<id>]/increment', body: '{"amount":1}' },
  { name: 'batch increment (100 items)', method: 'POST', path: '/boards/bench/increments', body: BATCH, items: 100 },
  { name: 'top-10', method: 'GET', path: '/boards/bench/top?limit=10' },
  { name: 'item rank', method: 'GET', path: '/boards/bench/items/seed-4242' },
  { name: 'around', method: 'GET', path: '/boards/bench/items/seed-4242/around' },
  { name: 'counter increment', method: 'POST', path: '/counters/hits:home/increment', body: '{"count":1}' },
  { name: 'stats record', method: 'POST', path: '/stats/ProfilePage/Load', body: '{"value":0.42}' },
];

export async function httpBench(context: BenchContext): Promise<void> {
  const { url: redisUrl, redis } = await context.sharedRedis();
  const service = await startService({
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
  try {
    await waitForHttp(`${service.url}/health/ready`);
    await createSeededBoard(service.url, 'bench', { windows: [{ period: '24h', interval: '1h' }] });
    if (!context.skip.has('routes')) await routesAgainstFloor(context, redis, service);
    if (!context.skip.has('idempotent')) await idempotentHttpBench(context, service.url, service.child.pid);
    if (!context.skip.has('sharded')) await shardedHttpBench(context, service.url);
  } finally {
    await stopChild(service.child);
  }
}

/** Every route, service against the floor server, paired runs; the service's peak RSS and the board's size. */
async function routesAgainstFloor(
  context: BenchContext,
  redis: Redis,
  service: Awaited<ReturnType<typeof startService>>,
): Promise<void> {
  const bare = await startBareServer({
    REDIS_URL: (await context.sharedRedis()).url,
    KEY_PREFIX: PREFIX,
    BOARD: 'bench',
  });
  try {
    console.log('## HTTP (autocannon, 50 connections)\n');
    console.log(
      '| route | service req/s best / median | bare req/s best / median | ratio (median of paired runs) | service p50 / p99 ms | bare p50 / p99 ms | CPU µs per request, service / bare | item increments/s (service) |',
    );
    console.log('|---|---|---|---|---|---|---|---|');
    let peakRssMb = 0;
    for (const route of ROUTES)
      peakRssMb = Math.max(peakRssMb, await routeRow(context.repeats, route, service, bare.url, bare.child.pid));
    const items = await redis.zcard(`{${PREFIX}board:bench}:24h:top`);
    console.log(
      `\nService RSS under load (peak seen): ${peakRssMb.toFixed(0)} MB; board size after the runs: ${items.toLocaleString('en')} items\n`,
    );
  } finally {
    await stopChild(bare.child);
  }
}

/** One route's warm-up and paired runs, printed as a table row; answers the service's peak RSS in MB. */
async function routeRow(
  repeats: number,
  route: Route,
  service: Awaited<ReturnType<typeof startService>>,
  bareUrl: string,
  barePid: number | undefined,
): Promise<number> {
  const serviceRuns: RunFigures[] = [];
  const bareRuns: RunFigures[] = [];
  let peakRssMb = 0;
  await cannon(service.url, route, undefined, WARMUP_SEC);
  await cannon(bareUrl, route, undefined, WARMUP_SEC);
  for (let r = 0; r < repeats; r++) {
    serviceRuns.push(await cannon(service.url, route, service.child.pid));
    peakRssMb = Math.max(peakRssMb, rssMb(service.child.pid));
    bareRuns.push(await cannon(bareUrl, route, barePid));
  }
  const s = summarize(serviceRuns);
  const b = summarize(bareRuns);
  const perItem = route.items ? `${Math.round(s.median.reqPerSec * route.items).toLocaleString('en')}` : '';
  const cpu = (runs: RunFigures[]) => medianOf(runs, (x) => x.cpuMicrosPerRequest).toFixed(0);
  console.log(
    `| ${route.name} | ${fmt(s.best.reqPerSec)} / ${fmt(s.median.reqPerSec)} | ${fmt(b.best.reqPerSec)} / ${fmt(b.median.reqPerSec)} | ${pairedRatio(serviceRuns, bareRuns).toFixed(2)} | ${s.median.p50} / ${s.median.p99} | ${b.median.p50} / ${b.median.p99} | ${cpu(serviceRuns)} / ${cpu(bareRuns)} | ${perItem} |`,
  );
  if (serviceRuns.some((x) => x.non2xx > 0) || bareRuns.some((x) => x.non2xx > 0))
    console.log(
      `\n(non-2xx answers during ${route.name}: service ${serviceRuns.map((x) => x.non2xx)}, bare ${bareRuns.map((x) => x.non2xx)})\n`,
    );
  return peakRssMb;
}

/** Increments with a fresh Idempotency-Key each against increments without one, paired runs of the same service. */
async function idempotentHttpBench(
  context: BenchContext,
  serviceUrl: string,
  servicePid: number | undefined,
): Promise<void> {
  const plain = { method: 'POST' as const, path: '/boards/bench/items/item-[<id>]/increment', body: '{"amount":1}' };
  const keyed = { ...plain, idempotencyKeys: true };
  const plainRuns: RunFigures[] = [];
  const keyedRuns: RunFigures[] = [];
  await cannon(serviceUrl, keyed, undefined, WARMUP_SEC);
  for (let r = 0; r < context.repeats; r++) {
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
async function shardedHttpBench(context: BenchContext, serviceUrl: string): Promise<void> {
  await createSeededBoard(serviceUrl, 'sharded', { windows: [{ period: '24h', interval: '1h' }], shards: 4 });
  const routes: Route[] = [
    { name: 'increment', method: 'POST', path: '/boards/sharded/items/item-[<id>]/increment', body: '{"amount":1}' },
    { name: 'top-10', method: 'GET', path: '/boards/sharded/top?limit=10' },
    { name: 'item rank', method: 'GET', path: '/boards/sharded/items/seed-4242' },
    { name: 'around', method: 'GET', path: '/boards/sharded/items/seed-4242/around' },
  ];
  console.log('## HTTP on a board of 4 shards (service only; compare with the service column above)\n');
  console.log('| route | req/s best / median | p50 / p99 ms |');
  console.log('|---|---|---|');
  for (const route of routes) {
    const runs: RunFigures[] = [];
    await cannon(serviceUrl, route, undefined, WARMUP_SEC);
    for (let r = 0; r < context.repeats; r++) runs.push(await cannon(serviceUrl, route, undefined));
    const { best, median } = summarize(runs);
    console.log(
      `| ${route.name} | ${fmt(best.reqPerSec)} / ${fmt(median.reqPerSec)} | ${median.p50} / ${median.p99} |`,
    );
    if (runs.some((x) => x.non2xx > 0))
      console.log(`\n(non-2xx answers during ${route.name}: ${runs.map((x) => x.non2xx)})\n`);
  }
  console.log('');
}

/** Creates a board through the service and fills it with 10 000 seeded items (seed-0 ... seed-9999). */
async function createSeededBoard(serviceUrl: string, name: string, config: object): Promise<void> {
  const put = await fetch(`${serviceUrl}/admin/boards/${name}`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(config),
  });
  if (put.status !== 201) throw new Error(`creating the bench board ${name} failed: ${put.status}`);
  for (let from = 0; from < SEEDED_ITEMS; from += 1000) {
    const items = Array.from({ length: 1000 }, (_, j) => ({ item: `seed-${from + j}`, amount: 1 + ((from + j) % 97) }));
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
