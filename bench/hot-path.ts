/**
 * Issue #24's comparison (`npm run bench -- --part hot-path`, about
 * 3-4 minutes): the service on its defaults (dist/main.js; limits as shipped) against the hand-rolled
 * server a team writes instead (bench/bare-server.ts: `POST /minimal/:item/increment`, one HINCRBY +
 * ZINCRBY + ZCOUNT, and `GET /minimal/top`, one ZREVRANGE ... WITHSCORES) and against the service's own
 * same-script floor (the bare server running the service's functions with nothing around them), all
 * on one private redis-server with 10 000 items each (so no quota refuses a write; seeded by an instance
 * of their own, so the measured one's client has its quota's whole budget: seededService). One round runs
 * every route on every server one after the other, each round starting at the next server (HOT_ROUND_SEC each, 50 connections); a ratio is
 * taken within a round, so it shares the machine's state of that moment, and the median of HOT_ROUNDS
 * rounds is reported with the load average of each round. Each run also reads redis-server's CPU time,
 * so Redis CPU per answered request is compared too (the servers take turns on the one redis-server), with
 * what explains it: the time inside script calls (commandstats), and redis-server's wake-ups and
 * preemptions (/proc context switches) per 100 requests. Then batches of 100 increments through
 * the service (HOT_BATCH_ENTRIES per batch, default 100), and SLOWLOG (calls over 1 ms, and over 5 ms) of each phase after seeding.
 * BENCH_REDIS_REALTIME=1 runs redis-server under SCHED_FIFO (bench/process-stats.ts), so SLOWLOG times the calls, not the machine. HOT_BEFORE_DIST=<dir>/dist
 * adds a second service built from other code (e.g. `git archive <commit>` built elsewhere) to every
 * round, on its own key prefix, so a change is measured before and after in the same run.
 * HOT_SERVICE_ENV (JSON) runs the service with settings over its defaults. HOT_CALL_SIZES=1 adds the
 * increment calls by the requests they carried (bench/call-sizes.ts).
 */
import { ChildProcess } from 'node:child_process';
import Redis from 'ioredis';
import { stopChild } from '../harness/processes';
import { loadAverage, scriptCallTime } from './call-rounds';
import { callSizes, callSizesHeader, SlowEntry } from './call-sizes';
import { BENCH_ADMIN_TOKEN, BOARD, ITEMS, PREFIX, seededService } from './hot-seed';
import { cannon, fmt, median, RunFigures } from './load';
import { contextSwitches, cpuSeconds, startBareServer, startRedisServer } from './process-stats';

const ROUNDS = Number(process.env.HOT_ROUNDS ?? 5);
const SECONDS = Number(process.env.HOT_ROUND_SEC ?? 4);
/** SLOWLOG keeps every call over 1 ms; the report counts those over 1 ms and over the target's 5 ms. */
const LOGGED_MICROS = 1_000;
const SLOW_MICROS = 5_000;
const BATCH_ENTRIES = Number(process.env.HOT_BATCH_ENTRIES ?? 100);

const BEFORE_DIST = process.env.HOT_BEFORE_DIST;
/** HOT_CALL_SIZES=1: the increment calls by size after the rounds (bench/call-sizes.ts). */
const CALL_SIZES = process.env.HOT_CALL_SIZES === '1';
/** HOT_SERVICE_ENV (JSON): settings over the service's defaults, e.g. '{"LOG_LEVEL":"warn"}' (the before build keeps its defaults). */
const SERVICE_ENV = JSON.parse(process.env.HOT_SERVICE_ENV ?? '{}') as Record<string, string>;

type Server = 'service' | 'hand-rolled' | 'floor' | 'service before';
const SERVERS: Server[] = BEFORE_DIST
  ? ['service', 'hand-rolled', 'floor', 'service before']
  : ['service', 'hand-rolled', 'floor'];

interface Route {
  name: string;
  method: 'GET' | 'POST';
  /** The path on each server. */
  paths: Record<Server, string>;
  body?: string;
  randomItems?: number;
}

const ROUTES: Route[] = [
  {
    name: 'increment',
    method: 'POST',
    body: '{"amount":1}',
    randomItems: ITEMS,
    paths: {
      service: `/boards/${BOARD}/items/[<item>]/increment`,
      'hand-rolled': '/minimal/[<item>]/increment',
      floor: `/boards/${BOARD}/items/[<item>]/increment`,
      'service before': `/boards/${BOARD}/items/[<item>]/increment`,
    },
  },
  {
    name: 'top-10',
    method: 'GET',
    paths: {
      service: `/boards/${BOARD}/top?limit=10`,
      'hand-rolled': '/minimal/top?limit=10',
      floor: `/boards/${BOARD}/top?limit=10`,
      'service before': `/boards/${BOARD}/top?limit=10`,
    },
  },
];

