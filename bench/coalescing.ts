/**
 * Write coalescing (BENCH_SKIP=coalescing leaves it out). A private redis-server; service instances
 * (dist/main.js) with WRITE_COALESCE_MS=0 and =1; the bare floor server's hand-rolled one-window
 * script (bench/minimal-increment.lua). At 50 and 200 connections, item increments of one of 10 000
 * items at random against one board: req/s, latency, and what Redis spent per acknowledged increment, its CPU time
 * from /proc and its script calls from INFO commandstats. Then, with no HTTP, the increments per
 * second one Redis node applies when each script call carries 1, 10, 50 or 100 of them.
 */
import { ChildProcess } from 'node:child_process';
import Redis from 'ioredis';
import { PreparedBoard } from '../src/ranking/core/board';
import { RankingKeys } from '../src/ranking/core/ranking.keys';
import { RANKING } from '../src/ranking/ranking.functions';
import { UNLIMITED } from '../src/governance/growth-quota';
import { loadLibraries } from '../src/redis/functions';
import { callFunction } from '../src/redis/redis-functions';
import { stopChild } from '../harness/processes';
import { cannon, DURATION_SEC, fmt, median, RunFigures } from './load';
import { storedBoard } from './plain-boards';
import { cpuSeconds, startBareServer, startRedisServer, startService, waitForHttp } from './process-stats';

const S = RANKING.functions;

const ADMIN_TOKEN = 'bench-admin-token-0123456789';
const PREFIX = 'coal:';
const BOARD = 'coal';
/** Items the board holds before the runs; each request increments one of them at random. */
const ITEMS = 10_000;
const INCREMENT = { method: 'POST' as const, body: '{"amount":1}', randomItems: ITEMS };

interface Target {
  name: string;
  urls: string[];
  pids: Array<number | undefined>;
  path: string;
}

interface Figures {
  run: RunFigures;
  redisMicrosPerIncrement: number;
  callsPerIncrement: number;
  serverMicrosPerRequest: number;
}

/** A service instance on the shared redis-server with the given coalescing delay, ready to answer. */
async function startInstance(run: { redisUrl: string; children: ChildProcess[]; coalesceMs: number }) {
  const { child, url } = await startService({
    REDIS_URL: run.redisUrl,
    KEY_PREFIX: PREFIX,
    ADMIN_TOKEN,
    LOG_LEVEL: 'warn',
    RATE_LIMIT_PER_SEC: '0',
    QUOTA_NEW_ITEMS: '0',
    WRITE_COALESCE_MS: String(run.coalesceMs),
  });
  run.children.push(child);
  await waitForHttp(`${url}/health/ready`);
  return { url, pid: child.pid };
}

/** The board of one day window, seeded with ITEMS items through the service, 1 000 per batch. */
async function seedBoard(url: string): Promise<void> {
  const put = await fetch(`${url}/admin/boards/${BOARD}`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ windows: [{ period: '24h', interval: '1h' }] }),
  });
  if (put.status !== 201) throw new Error(`creating the coalescing board failed: ${put.status}`);
  for (let first = 0; first < ITEMS; first += 1000) {
    const items = Array.from({ length: 1000 }, (_, i) => ({ item: `seed-${first + i}`, amount: 1 }));
    const seeded = await fetch(`${url}/boards/${BOARD}/increments`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ items }),
    });
    if (seeded.status !== 200) throw new Error(`seeding the coalescing board failed: ${seeded.status}`);
  }
}

type Instance = { url: string; pid: number | undefined };

/** Coalescing off, on with one instance, on with two, and the bare floor's minimal script. */
function targetsOf(servers: { off: Instance; on: Instance[]; bare: Instance }): Target[] {
  const { off, on, bare } = servers;
  const itemPath = `/boards/${BOARD}/items/[<item>]/increment`;
  return [
    { name: 'service, coalescing off (1 instance)', urls: [off.url], pids: [off.pid], path: itemPath },
    { name: 'service, coalescing 1 ms (1 instance)', urls: [on[0].url], pids: [on[0].pid], path: itemPath },
    {
      name: 'service, coalescing 1 ms (2 instances)',
      urls: on.map((o) => o.url),
      pids: on.map((o) => o.pid),
      path: itemPath,
    },
    {
      name: 'bare floor: minimal one-window script',
      urls: [bare.url],
      pids: [bare.pid],
      path: '/minimal/[<item>]/increment',
    },
  ];
}

