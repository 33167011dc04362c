/**
 * `npm run abuse`, worst-case part: the standing harness of harness/worst-case at full size (or
 * WORST_SCALE=ci), on a private single node and a private 3-master Cluster: every route's costliest
 * documented use on boards with every option at its maximum, held to the targets — no Redis call over
 * 5 ms, no request over 20 ms of Redis — and every growing route stopped by a quota. Prints the table
 * docs/security.md keeps (WORST_CASE_TABLE_FILE=<path> writes both topologies' tables there too).
 * WORST_CASE_ROWS=<regular expression> runs only the rows whose route and worst request match it,
 * WORST_TOPOLOGIES=single (or cluster) one topology only; WORST_CASE_SEED_LOG=<path> logs seeding's steps
 * (seed-log.ts). Each row's figures are printed as it ends: a run stopped early keeps the rows it ran.
 * WORST_CASE_SEEDED=<dir> (single node only: a run with the Cluster topology is refused) keeps the
 * seeded data: the first run seeds, then SAVEs it into <dir> (harness/worst-case/seeded-snapshot.ts); a
 * later run of the same WORST_SCALE loads it and skips seeding (at full size 45-53 minutes). A snapshot
 * is refused once its shortest-lived key has expired on Redis' real clock (seeded.json shortestTtlMs:
 * TTLs count from the fake clock's time, Redis' runs on): at ci scale the snapshots' keys, 16.7 hours after
 * the save; wc-cross' segment marks (3 minutes) and the stats pairs (about an hour) are written again by
 * their rows. The rows' writes never reach the file: it is reused as saved. A seeded.rdb without its
 * seeded.json (a run stopped between the SAVE and the file) is refused, not seeded on: remove it to seed again.
 * BENCH_REDIS_REALTIME=1 (root) runs every redis-server it starts under SCHED_FIFO
 * (bench/process-stats.ts), so the host's stalls do not hide a call's own time.
 */
import { appendFileSync, writeFileSync } from 'node:fs';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { Redis } from 'ioredis';
import { startTestApp } from '../../harness/app';
import { FakeClock } from '../../harness/clock';
import { startTestRedis, type TestRedis, type Topology } from '../../harness/redis';
import { appContext, HARNESS_ENV, LOW_QUOTAS, SEEDER_QUOTAS } from '../../harness/worst-case/app-context';
import type { Scale } from '../../harness/worst-case/boards';
import { rowFaults, runWorstCase, WORST_ROWS, worstCaseTable } from '../../harness/worst-case/harness';
import type { HarnessContext, RowFigures } from '../../harness/worst-case/harness-types';
import { RedisMeter } from '../../harness/worst-case/redis-meter';
import { seedBoards } from '../../harness/worst-case/seed';
import {
  checkLoaded,
  checkSeeded,
  readSeeded,
  saveSeeded,
  type SeededMeta,
  seededServerArgs,
  warmBoardCaches,
} from '../../harness/worst-case/seeded-snapshot';
import { runRealtime } from '../process-stats';
import type { AbusePart, AbuseRow } from './abuse-part';

const TARGETS = { callMs: 5, requestMs: 20 };
const MINUTE_MS = 60_000;
const TIMEOUT = { REDIS_COMMAND_TIMEOUT_MS: '60000' };

type Node = { info(section: 'server'): Promise<string> };

const ONLY = process.env.WORST_CASE_ROWS;
const ROWS = ONLY ? WORST_ROWS.filter((row) => new RegExp(ONLY).test(`${row.route} ${row.worst}`)) : WORST_ROWS;

function abuseRow(topology: Topology, n: number, row: RowFigures): AbuseRow {
  const faults = rowFaults({ ...ROWS[n], open: undefined }, row, TARGETS);
  return {
    attack: `${topology}: ${row.route}, ${row.worst}`,
    measured: `${row.calls} calls, longest ${row.maxCallMs.toFixed(2)} ms, request ${row.requestMs.toFixed(2)} ms${faults.length ? `; ${faults.join('; ')}` : ''}`,
    held: faults.length === 0,
  };
}

/** The rows one at a time, each printed as it ends (a run stopped early keeps what it measured). */
async function runRows(topology: Topology, context: HarnessContext, meter: RedisMeter): Promise<RowFigures[]> {
  const figures: RowFigures[] = [];
  for (const row of ROWS) {
    figures.push(...(await runWorstCase(context, meter, [row])));
    const { attack, measured, held } = abuseRow(topology, figures.length - 1, figures[figures.length - 1]);
    console.log(`row ${figures.length}/${ROWS.length} ${held ? 'held' : 'NOT HELD'}: ${attack}: ${measured}`);
  }
  return figures;
}

