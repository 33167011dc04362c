/**
 * Boards at rest (BENCH_SKIP=idle leaves it out): for 1 board and for IDLE_BENCH_BOARDS boards (default
 * 20 000), a private redis-server and two service instances (dist/main.js, scheduler on, default
 * interval) sit idle for IDLE_BENCH_SEC (default 30): the CPU each service and Redis spend per second,
 * Redis commands and expire calls per second (expire calls told apart by the script's SHA1, from
 * MONITOR). Each board has two windows (1 h in 5 min slots, 24 h in 1 h slots) and one increment, so
 * it holds data and an entry in the due index, but nothing falls due during the rest. Also: creating
 * the boards (IDLE_BENCH_SEED=put: through the API, PUT, 64 in flight; bulk, the default: the service's
 * own code in this process, bench/idle-seed.ts, the same keys checked on one board made each way), pages of
 * GET /boards, and then, with the boards still there, how long the two instances take and what CPU they
 * spend to drain IDLE_BENCH_DUE boards (default 20 000; 0 leaves it out) falling due at once: the
 * scheduler's cost follows the due boards, not the boards at rest.
 */
import { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import Redis from 'ioredis';
import { AppConfig } from '../src/common/config';
import { RankingKeys } from '../src/ranking/core/ranking.keys';
import { RANKING } from '../src/ranking/ranking.functions';
import { stopChild } from '../harness/processes';
import { cpuSeconds, startRedisServer, startService, waitForHttp } from './process-stats';
import { boardFootprint, seedBoards } from './idle-seed';

const S = RANKING.functions;

const BOARDS = Number(process.env.IDLE_BENCH_BOARDS ?? 20_000);
const REST_SEC = Number(process.env.IDLE_BENCH_SEC ?? 30);
/** Boards falling due at once after the rest (0 leaves them out; it waits up to a minute for them). */
const DUE_BOARDS = Number(process.env.IDLE_BENCH_DUE ?? 20_000);
const BULK = process.env.IDLE_BENCH_SEED !== 'put';
const ADMIN_TOKEN = 'bench-admin-token-0123456789';
const IN_FLIGHT = 64;
/**
 * IDLE_BENCH_LISTPACK_VALUE=<bytes>: redis-server's hash-max-listpack-value (default 64). The bench's
 * windows are stored as text under 64 bytes, so the config hash is a listpack with the default; a
 * board with views or windows with snapshots holds a longer value, a hash table unless this is raised
 * (docs/operations.md).
 */
const LISTPACK_VALUE = process.env.IDLE_BENCH_LISTPACK_VALUE;
const WINDOWS = {
  windows: [
    { period: '1h', interval: '5m' },
    { name: 'day', period: '24h', interval: '1h' },
  ],
};

interface RestFigures {
  boards: number;
  createSec: number;
  /** Redis used_memory added by the boards (each with its data), per board. */
  bytesPerBoard: number;
  serviceCpuPct: number[];
  /** Each service's resident memory at the end of the rest, MB. */
  serviceRssMb: number[];
  redisCpuPct: number;
  commandsPerSec: number;
  expireCallsPerSec: number;
  scriptCallsPerSec: number;
  pages: Array<{ query: string; medianMs: number }>;
  due?: string;
}

export async function idleBoardsBench(): Promise<void> {
  console.log(
    `## Boards at rest (two instances, scheduler every 1 s, ${REST_SEC} s at rest, two windows and one increment per board)\n`,
  );
  const rows: RestFigures[] = [];
  for (const boards of [1, BOARDS]) rows.push(await atRest(boards));
  console.log(
    `| boards | create (${BULK ? 'in-process, 512 in flight' : 'PUT, 64 in flight'}) | Redis memory per board | service CPU, % of a core (each instance) | service RSS, MB | Redis CPU, % of a core | Redis commands/s | script calls/s | expire calls/s |`,
  );
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const r of rows)
    console.log(
      `| ${r.boards.toLocaleString('en')} | ${r.createSec.toFixed(1)} s (${Math.round(r.boards / r.createSec).toLocaleString('en')}/s) | ${Math.round(r.bytesPerBoard).toLocaleString('en')} B | ${r.serviceCpuPct.map((p) => p.toFixed(2)).join(' / ')} | ${r.serviceRssMb.map((mb) => mb.toFixed(0)).join(' / ')} | ${r.redisCpuPct.toFixed(2)} | ${r.commandsPerSec.toFixed(1)} | ${r.scriptCallsPerSec.toFixed(1)} | ${r.expireCallsPerSec.toFixed(2)} |`,
    );
  const last = rows[rows.length - 1];
  console.log(`\nGET /boards at ${last.boards.toLocaleString('en')} boards (median of 20, ms):\n`);
  console.log('| query | ms |');
  console.log('|---|---|');
  for (const page of last.pages) console.log(`| \`${page.query}\` | ${page.medianMs.toFixed(1)} |`);
  console.log();
  for (const r of rows)
    if (r.due !== undefined) console.log(`With ${r.boards.toLocaleString('en')} at rest: ${r.due}\n`);
}

