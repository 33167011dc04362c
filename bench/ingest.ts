/**
 * Stream ingest throughput and lag (`npm run bench -- --part ingest`, ~40 s): the
 * service in this process (createApp, its ingest on) and a private redis-server holding both the
 * boards and the stream.
 *   1. Backlog: BENCH_INGEST_BACKLOG events (default 200 000; 2 boards, one of 4 shards, 1 000 items,
 *      ~1% invalid) put in the stream first, then the source declared: events/s until the group's lag
 *      is 0.
 *   2. Steady rate: BENCH_INGEST_RATE events/s (default 20 000) for BENCH_INGEST_SECONDS (default 10):
 *      every 50 ms the age of the newest applied event (now minus the ms part of the last stream id
 *      recorded on the shards), p50/p99/max of those samples: end-to-end lag.
 *   3. HTTP: GET /boards/one/top (fastify inject, in process) latency p50/p99 with ingest idle and with
 *      the steady rate running.
 * After the backlog: CPU per 1 000 events (this process, redis-server), each one's busy share of the
 * drain's wall time and the share during which an apply call was at Redis, and INFO commandstats (each
 * command's share, µs per 1 000 events; commands run by a function count in its fcall too).
 * Variants: BENCH_INGEST_ITEMS=skewed, BENCH_INGEST_WINDOWS=<1-3> (windows per board), BENCH_INGEST_HASH_LISTPACK=<n> (redis-server's
 * hash-max-listpack-entries), BENCH_INGEST_BATCH=<n> (INGEST_BATCH), BENCH_INGEST_IN_FLIGHT=<n>
 * (INGEST_MAX_IN_FLIGHT, most batches applied at once by the instance),
 * BENCH_INGEST_DRAIN_HTTP=1 (HTTP latency during the drain as well). BENCH_INGEST_PROFILE=<file>: a CPU
 * profile of this process over the backlog's drain only (from the declaration until the lag is 0), as
 * `node --cpu-prof` writes one (open it in Chrome's DevTools).
 */
import { writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import Redis from 'ioredis';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createApp } from '../src/bootstrap';
import { IngestStore } from '../src/ingest/ingest.store';
import { stopChild } from '../harness/processes';
import { startRedisServer } from './process-stats';

const BACKLOG = Number(process.env.BENCH_INGEST_BACKLOG ?? 200_000);
const RATE = Number(process.env.BENCH_INGEST_RATE ?? 20_000);
const SECONDS = Number(process.env.BENCH_INGEST_SECONDS ?? 10);
const ADMIN = { authorization: `Bearer ${'b'.repeat(32)}` };
const PREFIX = 'bench:';
/** 'uniform': items in turn, no repeat within 1 000 events; 'skewed': item ⌊1000·u³⌋ (u uniform), a few items take most events, as trends do. */
const ITEMS = process.env.BENCH_INGEST_ITEMS ?? 'uniform';
/** Set: redis-server's hash-max-listpack-entries (its default, 512, keeps slots of up to 512 items as listpacks: each write scans one). */
const HASH_LISTPACK = process.env.BENCH_INGEST_HASH_LISTPACK;
/** Set (any value): GET top every 10 ms during the backlog's drain too (it costs the drain a little of this process's CPU). */
const DRAIN_HTTP = process.env.BENCH_INGEST_DRAIN_HTTP !== undefined;

/** BENCH_INGEST_WINDOWS=3: the boards count in 1 h, 1 d and 7 d (three writes per event); default one 1 h window. */
const WINDOWS = [
  { period: '1h', interval: '1m' },
  { period: '1d', interval: '1h' },
  { period: '7d', interval: '1d' },
].slice(0, Number(process.env.BENCH_INGEST_WINDOWS ?? 1));

let seq = 0;
function payload(): string {
  seq++;
  if (seq % 100 === 0) return 'not json';
  const board = seq % 2 === 0 ? 'one' : 'four';
  const item = ITEMS === 'skewed' ? Math.floor(1000 * Math.random() ** 3) : (seq * 7919) % 1000;
  return JSON.stringify({ board, item: `item-${item}`, amount: 1 + (seq % 3) });
}