/**
 * A run's figures, and per answered request over the run (every server shares the one redis-server,
 * one at a time): redis-server's CPU time (µs), the time Redis spent inside script calls (FCALL and
 * EVALSHA, µs, commandstats: wall time, so a call the kernel preempted counts its time off the CPU),
 * and its wake-ups and preemptions (contextSwitches), per 100 requests.
 */
type HotRun = RunFigures & {
  redisMicrosPerRequest: number;
  scriptMicrosPerRequest: number;
  wakesPer100: number;
  preemptionsPer100: number;
};
type Runs = Map<string, HotRun[]>;

async function round(
  redis: Redis,
  urls: Partial<Record<Server, string>>,
  pids: Partial<Record<Server, number | undefined>> & { redis?: number },
  runs: Runs,
  sec: number,
  turn = 0,
) {
  // Each round starts one server later: a fixed order measured the last one (the build before) up to
  // 0.2x worse against the hand-rolled than the same build in the first place (2026-12-04, both ways round).
  const order = [...SERVERS.slice(turn % SERVERS.length), ...SERVERS.slice(0, turn % SERVERS.length)];
  for (const route of ROUTES) {
    for (const server of order) {
      await redis.config('RESETSTAT');
      const redisCpuBefore = cpuSeconds(pids.redis);
      const switchesBefore = contextSwitches(pids.redis);
      const figures = await cannon(urls[server] ?? '', { ...route, path: route.paths[server] }, pids[server], sec);
      const switches = contextSwitches(pids.redis);
      const per = (total: number) => total / Math.max(1, figures.ok);
      const run = {
        ...figures,
        redisMicrosPerRequest: per((cpuSeconds(pids.redis) - redisCpuBefore) * 1e6),
        scriptMicrosPerRequest: per(scriptCallTime(await redis.info('commandstats')).usec),
        wakesPer100: per(100 * (switches.voluntary - switchesBefore.voluntary)),
        preemptionsPer100: per(100 * (switches.involuntary - switchesBefore.involuntary)),
      };
      // A loaded machine times out a few Redis calls (503): a run is void past 1 % (as in service-ab.ts).
      if (run.non2xx > run.ok / 100) throw new Error(`${server} ${route.name}: ${run.non2xx} answers were not 2xx`);
      const key = `${route.name} ${server}`;
      runs.set(key, [...(runs.get(key) ?? []), run]);
    }
  }
}