interface Fleet {
  redis: Redis;
  redisUrl: string;
  redisPid: number | undefined;
  services: ChildProcess[];
  urls: string[];
}

/** A private redis-server and two service instances on it; stopped after `run`. */
async function withFleet<T>(run: (fleet: Fleet) => Promise<T>): Promise<T> {
  const redisServer = await startRedisServer(LISTPACK_VALUE ? ['--hash-max-listpack-value', LISTPACK_VALUE] : []);
  const services: ChildProcess[] = [];
  let redis: Redis | undefined;
  try {
    redis = new Redis(redisServer.url);
    const urls: string[] = [];
    for (let i = 0; i < 2; i++) {
      const { child, url } = await startService({
        REDIS_URL: redisServer.url,
        ADMIN_TOKEN,
        LOG_LEVEL: 'warn',
        QUOTA_NEW_ITEMS: '0',
      });
      services.push(child);
      urls.push(url);
    }
    for (const url of urls) await waitForHttp(`${url}/health/ready`);
    return await run({ redis, redisUrl: redisServer.url, redisPid: redisServer.child.pid, services, urls });
  } finally {
    redis?.disconnect();
    await Promise.all(services.map(stopChild));
    await stopChild(redisServer.child);
  }
}

/** Creates the boards through the API (the two instances alternating) and increments each once; answers the creation time (s). */
async function boardsWithData(
  fleet: Fleet,
  names: string[],
  config: { windows: Array<{ period: string | number; interval: string | number }> },
  bulk = BULK,
): Promise<number> {
  const createStarted = performance.now();
  if (bulk) {
    await seedBoards(fleet.redisUrl, names, config);
    return (performance.now() - createStarted) / 1000;
  }
  await inParallel(names, (name, i) =>
    expectStatus(
      () =>
        fetch(`${fleet.urls[i % 2]}/admin/boards/${name}`, {
          method: 'PUT',
          headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
          body: JSON.stringify(config),
        }),
      [201, 200],
    ),
  );
  const createSec = (performance.now() - createStarted) / 1000;
  await inParallel(names, (name, i) =>
    // A write says what it sends, even with no body (a 415 otherwise). No Idempotency-Key: its stored
    // answer would count as the board's memory; a repeat after a 503 only adds 1 to a count nobody reads.
    expectStatus(
      () =>
        fetch(`${fleet.urls[i % 2]}/boards/${name}/items/x/increment`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
        }),
      [200],
    ),
  );
  return createSec;
}

function boardNames(boards: number): string[] {
  return Array.from({ length: boards }, (_, i) => `idle-${String(i).padStart(6, '0')}`);
}

