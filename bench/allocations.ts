/**
 * Bytes the JS heap allocates per answered request, the service against the hand-rolled server
 * (`npm run bench -- --part allocations`, about 2 minutes). Unlike
 * CPU time this does not move with the machine's load: it is the work a request asks of the process
 * (every object it builds, and the collections they cost), so a cut shows on a shared machine. Each
 * server runs under V8's sampling heap profiler counting collected objects too (bench/heap-sampler.ts);
 * rounds alternate the servers, each round ALLOC_REQUESTS (4 000) requests at 16 connections, and the
 * same span without requests is sampled first so the servers' own background allocation (timers, the
 * scheduler) is taken out at its rate. Routes as in bench/hot-path.ts (increment, top-10, on one
 * private redis-server, 10 000 items); ALLOC_ROUNDS (3); ALLOC_FRAMES (12) lists the service's frames
 * allocating most per request (self, and by its nearest frame of ours).
 */
import autocannon from 'autocannon';
import { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomInt } from 'node:crypto';
import { stopChild } from '../harness/processes';
import { loadAverage } from './call-rounds';
import { median } from './load';
import { BENCH_ADMIN_TOKEN, BOARD, ITEMS, PREFIX, seededService } from './hot-seed';
import { startBareServer, startRedisServer } from './process-stats';
import Redis from 'ioredis';

const REQUESTS = Number(process.env.ALLOC_REQUESTS ?? 4000);
const ROUNDS = Number(process.env.ALLOC_ROUNDS ?? 3);
const FRAMES = Number(process.env.ALLOC_FRAMES ?? 12);
const SAMPLER = ['-r', 'ts-node/register/transpile-only', '-r', join(__dirname, 'heap-sampler.ts')];

interface Route {
  name: string;
  method: 'GET' | 'POST';
  service: string;
  handRolled: string;
  body?: string;
}

const ROUTES: Route[] = [
  {
    name: 'increment',
    method: 'POST',
    service: `/boards/${BOARD}/items/[<item>]/increment`,
    handRolled: '/minimal/[<item>]/increment',
    body: '{"amount":1}',
  },
  { name: 'top-10', method: 'GET', service: `/boards/${BOARD}/top?limit=10`, handRolled: '/minimal/top?limit=10' },
];

interface Server {
  name: 'service' | 'hand-rolled';
  child: ChildProcess;
  url: string;
  samplesFile: string;
}

/** A heap sampling profile: its call tree, and each sample's node and size. */
interface HeapProfile {
  head: HeapNode;
  samples: Array<{ nodeId: number; size: number }>;
}

interface HeapNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children: HeapNode[];
}

/** One span of the sampler around `work`; its profile and how long it took. */
async function sampled(server: Server, work: () => Promise<void>): Promise<{ profile: HeapProfile; seconds: number }> {
  rmSync(server.samplesFile, { force: true });
  server.child.kill('SIGUSR2');
  const startedMs = Date.now();
  await work();
  const seconds = (Date.now() - startedMs) / 1000;
  server.child.kill('SIGUSR1');
  while (!existsSync(server.samplesFile)) await new Promise((resolve) => setTimeout(resolve, 50));
  return { profile: JSON.parse(readFileSync(server.samplesFile, 'utf8')) as HeapProfile, seconds };
}

function bytesOf(profile: HeapProfile): number {
  return profile.samples.reduce((sum, sample) => sum + sample.size, 0);
}

/** Exactly `requests` requests at 16 connections; answers how many were 2xx. */
function drive(url: string, path: string, route: Route, requests: number): Promise<number> {
  return new Promise((resolve, reject) => {
    autocannon(
      {
        url: `${url}${path}`,
        method: route.method,
        body: route.body,
        headers: route.body ? { 'content-type': 'application/json' } : {},
        requests: [
          { setupRequest: (request) => ({ ...request, path: path.replace('[<item>]', `seed-${randomInt(ITEMS)}`) }) },
        ],
        connections: 16,
        amount: requests,
      },
      (error, result) => (error ? reject(error) : resolve(result['2xx'])),
    );
  });
}

/** Bytes per answered request: the span's bytes less the background's at its rate. */
async function bytesPerRequest(server: Server, route: Route, idleBytesPerSec: number): Promise<number> {
  const path = server.name === 'service' ? route.service : route.handRolled;
  let answered = 0;
  const span = await sampled(server, async () => {
    answered = await drive(server.url, path, route, REQUESTS);
  });
  if (answered < REQUESTS * 0.99) throw new Error(`${server.name}: ${REQUESTS - answered} answers were not 2xx`);
  return (bytesOf(span.profile) - idleBytesPerSec * span.seconds) / answered;
}

/** The servers' background allocation per second: a span as long as a round, with no requests. */
async function idleRate(server: Server): Promise<number> {
  const span = await sampled(server, () => new Promise((resolve) => setTimeout(resolve, 3000)));
  return bytesOf(span.profile) / span.seconds;
}