async function add(client: Redis, count: number): Promise<void> {
  const pipeline = client.pipeline();
  for (let i = 0; i < count; i++) pipeline.xadd('events', '*', 'event', payload());
  await pipeline.exec();
}

async function groupLag(client: Redis): Promise<number> {
  const groups = (await client.xinfo('GROUPS', 'events')) as unknown[][];
  if (groups.length === 0) return Infinity;
  const info = Object.fromEntries(
    Array.from({ length: groups[0].length / 2 }, (_, i) => [groups[0][2 * i], groups[0][2 * i + 1]]),
  );
  return Number(info.lag ?? 0) + Number(info.pending ?? 0);
}

/** The newest stream id applied on any shard of the boards (ms part). */
async function lastAppliedMs(client: Redis): Promise<number> {
  const keys = await client.keys(`{${PREFIX}board:*}:ingest:*`);
  const lasts = await Promise.all(keys.map((key) => client.hget(key, 'last')));
  return Math.max(...lasts.map((last) => Number((last ?? '0-0').split('-')[0])));
}

/** redis-server's CPU time so far (user + system), ms. */
async function redisCpuMs(client: Redis): Promise<number> {
  const info = await client.info('cpu');
  const field = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1] ?? 0);
  return (field('used_cpu_user') + field('used_cpu_sys')) * 1000;
}

/** INFO commandstats since the last RESETSTAT: each command's calls and CPU µs per 1 000 events. */
async function commandStats(client: Redis, events: number): Promise<string> {
  const lines = (await client.info('commandstats')).split('\n').filter((line) => line.startsWith('cmdstat_'));
  return lines
    .map((line) => {
      const [, name, calls, usec] = /^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/.exec(line) ?? [];
      return { name, calls: Number(calls), usPer1000: (Number(usec) * 1000) / events };
    })
    .filter((stat) => stat.usPer1000 >= 10)
    .sort((a, b) => b.usPer1000 - a.usPer1000)
    .map((stat) => `  ${stat.name}: ${stat.calls} calls, ${(stat.usPer1000 / 1000).toFixed(2)} ms per 1000 events`)
    .join('\n');
}