/** Each node's redis-server under SCHED_FIFO, found by the process id it reports. */
async function realtime(nodes: Node[]): Promise<void> {
  for (const node of nodes) runRealtime(Number(/process_id:(\d+)/.exec(await node.info('server'))?.[1]));
}

const SEEDED = process.env.WORST_CASE_SEEDED;

/** A private server on WORST_CASE_SEEDED's snapshot when it holds one (undefined meta: none yet, seed and save). */
async function startRedis(topology: Topology, scale: Scale): Promise<{ redis: TestRedis; meta?: SeededMeta }> {
  if (!SEEDED) return { redis: await startTestRedis(topology) };
  const meta = readSeeded(SEEDED);
  if (meta) checkSeeded(meta, scale);
  const redis = await startTestRedis(topology, { serverArgs: seededServerArgs(SEEDED), prefix: meta?.prefix });
  if (meta) await checkLoaded(redis.client as Redis, SEEDED, meta.prefix);
  return { redis, meta };
}

type Apps = { measured: NestFastifyApplication; seeder: NestFastifyApplication };

/** Seeds (and saves into WORST_CASE_SEEDED), or takes the saved seeding's state and the apps' board caches. */
async function seeded(context: HarnessContext, meter: RedisMeter, redis: TestRedis, apps: Apps, meta?: SeededMeta) {
  if (meta) {
    for (const [key, value] of Object.entries(meta.state)) context.state.set(key, value);
    return warmBoardCaches(apps);
  }
  await seedBoards(context, meter);
  if (!SEEDED || 'nodes' in redis.client) return;
  // What a fresh run's first row would flush and wait for, in the saved data too.
  await context.statsFlushed();
  await context.dropsSettled();
  const state = Object.fromEntries(context.state);
  const nowMs = context.nowSec() * 1000;
  const saved = await saveSeeded(redis.client, SEEDED, { prefix: redis.prefix, nowMs, scale: context.scale, state });
  console.log(`WORST_CASE_SEEDED: saved into ${SEEDED}: ${JSON.stringify(saved)}`);
}

async function runOn(topology: Topology, scale: Scale): Promise<AbuseRow[]> {
  const { redis, meta } = await startRedis(topology, scale);
  const clock = new FakeClock(meta?.nowMs ?? Math.floor(Date.now() / MINUTE_MS) * MINUTE_MS);
  const env = { ...TIMEOUT, ...HARNESS_ENV };
  const apps: NestFastifyApplication[] = [];
  try {
    const measured = await startTestApp(redis, clock, { ...env, ...LOW_QUOTAS });
    apps.push(measured);
    // The bench's timeout over the seeder's own (10 s): a loaded machine queues a seeding call longer.
    const seeder = await startTestApp(redis, clock, { ...env, ...SEEDER_QUOTAS, ...TIMEOUT });
    apps.push(seeder);
    // The seeder's requests are injected (app-context.ts): only the measured app listens.
    await measured.listen(0, '127.0.0.1');
    const context = appContext({ measured, seeder }, clock, scale);
    const client = redis.client;
    const meter = new RedisMeter(async () => ('nodes' in client ? client.nodes('master') : [client]) as never);
    const nodes = (): Node[] => ('nodes' in client ? client.nodes('all') : [client]);
    // Before seeding too: on a loaded host Redis then keeps a core while the seeder feeds it.
    if (process.env.BENCH_REDIS_REALTIME === '1') await realtime(nodes());
    await seeded(context, meter, redis, { measured, seeder }, meta);
    await meter.start();
    const figures = await runRows(topology, context, meter);
    await meter.stop();
    const table = `\n### ${topology}, scale ${scale}\n\n${worstCaseTable(figures)}\n`;
    console.log(table);
    if (process.env.WORST_CASE_TABLE_FILE) appendFileSync(process.env.WORST_CASE_TABLE_FILE, table);
    return figures.map((row, n) => abuseRow(topology, n, row));
  } finally {
    for (const app of apps) await app.close();
    await redis.stop();
  }
}

export const worstCaseAbuse: AbusePart = async () => {
  const scale = (process.env.WORST_SCALE ?? 'full') as Scale;
  if (process.env.WORST_CASE_TABLE_FILE) writeFileSync(process.env.WORST_CASE_TABLE_FILE, '');
  const topologies = (process.env.WORST_TOPOLOGIES ?? 'single,cluster').split(',') as Topology[];
  if (SEEDED && topologies.includes('cluster'))
    throw new Error('WORST_CASE_SEEDED keeps a single node only: run it with WORST_TOPOLOGIES=single');
  const rows: AbuseRow[] = [];
  for (const topology of topologies) rows.push(...(await runOn(topology, scale)));
  return rows;
};
