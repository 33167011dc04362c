/**
 * Where a request's CPU goes (issue #24's first step): the built service under `node --cpu-prof`, one
 * route at a time under autocannon (50 connections: an increment, a top-10 read, a batch of 100 increments), then the
 * top self-time entries of the measured run's samples (the boot and warm-up left out) grouped
 * by package (node_modules/<package>, our src/<folder>, node: internals, GC, idle) and by function.
 * `npm run bench -- --part profile`; PROFILE_SEC (default 8),
 * PROFILE_ROUTES (increment,top,batch: all), PROFILE_INTERVAL_US (1000), PROFILE_LOG_LEVEL (warn; `info`, the service's default, keeps
 * the access line of every request in the profile). PROFILE_SERVER=hand-rolled profiles bench/bare-server.ts's
 * `/minimal` increment and top-10 instead, for shares side by side with the service's.
 */
import { readdirSync, readFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ChildProcess, spawn } from 'node:child_process';
import { freePort, stopChild } from '../harness/processes';
import { cannon } from './load';
import { startBareServer, startRedisServer, startService, waitForHttp } from './process-stats';

const ADMIN_TOKEN = 'bench-admin-token-0123456789';
const SECONDS = Number(process.env.PROFILE_SEC ?? 8);
/** µs between samples (PROFILE_INTERVAL_US, Node's default 1 000): fewer give a hot path's small parts too few samples. */
const INTERVAL_MICROS = Number(process.env.PROFILE_INTERVAL_US ?? 1000);
const ROUTES = {
  increment: { method: 'POST' as const, path: '/boards/b/items/[<item>]/increment', body: '{}', randomItems: 10_000 },
  top: { method: 'GET' as const, path: '/boards/b/top?limit=10' },
  batch: {
    method: 'POST' as const,
    path: '/boards/b/increments',
    body: JSON.stringify({
      items: Array.from({ length: 100 }, (_, i) => ({ item: `seed-${(i * 97) % 10_000}`, amount: 1 })),
    }),
  },
};

/** The hand-rolled server's routes of the same names (bench/bare-server.ts: one script call, one ZREVRANGE). */
const HAND_ROLLED_ROUTES = {
  increment: { method: 'POST' as const, path: '/minimal/[<item>]/increment', body: '{}', randomItems: 10_000 },
  top: { method: 'GET' as const, path: '/minimal/top?limit=10' },
};
/** PROFILE_SERVER: `service` (default) or `hand-rolled`. */
const SERVER = process.env.PROFILE_SERVER ?? 'service';

/** A cpuprofile's samples: node ids, and µs since the previous sample (the first: since startTime). */
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}

/** Where a frame's code lives: a package, a folder of ours, Node itself, or the engine. */
function placeOf(url: string, functionName: string): string {
  if (functionName === '(garbage collector)') return 'GC';
  if (functionName === '(idle)' || functionName === '(program)') return functionName;
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1];
  const ours = /\/dist\/([^/]+)\//.exec(url);
  if (ours) return `src/${ours[1]}`;
  if (url.startsWith('node:')) return 'node internals';
  return url === '' ? '(native)' : url;
}

function table(title: string, totals: Map<string, number>, all: number, rows = 12): void {
  console.log(`\n| ${title} | self time |\n| --- | --- |`);
  for (const [name, hits] of [...totals].sort((a, b) => b[1] - a[1]).slice(0, rows))
    console.log(`| ${name} | ${((100 * hits) / all).toFixed(1)} % |`);
}

/**
 * Samples per node taken between fromMs and toMs after the profile started (about when the process
 * did): the measured run only, not the boot, the warm-up or the shutdown.
 */
function hitsWithin(profile: Profile, fromMs: number, toMs: number): Map<number, number> {
  const hits = new Map<number, number>();
  let atMicros = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    atMicros += profile.timeDeltas[i];
    if (atMicros >= fromMs * 1000 && atMicros <= toMs * 1000)
      hits.set(profile.samples[i], (hits.get(profile.samples[i]) ?? 0) + 1);
  }
  return hits;
}

