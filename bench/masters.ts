/**
 * Scale-out over Cluster masters (`npm run bench -- --part masters`;
 * BENCH_SKIP=masters leaves it out of `npm run bench`): for 1, 2 and 3 masters (MASTERS_BENCH_MAX), a
 * private Redis Cluster of that many masters and two service instances (dist/main.js) on it, one board of
 * MASTERS_BENCH_SHARDS shards (default 6, so every master serves some) with one 1 h window:
 *   - HTTP: single increments on random items, and batches of 100 entries (events = entries), through
 *     both instances for MASTERS_BENCH_SEC (default 5) each;
 *   - stream ingest: MASTERS_BENCH_BACKLOG events (default 100 000) in a Redis stream on a redis-server
 *     of its own, the source declared, until the source's lag is 0.
 * For each: events/s, and CPU per event from /proc (the two service processes; every master, and the
 * busiest master alone). On this 2-core machine the processes share the cores, so events/s cannot grow
 * with masters here: what a master adds is read from Redis' CPU per event, which the per-master
 * figures give (docs/scaling.md holds the model built on them).
 */
import { ChildProcess } from 'node:child_process';
import Redis from 'ioredis';
import { startRedisCluster } from '../harness/cluster';
import { stopChild } from '../harness/processes';
import { cannon, fmt } from './load';
import { cpuSeconds, startRedisServer, startService, waitForHttp } from './process-stats';

const MAX_MASTERS = Number(process.env.MASTERS_BENCH_MAX ?? 3);
const SHARDS = Number(process.env.MASTERS_BENCH_SHARDS ?? 6);
const SECONDS = Number(process.env.MASTERS_BENCH_SEC ?? 5);
const BACKLOG = Number(process.env.MASTERS_BENCH_BACKLOG ?? 100_000);
const ADMIN = { authorization: `Bearer ${'m'.repeat(32)}`, 'content-type': 'application/json' };
const BATCH_ENTRIES = 100;
const ITEMS = 10_000;

interface Figures {
  eventsPerSec: number;
  serviceMicrosPerEvent: number;
  redisMicrosPerEvent: number;
  busiestMasterShare: number;
}

interface Fleet {
  urls: string[];
  servicePids: number[];
  masterPids: number[];
  streamUrl: string;
}

/** CPU seconds of each process now. */
const cpuOf = (pids: number[]) => pids.map((pid) => cpuSeconds(pid));

/** Runs `load` (answering the events it made) and reads the processes' CPU around it. */
async function measured(fleet: Fleet, load: () => Promise<{ events: number; seconds: number }>): Promise<Figures> {
  const serviceBefore = cpuOf(fleet.servicePids);
  const masterBefore = cpuOf(fleet.masterPids);
  const { events, seconds } = await load();
  const serviceSpent = cpuOf(fleet.servicePids).reduce((sum, cpu, i) => sum + cpu - serviceBefore[i], 0);
  const masterSpent = cpuOf(fleet.masterPids).map((cpu, i) => cpu - masterBefore[i]);
  const redisSpent = masterSpent.reduce((sum, cpu) => sum + cpu, 0);
  return {
    eventsPerSec: events / seconds,
    serviceMicrosPerEvent: (serviceSpent * 1e6) / events,
    redisMicrosPerEvent: (redisSpent * 1e6) / events,
    busiestMasterShare: Math.max(...masterSpent) / Math.max(redisSpent, 1e-9),
  };
}

/** Both instances under autocannon at once (25 connections each). */
async function httpLoad(fleet: Fleet, batch: boolean): Promise<{ events: number; seconds: number }> {
  const body = JSON.stringify({
    items: Array.from({ length: BATCH_ENTRIES }, (_, i) => ({ item: `b-${i}`, amount: 1 })),
  });
  const route = batch
    ? { method: 'POST' as const, path: '/boards/scale/increments', body }
    : { method: 'POST' as const, path: '/boards/scale/items/[<item>]/increment', body: '{}', randomItems: ITEMS };
  const runs = await Promise.all(fleet.urls.map((url) => cannon(url, route, undefined, SECONDS, 25)));
  const requests = runs.reduce((sum, run) => sum + run.ok, 0);
  const refused = runs.reduce((sum, run) => sum + run.non2xx, 0);
  if (refused > 0) console.log(`(${refused} answers were not 2xx: ${batch ? 'batches' : 'increments'})`);
  return { events: requests * (batch ? BATCH_ENTRIES : 1), seconds: SECONDS };
}