/** Starts the CPU profiler when BENCH_INGEST_PROFILE names a file; the answer stops it and writes the profile there. */
async function profiler(): Promise<() => Promise<void>> {
  const file = process.env.BENCH_INGEST_PROFILE;
  if (!file) return async () => undefined;
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  return async () => {
    const { profile } = await session.post('Profiler.stop');
    await writeFile(file, JSON.stringify(profile));
    session.disconnect();
  };
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

async function httpLatency(app: NestFastifyApplication, requests: number): Promise<{ p50: number; p99: number }> {
  const fastify = app.getHttpAdapter().getInstance();
  const times: number[] = [];
  for (let i = 0; i < requests; i++) {
    const started = performance.now();
    await fastify.inject({ method: 'GET', url: '/boards/one/top?limit=10' });
    times.push(performance.now() - started);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return { p50: percentile(times, 50), p99: percentile(times, 99) };
}

/**
 * SLOWLOG of the drain: calls over 1 ms and over the 5 ms issue #24 allows any call, and the longest
 * (wall clock: run with BENCH_REDIS_REALTIME=1 for the calls' own time, see bench/process-stats.ts).
 */
async function slowCalls(client: Redis): Promise<string> {
  const entries = (await client.slowlog('GET', 100_000)) as Array<[number, number, number, string[]]>;
  const micros = entries.map(([, , took]) => took);
  const longest = entries.reduce<[number, string]>(
    (most, [, , took, args]) => (took > most[0] ? [took, args.slice(0, 2).join(' ')] : most),
    [0, ''],
  );
  const realtime = process.env.BENCH_REDIS_REALTIME === '1' ? ', redis-server under SCHED_FIFO' : '';
  return `SLOWLOG of the drain${realtime}: ${micros.length} calls over 1 ms, ${micros.filter((m) => m > 5000).length} over 5 ms, longest ${(longest[0] / 1000).toFixed(2)} ms (${longest[1]})`;
}

/** GET top every 10 ms until `done()` (the drain's end): latency p50 / p99 of requests sharing the service's Redis connection with ingest. */
async function httpUntil(
  app: NestFastifyApplication,
  done: () => boolean,
): Promise<{ p50: number; p99: number; count: number }> {
  const fastify = app.getHttpAdapter().getInstance();
  const times: number[] = [];
  while (!done()) {
    const started = performance.now();
    await fastify.inject({ method: 'GET', url: '/boards/one/top?limit=10' });
    times.push(performance.now() - started);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return { p50: percentile(times, 50), p99: percentile(times, 99), count: times.length };
}

let drained = false;

/**
 * Wraps the service's IngestStore.apply (one board shard's part of a batch) to measure how much of the
 * drain some part is at Redis (sent, reply not yet handled): the rest, Redis has nothing of this source
 * to do (the service between batches). Answers a reset and a read of that time, ms.
 */
function applyTimer(app: NestFastifyApplication): { reset: () => void; outstandingMs: () => number } {
  const store = app.get(IngestStore);
  const apply = store.apply.bind(store);
  let inFlight = 0;
  let since = 0;
  let covered = 0;
  store.apply = async (part) => {
    if (inFlight++ === 0) since = performance.now();
    try {
      return await apply(part);
    } finally {
      if (--inFlight === 0) covered += performance.now() - since;
    }
  };
  return { reset: () => (covered = 0), outstandingMs: () => covered };
}

/** The service in this process on the private redis-server, its ingest settings from the BENCH_INGEST_ knobs. */
async function ingestApp(redisUrl: string): Promise<NestFastifyApplication> {
  const app = await createApp({
    logDestination: { write: () => undefined },
    env: {
      REDIS_URL: redisUrl,
      KEY_PREFIX: PREFIX,
      ADMIN_TOKEN: 'b'.repeat(32),
      LOG_LEVEL: 'error',
      INGEST_REFRESH_MS: '200',
      ...(process.env.BENCH_INGEST_BATCH ? { INGEST_BATCH: process.env.BENCH_INGEST_BATCH } : {}),
      ...(process.env.BENCH_INGEST_IN_FLIGHT ? { INGEST_MAX_IN_FLIGHT: process.env.BENCH_INGEST_IN_FLIGHT } : {}),
    },
  });
  await app.init();
  return app;
}

/** BACKLOG events on the stream before the source starts, and Redis's statistics and slow log from zero. */
async function queueBacklog(client: Redis): Promise<void> {
  for (let added = 0; added < BACKLOG; added += 5000) await add(client, Math.min(5000, BACKLOG - added));
  await client.config('RESETSTAT');
  await client.config('SET', 'slowlog-log-slower-than', '1000', 'slowlog-max-len', '100000');
  await client.slowlog('RESET');
}

/** The drain's rate, CPU per 1 000 events, and the shares of its time Redis, this process and apply calls took. */
function printDrain(drain: { backlogSec: number; cpu: NodeJS.CpuUsage; redisMs: number; applyMs: number }): void {
  const { backlogSec, cpu, redisMs, applyMs } = drain;
  const drainMs = backlogSec * 1000;
  console.log(
    `backlog: ${BACKLOG} events in ${backlogSec.toFixed(2)} s = ${Math.round(BACKLOG / backlogSec)} events/s; CPU per 1000 events: service ${((cpu.user + cpu.system) / BACKLOG).toFixed(2)} ms, redis-server ${((redisMs * 1000) / BACKLOG).toFixed(2)} ms`,
  );
  console.log(
    `drain: redis-server busy ${((100 * redisMs) / drainMs).toFixed(1)}%, this process ${((cpu.user + cpu.system) / 10 / drainMs).toFixed(1)}%, an apply call at Redis ${((100 * applyMs) / drainMs).toFixed(1)}% of the time`,
  );
}

/** The backlog drained from the source's start: events per second, CPU per event, Redis's share, slow calls. */
async function drainBacklog(run: {
  app: NestFastifyApplication;
  client: Redis;
  applies: ReturnType<typeof applyTimer>;
}) {
  const { app, client, applies } = run;
  await queueBacklog(client);
  const stopProfile = await profiler();
  // CPU time, not only the wall clock: on a shared, loaded machine it says what each event costs.
  const cpuBefore = process.cpuUsage();
  const redisBefore = await redisCpuMs(client);
  const started = performance.now();
  applies.reset();
  await app
    .getHttpAdapter()
    .getInstance()
    .inject({
      method: 'PUT',
      url: '/admin/ingest/events',
      headers: ADMIN,
      payload: { kind: 'redis-stream', stream: 'events' },
    });
  const drainHttp = DRAIN_HTTP ? httpUntil(app, () => drained) : undefined;
  while ((await groupLag(client)) > 0) await new Promise((resolve) => setTimeout(resolve, 20));
  drained = true;
  const backlogSec = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  const redisMs = (await redisCpuMs(client)) - redisBefore;
  await stopProfile();
  printDrain({ backlogSec, cpu, redisMs, applyMs: applies.outstandingMs() });
  console.log(await commandStats(client, BACKLOG));
  console.log(await slowCalls(client));
  if (drainHttp) {
    const { p50, p99, count } = await drainHttp;
    console.log(`HTTP GET top during the drain: ${count} requests, p50 ${p50.toFixed(2)} ms p99 ${p99.toFixed(2)} ms`);
  }
}

/** RATE events a second for SECONDS: the newest applied event's age, and HTTP reads beside the ingest. */
async function steadyIngest(run: {
  app: NestFastifyApplication;
  client: Redis;
  idle: Awaited<ReturnType<typeof httpLatency>>;
}) {
  const { app, client, idle } = run;
  const lags: number[] = [];
  const tickMs = 10;
  const perTick = RATE / (1000 / tickMs);
  const steadyStart = performance.now();
  let sent = 0;
  const producer = (async () => {
    while (performance.now() - steadyStart < SECONDS * 1000) {
      const due = Math.floor(((performance.now() - steadyStart) / 1000) * RATE) - sent;
      if (due > 0) {
        await add(client, due);
        sent += due;
      }
      await new Promise((resolve) => setTimeout(resolve, tickMs));
    }
  })();
  const sampler = (async () => {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    while (performance.now() - steadyStart < SECONDS * 1000) {
      lags.push(Date.now() - (await lastAppliedMs(client)));
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();
  const busy = await httpLatency(app, Math.floor(((SECONDS - 2) * 1000) / 10));
  await Promise.all([producer, sampler]);
  console.log(
    `steady ${RATE} events/s (${sent} sent in ${SECONDS} s, ${perTick} per ${tickMs} ms): age of the newest applied event p50 ${percentile(lags, 50)} ms, p99 ${percentile(lags, 99)} ms, max ${Math.max(...lags)} ms`,
  );
  console.log(
    `HTTP GET top: idle p50 ${idle.p50.toFixed(2)} ms p99 ${idle.p99.toFixed(2)} ms; under ingest p50 ${busy.p50.toFixed(2)} ms p99 ${busy.p99.toFixed(2)} ms`,
  );
}

export async function ingestBench(): Promise<void> {
  const redis = await startRedisServer();
  const client = new Redis(redis.url);
  if (HASH_LISTPACK !== undefined) await client.config('SET', 'hash-max-listpack-entries', HASH_LISTPACK);
  console.log(
    `items ${ITEMS}, hash-max-listpack-entries ${String(((await client.config('GET', 'hash-max-listpack-entries')) as string[])[1])}`,
  );
  const app = await ingestApp(redis.url);
  const applies = applyTimer(app);
  const fastify = app.getHttpAdapter().getInstance();
  try {
    for (const [name, shards] of [
      ['one', 1],
      ['four', 4],
    ] as const)
      await fastify.inject({
        method: 'PUT',
        url: `/admin/boards/${name}`,
        headers: ADMIN,
        payload: { windows: WINDOWS, shards },
      });
    const idle = await httpLatency(app, 300);
    await drainBacklog({ app, client, applies });
    await steadyIngest({ app, client, idle });
  } finally {
    await app.close();
    client.disconnect();
    await stopChild(redis.child);
  }
}