function summarize(file: string, fromMs: number, toMs: number): void {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const sampled = hitsWithin(profile, fromMs, toMs);
  console.log(`\n${file}: samples from ${fromMs} to ${toMs} ms after the start`);
  const byPlace = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let all = 0;
  for (const node of profile.nodes) {
    const hits = sampled.get(node.id) ?? 0;
    const { functionName, url, lineNumber } = node.callFrame;
    if (hits === 0 || functionName === '(idle)') continue;
    all += hits;
    const place = placeOf(url, functionName);
    byPlace.set(place, (byPlace.get(place) ?? 0) + hits);
    const name = `${functionName || '(anonymous)'} (${place}:${lineNumber + 1})`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + hits);
  }
  table('where (busy time, idle left out)', byPlace, all);
  table('function', byFunction, all, 15);
}

/** A server under `node --cpu-prof`: its process and address. */
type Profiled = { child: ChildProcess; url: string; spawnedMs: number };

function profileArgs(dir: string): string[] {
  return ['--cpu-prof', `--cpu-prof-dir=${dir}`, `--cpu-prof-interval=${INTERVAL_MICROS}`];
}

async function startProfiledService(dir: string, redisUrl: string, prefix: string): Promise<Profiled> {
  const port = await freePort();
  const spawnedMs = Date.now();
  const child = spawn(process.execPath, [...profileArgs(dir), join(__dirname, '..', 'dist', 'main.js')], {
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      REDIS_URL: redisUrl,
      ADMIN_TOKEN,
      LOG_LEVEL: process.env.PROFILE_LOG_LEVEL ?? 'warn',
      KEY_PREFIX: prefix,
    },
    stdio: 'ignore',
  });
  const url = `http://127.0.0.1:${port}`;
  await waitForHttp(`${url}/health/live`);
  await fetch(`${url}/admin/boards/b`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ windows: [{ period: '1h', interval: '1m' }] }),
  });
  return { child, url, spawnedMs };
}

/** The hand-rolled server (bench/bare-server.ts) on the board a service made, under the profiler. */
async function startProfiledHandRolled(dir: string, redisUrl: string, prefix: string): Promise<Profiled> {
  const maker = await startService({ REDIS_URL: redisUrl, ADMIN_TOKEN, KEY_PREFIX: prefix }, true);
  try {
    await waitForHttp(`${maker.url}/health/live`);
    await fetch(`${maker.url}/admin/boards/b`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ windows: [{ period: '1h', interval: '1m' }] }),
    });
  } finally {
    await stopChild(maker.child);
  }
  const spawnedMs = Date.now();
  const bare = await startBareServer({ REDIS_URL: redisUrl, KEY_PREFIX: prefix, BOARD: 'b' }, profileArgs(dir));
  return { ...bare, spawnedMs };
}

async function profileRoute(name: string, redisUrl: string): Promise<void> {
  const handRolled = SERVER === 'hand-rolled';
  const routes = handRolled ? HAND_ROLLED_ROUTES : ROUTES;
  const route = routes[name as keyof typeof routes];
  if (!route) throw new Error(`${SERVER} has no route ${name}`);
  const dir = mkdtempSync(join(tmpdir(), `tb-profile-${name}-`));
  const start = handRolled ? startProfiledHandRolled : startProfiledService;
  const { child, url, spawnedMs } = await start(dir, redisUrl, `${SERVER}-${name}:`);
  const measured = { fromMs: 0, toMs: 0 };
  try {
    await cannon(url, routes.increment, child.pid, 2); // items exist before the measured run
    measured.fromMs = Date.now() - spawnedMs;
    const run = await cannon(url, route, child.pid, SECONDS);
    measured.toMs = Date.now() - spawnedMs;
    console.log(
      `\n### ${SERVER}, ${name}: ${Math.round(run.reqPerSec)} req/s, p99 ${run.p99} ms, ${Math.round(run.cpuMicrosPerRequest)} µs CPU per request`,
    );
  } finally {
    // A graceful stop (SIGTERM): Node writes the profile only when the process exits by itself.
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 15_000))]);
    await stopChild(child);
  }
  const [file] = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'));
  summarize(join(dir, file), measured.fromMs, measured.toMs);
}

export async function profileBench(): Promise<void> {
  const redis = await startRedisServer();
  try {
    const only = process.env.PROFILE_ROUTES?.split(',');
    const names = SERVER === 'hand-rolled' ? Object.keys(HAND_ROLLED_ROUTES) : Object.keys(ROUTES);
    for (const name of names) if (!only || only.includes(name)) await profileRoute(name, redis.url);
  } finally {
    await stopChild(redis.child);
  }
}