/** The table: each target at 50 and 200 connections, a warm-up then the median of `repeats` runs. */
async function loadTable(run: { targets: Target[]; repeats: number; redis: Redis; redisPid: number | undefined }) {
  const { targets, repeats, redis, redisPid } = run;
  console.log(
    `## Write coalescing: item increments over HTTP (autocannon, one of ${ITEMS.toLocaleString('en')} items at random per request)\n`,
  );
  console.log(
    '| connections | server | req/s median | p50 / p99 ms | Redis CPU µs per increment | script calls per increment | server CPU µs per request |',
  );
  console.log('|---|---|---|---|---|---|---|');
  const medians = new Map<string, Figures>();
  for (const connections of [50, 200]) {
    for (const target of targets) {
      await load(target, connections, 1, redis, redisPid);
      const runs: Figures[] = [];
      for (let r = 0; r < repeats; r++) runs.push(await load(target, connections, DURATION_SEC, redis, redisPid));
      const m = medianFigures(runs);
      medians.set(`${connections} ${target.name}`, m);
      console.log(
        `| ${connections} | ${target.name} | ${fmt(m.run.reqPerSec)} | ${m.run.p50} / ${m.run.p99} | ${m.redisMicrosPerIncrement.toFixed(1)} | ${m.callsPerIncrement.toFixed(3)} | ${m.serverMicrosPerRequest.toFixed(0)} |`,
      );
      if (runs.some((x) => x.run.non2xx > 0)) console.log(`\n(non-2xx answers: ${runs.map((x) => x.run.non2xx)})\n`);
    }
  }
  console.log('');
  return medians;
}

/** Per connection count: coalescing on against off, and the service against the bare floor. */
function printRatios(medians: Map<string, Figures>, targets: Target[]): void {
  for (const connections of [50, 200]) {
    const get = (name: string) => medians.get(`${connections} ${name}`)!;
    const offFig = get(targets[0].name);
    const onFig = get(targets[1].name);
    const bareFig = get(targets[3].name);
    console.log(
      `- ${connections} connections: Redis CPU per increment, coalescing on / off: ${(onFig.redisMicrosPerIncrement / offFig.redisMicrosPerIncrement).toFixed(2)}; p99 on - off: ${onFig.run.p99 - offFig.run.p99} ms; service req/s / bare floor req/s: off ${(offFig.run.reqPerSec / bareFig.run.reqPerSec).toFixed(2)}, on ${(onFig.run.reqPerSec / bareFig.run.reqPerSec).toFixed(2)}`,
    );
  }
  console.log('');
}

export async function coalescingBench(repeats: number): Promise<void> {
  const children: ChildProcess[] = [];
  let redis: Redis | undefined;
  try {
    const redisServer = await startRedisServer();
    children.push(redisServer.child);
    redis = new Redis(redisServer.url);
    const start = (coalesceMs: number) => startInstance({ redisUrl: redisServer.url, children, coalesceMs });
    const off = await start(0);
    const on = [await start(1), await start(1)];
    await seedBoard(off.url);
    const bare = await startBareServer({ REDIS_URL: redisServer.url, KEY_PREFIX: PREFIX, BOARD });
    children.push(bare.child);
    const targets = targetsOf({ off, on, bare: { url: bare.url, pid: bare.child.pid } });
    const medians = await loadTable({ targets, repeats, redis, redisPid: redisServer.child.pid });
    printRatios(medians, targets);
    await redisLevel(redis, redisServer.child.pid);
  } finally {
    redis?.disconnect();
    for (const child of children.reverse()) await stopChild(child);
  }
}