/** A backlog in the stream, then the source declared; until every event is applied. */
async function ingestLoad(fleet: Fleet, round: number): Promise<{ events: number; seconds: number }> {
  const stream = new Redis(fleet.streamUrl);
  try {
    const name = `events-${round}`;
    for (let sent = 0; sent < BACKLOG; sent += 1000) {
      const pipeline = stream.pipeline();
      for (let i = sent; i < Math.min(BACKLOG, sent + 1000); i++)
        pipeline.xadd(name, '*', 'event', JSON.stringify({ item: `s-${(i * 7919) % ITEMS}` }));
      await pipeline.exec();
    }
    const startedMs = performance.now();
    const source = `src-${round}`;
    await expectOk(
      fetch(`${fleet.urls[0]}/admin/ingest/${source}`, {
        method: 'PUT',
        headers: ADMIN,
        body: JSON.stringify({ kind: 'redis-stream', stream: name, url: fleet.streamUrl, board: 'scale' }),
      }),
    );
    while ((await appliedOf(fleet.urls[0], source)) < BACKLOG) await new Promise((resolve) => setTimeout(resolve, 50));
    return { events: BACKLOG, seconds: (performance.now() - startedMs) / 1000 };
  } finally {
    stream.disconnect();
  }
}

async function appliedOf(url: string, source: string): Promise<number> {
  const answer = (await (await fetch(`${url}/admin/ingest`, { headers: ADMIN })).json()) as {
    sources: Array<{ name: string; applied: number }>;
  };
  return answer.sources.find((s) => s.name === source)?.applied ?? 0;
}

async function expectOk(pending: Promise<Response>): Promise<void> {
  const response = await pending;
  if (!response.ok) throw new Error(`${response.url}: ${response.status} ${await response.text()}`);
}

/** A Cluster of `masters`, a stream server and two instances; stopped after `run`. */
async function withFleet<T>(masters: number, run: (fleet: Fleet) => Promise<T>): Promise<T> {
  // A lone master never learns its own address from a MEET: it would answer CLUSTER SLOTS with no host.
  const cluster = await startRedisCluster(['--cluster-announce-ip', '127.0.0.1'], { masters });
  const streamServer = await startRedisServer();
  const services: ChildProcess[] = [];
  try {
    const urls: string[] = [];
    for (let i = 0; i < 2; i++) {
      const { child, url } = await startService({
        REDIS_CLUSTER_NODES: cluster.nodes,
        ADMIN_TOKEN: 'm'.repeat(32),
        LOG_LEVEL: 'warn',
        RATE_LIMIT_PER_SEC: '0',
        QUOTA_NEW_ITEMS: '0',
        INGEST_REFRESH_MS: '200',
      });
      services.push(child);
      urls.push(url);
    }
    for (const url of urls) await waitForHttp(`${url}/health/ready`);
    await expectOk(
      fetch(`${urls[0]}/admin/boards/scale`, {
        method: 'PUT',
        headers: ADMIN,
        body: JSON.stringify({ shards: SHARDS, windows: [{ period: '1h', interval: '1m' }] }),
      }),
    );
    const servicePids = services.map((child) => child.pid).filter((pid) => pid !== undefined);
    return await run({ urls, servicePids, masterPids: cluster.pids(), streamUrl: streamServer.url });
  } finally {
    await Promise.all(services.map(stopChild));
    await stopChild(streamServer.child);
    await cluster.stopServer();
  }
}

function row(masters: number, path: string, f: Figures): string {
  return `| ${masters} | ${path} | ${fmt(f.eventsPerSec)} | ${f.serviceMicrosPerEvent.toFixed(1)} | ${f.redisMicrosPerEvent.toFixed(1)} | ${(f.redisMicrosPerEvent / masters).toFixed(1)} | ${(f.busiestMasterShare * 100).toFixed(0)} % |`;
}

export async function mastersBench(): Promise<void> {
  console.log(
    `## Scale-out over Cluster masters (two instances, one board of ${SHARDS} shards, ${SECONDS} s per HTTP run, ${fmt(BACKLOG)}-event backlog)\n`,
  );
  console.log(
    '| masters | path | events/s | service CPU µs/event | Redis CPU µs/event (all masters) | per master | busiest master |',
  );
  console.log('|---|---|---|---|---|---|---|');
  for (let masters = 1; masters <= MAX_MASTERS; masters++) {
    await withFleet(masters, async (fleet) => {
      console.log(row(masters, 'HTTP increment', await measured(fleet, () => httpLoad(fleet, false))));
      console.log(row(masters, `HTTP batch of ${BATCH_ENTRIES}`, await measured(fleet, () => httpLoad(fleet, true))));
      console.log(row(masters, 'stream ingest', await measured(fleet, () => ingestLoad(fleet, masters))));
    });
  }
  console.log('');
}
