/**
 * History and the live stream (BENCH_SKIP=history,stream leaves them out).
 *
 * history: bytes Redis holds per stored snapshot row (16-character item ids): a window keeping
 * `keep` snapshots of `top` rows crosses `keep` slot boundaries (each crossing stores one snapshot),
 * then MEMORY USAGE of every snapshot key and the INFO used_memory delta.
 *
 * stream: a private redis-server and the service (dist/main.js), STREAM_BENCH_CLIENTS SSE clients
 * (default 1000) watching one board's top 10 while STREAM_BENCH_RATE increments/s (default 5000) go
 * (autocannon, fixed offered rate) to 5000 items for STREAM_BENCH_SEC (default 60). Write-to-screen
 * latency: a probe item kept at the top gets +1 every 100 ms; each client notes when it first sees
 * each probe value (or a later one), against when that probe's increment was sent. Service CPU per
 * increment is compared with the same offered load and no clients.
 */
import { ChildProcess } from 'node:child_process';
import autocannon from 'autocannon';
import { get, Agent, IncomingMessage } from 'node:http';
import Redis from 'ioredis';
import { PreparedBoard } from '../src/ranking/core/board';
import { RankingKeys } from '../src/ranking/core/ranking.keys';
import { RANKING } from '../src/ranking/ranking.functions';
import { UNLIMITED } from '../src/governance/growth-quota';
import { callFunction } from '../src/redis/redis-functions';
import { stopChild } from '../harness/processes';
import { cpuSeconds, startRedisServer, startService, waitForHttp } from './process-stats';

const S = RANKING.functions;

const ITEM_CHARS = 16;
const ADMIN_TOKEN = 'bench-admin-token-0123456789';

// ---------------------------------------------------------------- bytes per snapshot row

export async function historyMemoryBench(redis: Redis, budgetFields: number): Promise<void> {
  console.log(`## History: memory per stored snapshot row (${ITEM_CHARS}-character item ids)\n`);
  console.log('| window keeps | rows stored | snapshot keys, MEMORY USAGE per row | INFO used_memory delta per row |');
  console.log('|---|---|---|---|');
  for (const [keep, top] of [
    [100, 100],
    [100, 1000],
    [1000, 10],
  ]) {
    const { rows, keyBytes, usedBytes } = await measureSnapshots(redis, budgetFields, keep, top);
    console.log(
      `| ${keep} snapshots of ${top} rows | ${rows.toLocaleString('en')} | ${(keyBytes / rows).toFixed(1)} B | ${(usedBytes / rows).toFixed(1)} B |`,
    );
  }
  console.log();
}

/** A window of `keep` minutes in 1-minute slots, keeping `keep` snapshots of `top` rows. */
async function historyBoard(board: { redis: Redis; keep: number; top: number; nowMs: number }): Promise<PreparedBoard> {
  const { redis, keep, top, nowMs } = board;
  const keys = new RankingKeys('bench:');
  // A window of `keep` minutes in 1-minute slots: every snapshot it keeps is live at the end.
  const windows = [{ name: 'w', periodSec: keep * 60, intervalSec: 60, snapshots: { keep, top } }];
  const put = await callFunction(redis, S.boardPut, {
    keys: keys.board('hist'),
    windows,
    shards: 1,
    maxItems: undefined,
    views: [],
    version: 'v-hist',
    reset: false,
    nowMs,
  });
  if (put.status === 'conflict') throw new Error(put.message);
  return new PreparedBoard(
    {
      name: 'hist',
      version: put.version,
      shards: 1,
      views: [],
      windows: JSON.parse(put.windowsJson),
      maxItems: null,
    },
    (shard) => keys.board('hist', shard),
  );
}

/** The bytes of the snapshot keys (each snapshot, their index and the previous crossing's), and how many snapshots. */
async function snapshotKeyBytes(redis: Redis): Promise<{ keyBytes: number; snapshots: number }> {
  let keyBytes = 0;
  const snapshotKeys = [
    ...(await redis.keys('{bench:board:hist}:w:snap:*')),
    '{bench:board:hist}:w:snaps',
    '{bench:board:hist}:w:prev',
  ];
  for (const key of snapshotKeys) keyBytes += Number(await redis.memory('USAGE', key, 'SAMPLES', 0));
  return { keyBytes, snapshots: snapshotKeys.length - 2 };
}