/** One run against every URL of the target at once (connections split evenly), Redis measured around it. */
async function load(
  target: Target,
  connections: number,
  durationSec: number,
  redis: Redis,
  redisPid: number | undefined,
): Promise<Figures> {
  await redis.config('RESETSTAT');
  const redisCpuBefore = cpuSeconds(redisPid);
  const serverCpuBefore = target.pids.map((pid) => cpuSeconds(pid));
  const runs = await Promise.all(
    target.urls.map((url) =>
      cannon(url, { ...INCREMENT, path: target.path }, undefined, durationSec, connections / target.urls.length),
    ),
  );
  const redisCpu = cpuSeconds(redisPid) - redisCpuBefore;
  const serverCpu = target.pids.reduce<number>((sum, pid, i) => sum + cpuSeconds(pid) - serverCpuBefore[i], 0);
  const ok = runs.reduce((sum, run) => sum + run.ok, 0);
  const answered = ok + runs.reduce((sum, run) => sum + run.non2xx, 0);
  return {
    run: {
      reqPerSec: runs.reduce((sum, run) => sum + run.reqPerSec, 0),
      p50: Math.max(...runs.map((run) => run.p50)),
      p99: Math.max(...runs.map((run) => run.p99)),
      non2xx: runs.reduce((sum, run) => sum + run.non2xx, 0),
      ok,
      cpuMicrosPerRequest: 0,
    },
    redisMicrosPerIncrement: (redisCpu * 1e6) / Math.max(1, ok),
    callsPerIncrement: (await scriptCalls(redis)) / Math.max(1, ok),
    serverMicrosPerRequest: (serverCpu * 1e6) / Math.max(1, answered),
  };
}

function medianFigures(runs: Figures[]): Figures {
  const sorted = [...runs].sort((a, b) => a.run.reqPerSec - b.run.reqPerSec);
  const middle = sorted[Math.floor(sorted.length / 2)];
  return {
    run: middle.run,
    redisMicrosPerIncrement: median(runs.map((x) => x.redisMicrosPerIncrement)),
    callsPerIncrement: median(runs.map((x) => x.callsPerIncrement)),
    serverMicrosPerRequest: median(runs.map((x) => x.serverMicrosPerRequest)),
  };
}

async function scriptCalls(redis: Redis): Promise<number> {
  const stats = await redis.info('commandstats');
  return Number(/cmdstat_fcall:calls=(\d+)/.exec(stats)?.[1] ?? 0);
}

/** Increments per second one Redis node applies with N per script call, 64 calls in flight, no HTTP. */
/** One row of the Redis-level table: `perCall` increments per call from 64 callers for DURATION_SEC. */
async function perCallRow(run: {
  redis: Redis;
  board: PreparedBoard;
  perCall: number;
  redisPid: number | undefined;
  sent: { items: number };
}) {
  const { redis, board, perCall, redisPid, sent } = run;
  const call = () => {
    const base = { board, shard: board.shards[0], nowMs: Date.now(), budgetFields: 100 };
    if (perCall === 1)
      return callFunction(redis, S.increment, {
        ...base,
        item: `seed-${sent.items++ % ITEMS}`,
        amount: 1,
        newItems: UNLIMITED,
      });
    const requests = Array.from({ length: perCall }, () => ({
      item: `seed-${sent.items++ % ITEMS}`,
      amount: 1,
      newItems: UNLIMITED,
    }));
    return callFunction(redis, S.increments, { ...base, requests });
  };
  const cpuBefore = cpuSeconds(redisPid);
  const startedMs = performance.now();
  const endMs = startedMs + DURATION_SEC * 1000;
  let calls = 0;
  await Promise.all(
    Array.from({ length: 64 }, async () => {
      while (performance.now() < endMs) {
        await call();
        calls++;
      }
    }),
  );
  const seconds = (performance.now() - startedMs) / 1000;
  const increments = calls * perCall;
  return { calls, seconds, increments, micros: ((cpuSeconds(redisPid) - cpuBefore) * 1e6) / increments };
}

async function redisLevel(redis: Redis, redisPid: number | undefined): Promise<void> {
  await loadLibraries(redis, [RANKING.library]);
  const board = await storedBoard(redis, new RankingKeys(PREFIX), BOARD);
  console.log(
    `### One Redis node, no HTTP (ioredis, 64 calls in flight, one of the board's ${ITEMS.toLocaleString('en')} items per increment)\n`,
  );
  console.log(
    '| increments per call | calls/s | increments/s | Redis CPU µs per increment | ceiling of one Redis core, increments/s |',
  );
  console.log('|---|---|---|---|---|');
  const sent = { items: 0 };
  let single = 0;
  for (const perCall of [1, 10, 50, 100]) {
    const { calls, seconds, increments, micros } = await perCallRow({ redis, board, perCall, redisPid, sent });
    if (perCall === 1) single = micros;
    console.log(
      `| ${perCall} | ${fmt(calls / seconds)} | ${fmt(increments / seconds)} | ${micros.toFixed(2)} | ${fmt(1e6 / micros)} (${(single / micros).toFixed(1)}x) |`,
    );
  }
  console.log('');
}