function report(runs: Runs, loads: string[]): void {
  console.log(`## Hot path: service (defaults) against a hand-rolled server and its own floor\n`);
  console.log(
    `${ROUNDS} rounds x ${SECONDS} s per route and server, 50 connections; load average per round: ${loads.join(' | ')}.\n`,
  );
  console.log(
    '| route | server | req/s median | p50 / p99 ms (median) | CPU µs per request (median) | Redis CPU µs per request (median) | µs in script calls per request | Redis wake-ups / preemptions per 100 requests | req/s vs hand-rolled (median of rounds) | req/s vs floor | p99 vs hand-rolled | Redis CPU vs hand-rolled | CPU vs hand-rolled (issue #51) |',
  );
  console.log('| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
  for (const route of ROUTES) {
    const of = (server: Server) => runs.get(`${route.name} ${server}`) ?? [];
    const ratio = (service: Server, server: Server, figure: (r: HotRun) => number) =>
      median(of(service).map((run, i) => figure(run) / figure(of(server)[i]))).toFixed(2);
    for (const server of SERVERS) {
      const r = of(server);
      const pick = (figure: (x: HotRun) => number) => median(r.map(figure));
      const service = server.startsWith('service');
      const ratios = service
        ? [
            ratio(server, 'hand-rolled', (x) => x.reqPerSec),
            ratio(server, 'floor', (x) => x.reqPerSec),
            ratio(server, 'hand-rolled', (x) => x.p99),
            ratio(server, 'hand-rolled', (x) => x.redisMicrosPerRequest),
            ratio(server, 'hand-rolled', (x) => x.cpuMicrosPerRequest),
          ]
        : ['', '', '', '', ''];
      console.log(
        `| ${route.name} | ${server} | ${fmt(pick((x) => x.reqPerSec))} | ${pick((x) => x.p50)} / ${pick((x) => x.p99)} | ${pick((x) => x.cpuMicrosPerRequest).toFixed(0)} | ${pick((x) => x.redisMicrosPerRequest).toFixed(1)} | ${pick((x) => x.scriptMicrosPerRequest).toFixed(1)} | ${pick((x) => x.wakesPer100).toFixed(1)} / ${pick((x) => x.preemptionsPer100).toFixed(2)} | ${ratios.join(' | ')} |`,
      );
    }
  }
}

async function batches(serviceUrl: string, pid: number | undefined): Promise<void> {
  const body = JSON.stringify({
    items: Array.from({ length: BATCH_ENTRIES }, (_, i) => ({ item: `seed-${(i * 97) % ITEMS}`, amount: 1 })),
  });
  const route = { method: 'POST' as const, path: `/boards/${BOARD}/increments`, body };
  await cannon(serviceUrl, route, pid, 1);
  const rates: number[] = [];
  for (let r = 0; r < ROUNDS; r++)
    rates.push((await cannon(serviceUrl, route, pid, SECONDS)).reqPerSec * BATCH_ENTRIES);
  console.log(
    `\nBatches of ${BATCH_ENTRIES} increments through the service: ${rates.map(fmt).join(', ')} item increments/s (median ${fmt(median(rates))}); load ${loadAverage()}.`,
  );
}

async function slowCalls(redis: Redis, phase: string): Promise<void> {
  const entries = (await redis.slowlog('GET', 10_000)) as SlowEntry[];
  // Per command (a function by its name): how many calls took longer, and the longest.
  const byCommand = new Map<string, { count: number; longestMicros: number }>();
  for (const [, , micros, args] of entries) {
    const name = /^fcall/i.test(args[0]) ? `${args[0]} ${args[1]}` : args[0];
    const seen = byCommand.get(name) ?? { count: 0, longestMicros: 0 };
    byCommand.set(name, { count: seen.count + 1, longestMicros: Math.max(seen.longestMicros, micros) });
  }
  const parts = [...byCommand].map(
    ([name, s]) => `${name}: ${s.count}, longest ${(s.longestMicros / 1000).toFixed(2)} ms`,
  );
  const overTarget = entries.filter(([, , micros]) => micros > SLOW_MICROS).length;
  console.log(
    `SLOWLOG, ${phase}: ${entries.length} calls over ${LOGGED_MICROS / 1000} ms, ${overTarget} over ${SLOW_MICROS / 1000} ms${process.env.BENCH_REDIS_REALTIME === '1' ? ' (redis-server under SCHED_FIFO)' : ''}. ${parts.join('; ')}`,
  );
  await redis.slowlog('RESET');
}

/** The service built from BEFORE_DIST (its own key prefix) beside this tree's, in the same rounds. */
async function addServiceBefore(servers: {
  env: Record<string, string>;
  redis: Redis;
  children: ChildProcess[];
  urls: Partial<Record<Server, string>>;
  pids: Partial<Record<Server, number | undefined>>;
}): Promise<void> {
  const { env, redis, children, urls, pids } = servers;
  const before = await seededService({ ...env, KEY_PREFIX: 'hot-before:' }, redis, 'hot-before:', {
    dist: BEFORE_DIST,
  });
  children.push(before.child);
  urls['service before'] = before.url;
  pids['service before'] = before.child.pid;
}

/** Redis's calls by size while each server takes the first route's load (HOT_CALL_SIZES). */
async function callSizesTable(servers: {
  redis: Redis;
  urls: Partial<Record<Server, string>>;
  pids: Partial<Record<Server, number | undefined>>;
}): Promise<void> {
  const { redis, urls, pids } = servers;
  callSizesHeader();
  const route = ROUTES[0];
  for (const server of SERVERS) {
    const load = () => cannon(urls[server] ?? '', { ...route, path: route.paths[server] }, pids[server], 3);
    await callSizes(redis, server, load);
  }
}

export async function hotPathBench(): Promise<void> {
  const children: ChildProcess[] = [];
  const redisServer = await startRedisServer();
  children.push(redisServer.child);
  const redis = new Redis(redisServer.url);
  try {
    const env = { REDIS_URL: redisServer.url, ADMIN_TOKEN: BENCH_ADMIN_TOKEN };
    const service = await seededService({ ...env, ...SERVICE_ENV, KEY_PREFIX: PREFIX }, redis, PREFIX);
    children.push(service.child);
    const bare = await startBareServer({ REDIS_URL: redisServer.url, KEY_PREFIX: PREFIX, BOARD });
    children.push(bare.child);
    const urls: Partial<Record<Server, string>> = { service: service.url, 'hand-rolled': bare.url, floor: bare.url };
    const pids: Partial<Record<Server, number | undefined>> & { redis?: number } = {
      redis: redisServer.child.pid,
      service: service.child.pid,
      'hand-rolled': bare.child.pid,
      floor: bare.child.pid,
    };
    if (BEFORE_DIST) await addServiceBefore({ env, redis, children, urls, pids });
    await redis.config('SET', 'slowlog-log-slower-than', String(LOGGED_MICROS), 'slowlog-max-len', '100000');
    await redis.slowlog('RESET');
    await round(redis, urls, pids, new Map(), 1); // warm-up, not kept
    const runs: Runs = new Map();
    const loads: string[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      await round(redis, urls, pids, runs, SECONDS, r);
      loads.push(loadAverage().split(' ')[0]);
    }
    report(runs, loads);
    await slowCalls(redis, 'single increments and top-10 reads');
    if (CALL_SIZES) await callSizesTable({ redis, urls, pids });
    await batches(service.url, service.child.pid);
    await slowCalls(redis, 'batches');
  } finally {
    redis.disconnect();
    for (const child of children.reverse()) await stopChild(child);
  }
}