async function measureSnapshots(
  redis: Redis,
  budgetFields: number,
  keep: number,
  top: number,
): Promise<{ rows: number; keyBytes: number; usedBytes: number }> {
  await redis.flushall();
  const nowMs = Math.floor(Date.now() / 60_000) * 60_000;
  const board = await historyBoard({ redis, keep, top, nowMs });
  const call = (atMs: number) => ({
    board,
    shard: board.shards[0],
    nowMs: atMs,
    budgetFields,
    newItems: UNLIMITED,
  });
  const item = (i: number) => `item-${String(i).padStart(ITEM_CHARS - 5, '0')}`;
  // The rows: `top` items with distinct scores up to 6 digits.
  for (let first = 0; first < top; first += 1000) {
    const entries = Array.from({ length: Math.min(1000, top - first) }, (_, i) => ({
      item: item(first + i),
      amount: 100_000 + first + i,
    }));
    await callFunction(redis, S.incrementBatch, { ...call(nowMs), entries });
  }
  await redis.eval("collectgarbage('collect') return 0", 0);
  const before = usedMemory(await redis.info('memory'));
  // Each minute's first call crosses a boundary: one snapshot of `top` rows. A history read crosses
  // like any script but writes no slot, so the memory delta is the snapshots' alone.
  const window = board.config.windows[0];
  for (let minute = 1; minute <= keep; minute++) {
    await callFunction(redis, S.historyRead, { ...call(nowMs + minute * 60_000), window, atSec: undefined });
  }
  // Garbage of the scripts' Lua heap (counted in used_memory) is not the snapshots' memory.
  await redis.eval("collectgarbage('collect') return 0", 0);
  const after = usedMemory(await redis.info('memory'));
  const { keyBytes, snapshots } = await snapshotKeyBytes(redis);
  return { rows: snapshots * top, keyBytes, usedBytes: after - before };
}

function usedMemory(info: string): number {
  return Number(/used_memory:(\d+)/.exec(info)?.[1]);
}

// ---------------------------------------------------------------- live stream under load

const CLIENTS = Number(process.env.STREAM_BENCH_CLIENTS ?? 1000);
const RATE = Number(process.env.STREAM_BENCH_RATE ?? 5000);
const DURATION_SEC = Number(process.env.STREAM_BENCH_SEC ?? 60);
const PROBE_MS = 100;
const PROBE_BASE = 1_000_000_000;
/** autocannon connections sending the write load. */
const WRITERS = 64;

interface LoadFigures {
  sentPerSec: number;
  /** Service CPU per increment answered (µs): comparable across runs that reached different rates. */
  cpuMicrosPerWrite: number;
  serviceCpuPct: number;
  redisCpuPct: number;
  latencies: number[];
  events: number;
}

export async function streamBench(): Promise<void> {
  console.log(
    `## Live stream: ${CLIENTS.toLocaleString('en')} SSE clients, ${RATE.toLocaleString('en')} increments/s offered for ${DURATION_SEC} s (STREAM_COALESCE_MS 250)\n`,
  );
  const without = await underLoad(0);
  const withClients = await underLoad(CLIENTS);
  const sorted = withClients.latencies.sort((a, b) => a - b);
  const pct = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
  console.log(
    '| clients | increments/s done | service CPU, % of a core | service CPU µs per increment | Redis CPU, % of a core | events received | write-to-screen p50 / p99 / max ms |',
  );
  console.log('|---|---|---|---|---|---|---|');
  for (const [clients, figures] of [
    [0, without],
    [CLIENTS, withClients],
  ] as const) {
    const latency =
      clients === 0 ? '—' : `${pct(50).toFixed(0)} / ${pct(99).toFixed(0)} / ${sorted[sorted.length - 1]?.toFixed(0)}`;
    console.log(
      `| ${clients.toLocaleString('en')} | ${Math.round(figures.sentPerSec).toLocaleString('en')} | ${figures.serviceCpuPct.toFixed(0)} | ${figures.cpuMicrosPerWrite.toFixed(0)} | ${figures.redisCpuPct.toFixed(0)} | ${figures.events.toLocaleString('en')} | ${latency} |`,
    );
  }
  const overheadMicros = withClients.cpuMicrosPerWrite - without.cpuMicrosPerWrite;
  console.log(
    `\nService CPU with ${CLIENTS.toLocaleString('en')} clients against none: ${overheadMicros >= 0 ? '+' : ''}${overheadMicros.toFixed(0)} µs per increment (${((overheadMicros * withClients.sentPerSec) / 1e4).toFixed(1)} % of a core at the rate reached); ${sorted.length.toLocaleString('en')} latency samples.\n`,
  );
}

type Send = (path: string, body: object, headers?: Record<string, string>) => Promise<Response>;