/** The boards made and written once: Redis's bytes per board once the writes' effects settle, and the making's seconds. */
async function filledBytes(fleet: Fleet, names: string[]): Promise<{ bytesPerBoard: number; createSec: number }> {
  const emptyBytes = await usedMemory(fleet.redis);
  const createSec = await boardsWithData(fleet, names, WINDOWS);
  await new Promise((resolve) => setTimeout(resolve, 2000)); // let the last writes' effects settle
  return { bytesPerBoard: ((await usedMemory(fleet.redis)) - emptyBytes) / names.length, createSec };
}

/** REST_SEC of rest: samples before and after, and the expire calls MONITOR saw meanwhile. */
async function restSpell(fleet: Fleet) {
  const monitor = await fleet.redis.monitor();
  let expireCalls = 0;
  monitor.on('monitor', (_time: string, args: string[]) => {
    if (args[0]?.toLowerCase() === 'fcall' && args[1] === S.expire.redisName) expireCalls++;
  });
  const before = await restSample(fleet);
  const startedMs = performance.now();
  await new Promise((resolve) => setTimeout(resolve, REST_SEC * 1000));
  const seconds = (performance.now() - startedMs) / 1000;
  const after = await restSample(fleet);
  monitor.disconnect();
  return { seconds, before, after, expireCalls };
}

/** The board listing's median time over 20 requests, for a first page, a big one, a late offset and a cursor. */
async function listingPages(url: string, names: string[]): Promise<RestFigures['pages']> {
  const boards = names.length;
  const pages: RestFigures['pages'] = [];
  for (const query of [
    '?limit=100',
    '?limit=1000',
    `?limit=100&offset=${Math.max(0, boards - 100)}`,
    `?limit=100&cursor=${names[Math.floor(boards / 2)]}`,
  ]) {
    const times: number[] = [];
    for (let i = 0; i < 20; i++) {
      const started = performance.now();
      await expectStatus(() => fetch(`${url}/boards${query}`), [200]);
      times.push(performance.now() - started);
    }
    pages.push({ query: `GET /boards${query}`, medianMs: times.sort((a, b) => a - b)[10] });
  }
  return pages;
}

async function atRest(boards: number): Promise<RestFigures> {
  return withFleet(async (fleet) => {
    const names = boardNames(boards);
    const { bytesPerBoard, createSec } = await filledBytes(fleet, names);
    const { seconds, before, after, expireCalls } = await restSpell(fleet);
    if (boards > 1) await checkSameKeys(fleet);
    const pages = await listingPages(fleet.urls[0], names);
    // MONITOR's own commands are not the service's: the counts below leave the monitoring client out.
    return {
      boards,
      createSec,
      bytesPerBoard,
      serviceCpuPct: after.serviceCpu.map((cpu, i) => ((cpu - before.serviceCpu[i]) / seconds) * 100),
      serviceRssMb: fleet.services.map((service) => residentMb(service.pid)),
      redisCpuPct: ((after.redisCpu - before.redisCpu) / seconds) * 100,
      commandsPerSec: (after.commands - before.commands - 2) / seconds,
      scriptCallsPerSec: (after.scriptCalls - before.scriptCalls) / seconds,
      expireCallsPerSec: expireCalls / seconds,
      pages,
      due: DUE_BOARDS > 0 ? await dueAtOnce(fleet, DUE_BOARDS) : undefined,
    };
  });
}

/** One board made through HTTP and one by the bulk path: the same keys, types, sizes and index entries. */
async function checkSameKeys(fleet: Fleet): Promise<void> {
  const keys = new RankingKeys(new AppConfig().KEY_PREFIX);
  const indexes = [keys.boardRegistry(), keys.dueIndex()];
  await boardsWithData(fleet, ['probe-h'], WINDOWS, false);
  await boardsWithData(fleet, ['probe-b'], WINDOWS, true);
  const [put, bulk] = [
    await boardFootprint(fleet.redis, 'probe-h', indexes),
    await boardFootprint(fleet.redis, 'probe-b', indexes),
  ];
  if (put.join('\n') !== bulk.join('\n'))
    throw new Error(`bulk seeding differs from PUT:\n${put.join('\n')}\n---\n${bulk.join('\n')}`);
  console.log(
    `A board made by PUT and one made in bulk hold the same keys:\n\n${put.map((row) => `- ${row}`).join('\n')}\n`,
  );
}