const short = ({ functionName, url, lineNumber }: HeapNode['callFrame']) =>
  `${functionName || '(anonymous)'} (${url.replace(/.*node_modules\//, '').replace(/.*\/dist\//, 'src/')}:${lineNumber + 1})`;

/** The frames allocating most per request: by themselves, and by the nearest frame of ours above them. */
function frames(profile: HeapProfile, requests: number): void {
  const bytes = new Map<number, number>();
  for (const { nodeId, size } of profile.samples) bytes.set(nodeId, (bytes.get(nodeId) ?? 0) + size);
  const self = new Map<string, number>();
  const ours = new Map<string, number>();
  const add = (map: Map<string, number>, key: string, size: number) => map.set(key, (map.get(key) ?? 0) + size);
  const walk = (node: HeapNode, nearest: string) => {
    const here = node.callFrame.url.includes('/dist/') ? short(node.callFrame) : nearest;
    const size = bytes.get(node.id) ?? 0;
    if (size > 0) {
      add(self, short(node.callFrame), size);
      add(ours, here, size);
    }
    for (const child of node.children) walk(child, here);
  };
  walk(profile.head, '(none of ours)');
  for (const [title, map] of [
    ['allocating frame', self],
    ['nearest frame of ours', ours],
  ] as const) {
    console.log(`\n| ${title} | bytes per request |\n| --- | ---: |`);
    for (const [name, size] of [...map].sort((a, b) => b[1] - a[1]).slice(0, FRAMES))
      console.log(`| ${name} | ${Math.round(size / requests)} |`);
  }
}

async function start(redis: Redis, redisUrl: string, dir: string): Promise<Server[]> {
  const env = { REDIS_URL: redisUrl, ADMIN_TOKEN: BENCH_ADMIN_TOKEN, KEY_PREFIX: PREFIX };
  const serviceFile = join(dir, 'service.heapprofile');
  const service = await seededService({ ...env, HEAP_SAMPLES_FILE: serviceFile }, redis, PREFIX, {
    nodeArgs: SAMPLER,
  });
  const bareFile = join(dir, 'hand-rolled.heapprofile');
  const bare = await startBareServer({ ...env, BOARD, HEAP_SAMPLES_FILE: bareFile }, SAMPLER.slice(2));
  return [
    { name: 'service', ...service, samplesFile: serviceFile },
    { name: 'hand-rolled', ...bare, samplesFile: bareFile },
  ];
}

/** One route's row: after a warm-up, the bytes per request of each server, round by round. */
async function compareRoute(run: { route: Route; servers: Server[]; idle: Map<Server, number> }): Promise<void> {
  const { route, servers, idle } = run;
  for (const server of servers)
    await drive(server.url, server.name === 'service' ? route.service : route.handRolled, route, 500);
  const per: Record<Server['name'], number[]> = { service: [], 'hand-rolled': [] };
  for (let round = 0; round < ROUNDS; round++)
    for (const server of servers) per[server.name].push(await bytesPerRequest(server, route, idle.get(server)!));
  const [s, h] = [median(per.service), median(per['hand-rolled'])];
  const rounds = per.service.map((v, i) => `${Math.round(v)} / ${Math.round(per['hand-rolled'][i])}`).join(', ');
  console.log(`| ${route.name} | ${Math.round(s)} | ${Math.round(h)} | ${(s / h).toFixed(2)} | ${rounds} |`);
}

export async function allocationsBench(): Promise<void> {
  const redisServer = await startRedisServer();
  const redis = new Redis(redisServer.url);
  const dir = mkdtempSync(join(tmpdir(), 'tb-allocations-'));
  let servers: Server[] = [];
  try {
    servers = await start(redis, redisServer.url, dir);
    const idle = new Map<Server, number>();
    for (const server of servers) idle.set(server, await idleRate(server));
    console.log(
      `${ROUNDS} rounds of ${REQUESTS} requests per route and server, 16 connections; load ${loadAverage()}.\n`,
    );
    console.log(
      '| route | service bytes per request | hand-rolled | service / hand-rolled | per round (service / hand-rolled) |',
    );
    console.log('| --- | ---: | ---: | ---: | --- |');
    for (const route of ROUTES) await compareRoute({ route, servers, idle });
    if (FRAMES > 0)
      for (const route of ROUTES) {
        console.log(`\n#### The service's ${route.name}: where its bytes are allocated`);
        let answered = 0;
        const span = await sampled(servers[0], async () => {
          answered = await drive(servers[0].url, route.service, route, REQUESTS);
        });
        frames(span.profile, answered);
      }
  } finally {
    redis.disconnect();
    for (const server of servers) await stopChild(server.child);
    await stopChild(redisServer.child);
    rmSync(dir, { recursive: true, force: true });
  }
}