/** The service on a private redis-server, with the live board (one hour of minutes) and the probe item. */
async function startLive(children: ChildProcess[]) {
  const redis = await startRedisServer();
  children.push(redis.child);
  const { child: service, url: base } = await startService(
    {
      REDIS_URL: redis.url,
      ADMIN_TOKEN,
      LOG_LEVEL: 'error',
      HTTP_MAX_CONNECTIONS: String(CLIENTS + 1000),
    },
    true,
  );
  children.push(service);
  await waitForHttp(`${base}/health/live`);
  const send: Send = (path, body, headers = {}) =>
    fetch(`${base}${path}`, {
      method: path.startsWith('/admin') ? 'PUT' : 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
  await send(
    '/admin/boards/live',
    { windows: [{ period: '1h', interval: '1m' }] },
    { authorization: `Bearer ${ADMIN_TOKEN}` },
  );
  await send('/boards/live/items/probe/increment', { amount: PROBE_BASE });
  return { redisPid: redis.child.pid, servicePid: service.pid, base, send };
}

/** One stream client: it notes when it first sees each probe value, and counts the events. */
function openStream(client: {
  base: string;
  agent: Agent;
  streams: IncomingMessage[];
  seen: Map<number, number>;
  events: { count: number };
}): Promise<void> {
  const { base, agent, streams, seen, events } = client;
  return new Promise<void>((resolve, reject) => {
    get(`${base}/boards/live/stream?limit=10`, { agent }, (response) => {
      streams.push(response);
      response.setEncoding('utf8');
      let buffer = '';
      response.on('data', (chunk: string) => {
        const at = performance.now();
        buffer += chunk;
        let cut: number;
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (!data) continue;
          events.count++;
          const probe = (JSON.parse(data) as { items: Array<{ item: string; score: number }> }).items.find(
            (row) => row.item === 'probe',
          );
          if (probe && !seen.has(probe.score)) seen.set(probe.score, at);
        }
      });
      resolve();
    }).on('error', reject);
  });
}

/** The write load: autocannon at a fixed offered rate over 5 000 items. */
function offeredLoad(base: string): Promise<autocannon.Result> {
  let item = 0;
  return new Promise<autocannon.Result>((resolve, reject) =>
    autocannon(
      {
        url: `${base}/boards/live/items/i0/increment`,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
        connections: WRITERS,
        overallRate: RATE,
        duration: DURATION_SEC,
        requests: [
          {
            setupRequest: (request) => ({ ...request, path: `/boards/live/items/i${item++ % 5000}/increment` }),
          },
        ],
      },
      (error, result) => (error ? reject(error) : resolve(result)),
    ),
  );
}

/** The probe: +1 every PROBE_MS, timed from when it was sent (its answer says which score it made). */
async function probeUntil(probe: { send: Send; endMs: number; sentAt: Map<number, number> }): Promise<void> {
  const { send, endMs, sentAt } = probe;
  while (performance.now() < endMs) {
    const sendMs = performance.now();
    const res = await send('/boards/live/items/probe/increment', {});
    const body = (await res.json()) as { windows: Record<string, { score: number }> };
    sentAt.set(Object.values(body.windows)[0].score, sendMs);
    await new Promise((resolve) => setTimeout(resolve, PROBE_MS));
  }
}

/** Write-to-screen latencies: a probe value a client never saw (coalesced into a later one) counts as shown with the next one it saw. */
function latenciesOf(sentAt: Map<number, number>, seenAt: Array<Map<number, number>>): number[] {
  const probes = [...sentAt].sort((a, b) => a[0] - b[0]);
  const latencies: number[] = [];
  for (const seen of seenAt) {
    const shown = [...seen].sort((a, b) => a[0] - b[0]);
    let next = 0;
    for (const [score, sendMs] of probes) {
      while (next < shown.length && shown[next][0] < score) next++;
      if (next < shown.length) latencies.push(Math.max(0, shown[next][1] - sendMs));
    }
  }
  return latencies;
}

async function underLoad(clients: number): Promise<LoadFigures> {
  const children: ChildProcess[] = [];
  const agent = new Agent({ keepAlive: true, maxSockets: Infinity });
  const streams: IncomingMessage[] = [];
  try {
    const { redisPid, servicePid, base, send } = await startLive(children);
    const seenAt = Array.from({ length: clients }, () => new Map<number, number>());
    const events = { count: 0 };
    await Promise.all(seenAt.map((seen) => openStream({ base, agent, streams, seen, events })));
    const redisCpu0 = cpuSeconds(redisPid);
    const serviceCpu0 = cpuSeconds(servicePid);
    const startMs = performance.now();
    const sentAt = new Map<number, number>();
    const [result] = await Promise.all([
      offeredLoad(base),
      probeUntil({ send, endMs: startMs + DURATION_SEC * 1000, sentAt }),
    ]);
    const sent = result.requests.total;
    const elapsedSec = (performance.now() - startMs) / 1000;
    const serviceCpuPct = ((cpuSeconds(servicePid) - serviceCpu0) / elapsedSec) * 100;
    const redisCpuPct = ((cpuSeconds(redisPid) - redisCpu0) / elapsedSec) * 100;
    // Let the last events arrive.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    return {
      sentPerSec: sent / elapsedSec,
      cpuMicrosPerWrite: ((serviceCpuPct / 100) * elapsedSec * 1e6) / Math.max(1, sent),
      ...{ serviceCpuPct, redisCpuPct, latencies: latenciesOf(sentAt, seenAt), events: events.count },
    };
  } finally {
    for (const stream of streams) stream.destroy();
    agent.destroy();
    await Promise.all(children.reverse().map(stopChild));
  }
}