/**
 * Every board falls due at once: one window of 1 min in one slot, one increment each, so each board's
 * slot expires at the next minute boundary after it was written (slot boundaries are aligned). From the
 * first due time until the due index and the leases are empty: how long the two instances take to
 * drain them all, and the CPU they and Redis spend per board.
 */
async function dueAtOnce(fleet: Fleet, boards: number): Promise<string> {
  const { redis } = fleet;
  const keys = new RankingKeys(new AppConfig().KEY_PREFIX);
  const names = Array.from({ length: boards }, (_, i) => `due-${String(i).padStart(6, '0')}`);
  await boardsWithData(fleet, names, { windows: [{ period: 60, interval: 60 }] });
  const dues = (await redis.zmscore(keys.dueIndex(), ...names)).map(Number);
  const firstDueMs = Math.min(...dues);
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, firstDueMs - Date.now())));
  const before = await restSample(fleet);
  const startedMs = performance.now();
  const lastDueMs = Math.max(...dues);
  // The boards at rest stay in the due index (their slots expire an hour on): only these are waited for.
  while ((await redis.zcount(keys.dueIndex(), '-inf', lastDueMs)) + (await redis.zcard(keys.dueLeases())) > 0)
    await new Promise((resolve) => setTimeout(resolve, 100));
  const seconds = (performance.now() - startedMs) / 1000;
  const after = await restSample(fleet);
  const spentSec =
    after.serviceCpu.reduce((sum, cpu, i) => sum + cpu - before.serviceCpu[i], 0) + after.redisCpu - before.redisCpu;
  const lateSec = (lastDueMs - firstDueMs) / 1000;
  return `${boards.toLocaleString('en')} boards falling due within ${lateSec.toFixed(0)} s of each other (one 1-minute window, one increment each): drained ${seconds.toFixed(1)} s after the first due time by the two instances; CPU (both services + Redis) ${spentSec.toFixed(1)} s, ${((spentSec / boards) * 1e6).toFixed(0)} µs per board; script calls ${(after.scriptCalls - before.scriptCalls).toLocaleString('en')}.`;
}

/** A process's resident memory, MB (Linux /proc; 0 elsewhere). */
function residentMb(pid: number | undefined): number {
  try {
    return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
  } catch {
    return 0;
  }
}

async function usedMemory(redis: Redis): Promise<number> {
  return Number(/used_memory:(\d+)/.exec(await redis.info('memory'))?.[1] ?? 0);
}

async function restSample({ redis, redisPid, services }: Fleet) {
  const stats = await redis.info('commandstats');
  const calls = (command: string) => Number(new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(stats)?.[1] ?? 0);
  const info = await redis.info('stats');
  return {
    serviceCpu: services.map((service) => cpuSeconds(service.pid)),
    redisCpu: cpuSeconds(redisPid),
    commands: Number(/total_commands_processed:(\d+)/.exec(info)?.[1] ?? 0),
    scriptCalls: calls('evalsha') + calls('eval') + calls('fcall') + calls('fcall_ro'),
  };
}

async function inParallel<T>(values: T[], run: (value: T, index: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < values.length) {
      const index = next++;
      await run(values[index], index);
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
}

/** Sends (again on a 503: Redis busy on a loaded machine) until `statuses`. */
async function expectStatus(send: () => Promise<Response>, statuses: number[]): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const response = await send();
    if (statuses.includes(response.status)) return;
    if (response.status !== 503 || attempt >= 5)
      throw new Error(`${response.url}: ${response.status} ${await response.text()}`);
  }
}
