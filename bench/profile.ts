/**
 * Where a request's CPU goes (issue #24's first step): the built service under `node --cpu-prof`, one
 * route at a time under autocannon (50 connections: an increment, a top-10 read, a batch of 100 increments), then the profile's top self-time entries grouped
 * by package (node_modules/<package>, our src/<folder>, node: internals, GC, idle) and by function.
 * `npx ts-node --transpile-only bench/profile.ts` after `npm run build`; PROFILE_SEC (default 8),
 * PROFILE_ROUTES (increment,top,batch: all), PROFILE_LOG_LEVEL (warn; `info`, the service's default, keeps
 * the access line of every request in the profile).
 */
import { readdirSync, readFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { freePort, stopChild } from '../harness/processes';
import { cannon } from './load';
import { startRedisServer, waitForHttp } from './process-stats';

const ADMIN_TOKEN = 'bench-admin-token-0123456789';
const SECONDS = Number(process.env.PROFILE_SEC ?? 8);
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

function summarize(file: string): void {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as { nodes: ProfileNode[] };
  const byPlace = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let all = 0;
  for (const node of profile.nodes) {
    const hits = node.hitCount ?? 0;
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

async function profileRoute(
  name: string,
  route: (typeof ROUTES)[keyof typeof ROUTES],
  redisUrl: string,
): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), `tb-profile-${name}-`));
  const port = await freePort();
  const child = spawn(
    process.execPath,
    ['--cpu-prof', `--cpu-prof-dir=${dir}`, join(__dirname, '..', 'dist', 'main.js')],
    {
      env: {
        ...process.env,
        PORT: String(port),
        HOST: '127.0.0.1',
        REDIS_URL: redisUrl,
        ADMIN_TOKEN,
        LOG_LEVEL: process.env.PROFILE_LOG_LEVEL ?? 'warn',
        KEY_PREFIX: `${name}:`,
      },
      stdio: 'ignore',
    },
  );
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitForHttp(`${url}/health/live`);
    await fetch(`${url}/admin/boards/b`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ windows: [{ period: '1h', interval: '1m' }] }),
    });
    await cannon(url, ROUTES.increment, child.pid, 2); // items exist before the measured run
    const run = await cannon(url, route, child.pid, SECONDS);
    console.log(
      `\n### ${name}: ${Math.round(run.reqPerSec)} req/s, p99 ${run.p99} ms, ${Math.round(run.cpuMicrosPerRequest)} µs CPU per request`,
    );
  } finally {
    // A graceful stop (SIGTERM): Node writes the profile only when the process exits by itself.
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 15_000))]);
    await stopChild(child);
  }
  const [file] = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'));
  summarize(join(dir, file));
}

async function main(): Promise<void> {
  const redis = await startRedisServer();
  try {
    const only = process.env.PROFILE_ROUTES?.split(',');
    for (const [name, route] of Object.entries(ROUTES))
      if (!only || only.includes(name)) await profileRoute(name, route, redis.url);
  } finally {
    await stopChild(redis.child);
  }
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
