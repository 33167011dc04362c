/**
 * `npm run abuse`, growth part: issue #45 rows 2 (batches of existing items, each with a new actor), 3
 * (batches of existing items naming 8 segments) and 8 (1 KB of data on every existing item), each
 * flooded by one client against a private redis-server and the built service (dist/main.js) twice:
 * with the growth quotas at their defaults, and with the three quotas off (QUOTA_*=0: what every
 * release before them did). Reports the bytes Redis holds per accepted request (INFO memory's
 * used_memory) and how many were refused. Loopback only; every flood bounded in count and time.
 */
import Redis from 'ioredis';
import { stopChild } from '../../harness/processes';
import { startRedisServer, startService, waitForHttp } from '../process-stats';
import { batchesOf, type DeclaredBoard, entriesPerCall } from '../write-batches';
import type { AbusePart, AbuseRow } from './abuse-part';

const ADMIN_TOKEN = 'abuse-admin-token-0123456789';
const ATTACKER = 'abuse-growth-attacker-0123456789';
const SEEDER = 'abuse-growth-seeder-0123456789ab';
const FLOOD_MS = 15_000;
const WINDOWS = [
  { name: 'hour', period: '1h', interval: '1m' },
  { name: 'day', period: '24h', interval: '1h' },
  { name: 'week', period: '7d', interval: '1d' },
];
/** QUOTA_ITEM_DATA_BYTES for this run: below what the flood sends (the default, 10 MB, is ~10 000 such writes). */
const DATA_QUOTA_BYTES = 2_000_000;
const QUOTAS_OFF = { QUOTA_NEW_ACTOR_ENTRIES: '0', QUOTA_NEW_SEGMENT_ENTRIES: '0', QUOTA_ITEM_DATA_BYTES: '0' };

type Send = (path: string, init: { method: string; secret: string; body: unknown }) => Promise<Response>;

interface Flood {
  /** The request number `i` of the flood (its path and body). */
  request: (i: number) => { method: string; path: string; body: unknown };
  /** Most requests sent. */
  most: number;
  /** Requests in flight at once. */
  workers: number;
}

interface FloodResult {
  accepted: number;
  refused: number;
  /** Answered 503 (load shedding: nothing applied). */
  shed: number;
  sent: number;
  seconds: number;
  heldBytes: number;
}

export const growthAbuse: AbusePart = async () => {
  const rows: AbuseRow[] = [];
  for (const [row, name] of [
    [actorRow, 'actors'],
    [segmentRow, 'segments'],
    [dataRow, 'data'],
  ] as const) {
    process.stderr.write(`  growth ${name}…\n`);
    rows.push(await row());
  }
  return rows;
};

/**
 * Row 2: batches of existing items, as many as one call admits when each entry names a new actor (3
 * windows and a unique view), each adding one actor entry a window; the quota is set to 33 such batches.
 */
async function actorRow(): Promise<AbuseRow> {
  const board = { windows: WINDOWS, actors: true, views: [{ name: 'people', mode: 'unique', window: 'hour' }] };
  const batch = entriesPerCall(board, { actor: 'a' });
  const quota = 33 * batch * WINDOWS.length;
  const flood: Flood = {
    most: 80,
    workers: 1,
    request: (i) => ({
      method: 'POST',
      path: '/boards/g/increments',
      body: { items: ITEMS.slice(0, batch).map((item) => ({ item, actor: `actor-${i}` })) },
    }),
  };
  const on = { QUOTA_NEW_ACTOR_ENTRIES: String(quota) };
  const [before, after] = [await floodOnce(board, flood, QUOTAS_OFF), await floodOnce(board, flood, on)];
  return {
    attack: `2: batches of ${batch} existing items (one call's most), each entry with a new actor (3 windows, a \`unique\` view)`,
    measured: measured(before, after, `QUOTA_NEW_ACTOR_ENTRIES=${quota} (33 such batches; default 100 000)`),
    held: after.refused > 0 && after.accepted <= 34,
  };
}

/**
 * Row 3: batches of existing items, as many as one call admits when each names 8 new segments (3
 * windows), each adding 24 segment entries an item or more; the quota is set to 4.5 such batches.
 */
async function segmentRow(): Promise<AbuseRow> {
  const board = { windows: WINDOWS, segments: { max: 1000 } };
  const eight = (i: number) => Array.from({ length: 8 }, (_, s) => `seg-${i * 8 + s}`);
  const batch = entriesPerCall(board, { segments: eight(0) });
  const quota = Math.floor(4.5 * batch * 8 * WINDOWS.length);
  const flood: Flood = {
    most: 50,
    workers: 1,
    request: (i) => ({
      method: 'POST',
      path: '/boards/g/increments',
      body: { items: ITEMS.slice(0, batch).map((item) => ({ item, segments: eight(i) })) },
    }),
  };
  const on = { QUOTA_NEW_SEGMENT_ENTRIES: String(quota) };
  const [before, after] = [await floodOnce(board, flood, QUOTAS_OFF), await floodOnce(board, flood, on)];
  return {
    attack: `3: batches of ${batch} existing items (one call's most) × 8 segments (3 windows)`,
    measured: measured(before, after, `QUOTA_NEW_SEGMENT_ENTRIES=${quota} (4 such batches; default 100 000)`),
    held: after.refused > 0 && after.accepted <= 5,
  };
}

/** Row 8: 1 KB of item data on each existing item, one write per item. */
async function dataRow(): Promise<AbuseRow> {
  const note = 'd'.repeat(1000);
  const flood: Flood = {
    most: 15_000,
    workers: 16,
    request: (i) => ({
      method: 'PUT',
      path: `/boards/g/items/${ITEMS[i % ITEMS.length]}-${Math.floor(i / 1000)}/data`,
      body: { note },
    }),
  };
  const [before, after] = [
    await floodOnce({ windows: WINDOWS }, flood, QUOTAS_OFF, 15),
    await floodOnce({ windows: WINDOWS }, flood, { QUOTA_ITEM_DATA_BYTES: String(DATA_QUOTA_BYTES) }, 15),
  ];
  return {
    attack: '8: 1 KB of item data on every existing item (15 000 items)',
    measured: measured(before, after, `QUOTA_ITEM_DATA_BYTES=${DATA_QUOTA_BYTES} (about 1 980 such writes)`),
    held: after.refused > 0 && after.accepted <= 2_000,
  };
}

const ITEMS = Array.from({ length: 1000 }, (_, i) => `item-${i}`);

function measured(before: FloodResult, after: FloodResult, quota: string): string {
  const perRequest = (result: FloodResult) =>
    result.accepted > 0 ? `${(result.heldBytes / result.accepted / 1000).toFixed(1)} KB` : '-';
  const line = (result: FloodResult) =>
    `${result.sent} sent in ${result.seconds.toFixed(1)} s: ${result.accepted} accepted, ${result.refused} refused 429` +
    `${result.shed > 0 ? `, ${result.shed} shed 503` : ''}; ` +
    `Redis +${(result.heldBytes / 1e6).toFixed(1)} MB, ${perRequest(result)} per accepted request`;
  return `quotas off: ${line(before)}. ${quota}: ${line(after)}`;
}

function startFloodService(redisUrl: string, env: Record<string, string>) {
  return startService(
    {
      REDIS_URL: redisUrl,
      ADMIN_TOKEN,
      API_KEYS: `${ATTACKER}:read+write,${SEEDER}:read+write`,
      LOG_LEVEL: 'error',
      QUOTA_NEW_ITEMS: '100000',
      // The figures are about memory: a call may queue past the default 500 ms on a loaded machine.
      REDIS_COMMAND_TIMEOUT_MS: '5000',
      ...env,
    },
    true,
  );
}

/** A loaded machine may take longer than one wait (10 s) to start the service. */
async function readyWithin3Waits(url: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const ready = await waitForHttp(`${url}/health/ready`).then(
      () => true,
      () => false,
    );
    if (ready) return;
    if (attempt === 3) throw new Error('the service did not start');
  }
}

/**
 * A fresh redis-server and service (`env` over the defaults), the board "g" seeded with `seedRounds`
 * batches of ITEMS (round r: ids suffixed -r, by another client), then `flood` sent by one client
 * (`workers` requests at a time) until done, refused 40 times in a row, or FLOOD_MS.
 */
async function floodOnce(
  board: DeclaredBoard,
  flood: Flood,
  env: Record<string, string>,
  seedRounds = 1,
): Promise<FloodResult> {
  const redisServer = await startRedisServer();
  const redis = new Redis(redisServer.url);
  const service = await startFloodService(redisServer.url, env);
  try {
    await readyWithin3Waits(service.url);
    const send: Send = (path, init) =>
      fetch(`${service.url}${path}`, {
        method: init.method,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${init.secret}` },
        body: JSON.stringify(init.body),
      });
    await send('/admin/boards/g', { method: 'PUT', secret: ADMIN_TOKEN, body: board });
    await seed(send, board, seedRounds);
    return await run(send, redis, flood);
  } finally {
    redis.disconnect();
    await stopChild(service.child);
    await stopChild(redisServer.child);
  }
}

/** `rounds` rounds of ITEMS on the board (round r: ids suffixed -r), in batches its write call admits. */
async function seed(send: Send, board: DeclaredBoard, rounds: number): Promise<void> {
  for (let round = 0; round < rounds; round++) {
    const entries = ITEMS.map((item) => ({ item: rounds > 1 ? `${item}-${round}` : item }));
    for (const items of batchesOf(entries, entriesPerCall(board))) {
      const response = await send('/boards/g/increments', { method: 'POST', secret: SEEDER, body: { items } });
      if (!response.ok) throw new Error(`seeding: ${response.status} ${await response.text()}`);
      await response.arrayBuffer();
    }
  }
}

async function run(send: Send, redis: Redis, flood: Flood): Promise<FloodResult> {
  const before = await usedMemory(redis);
  const result = { accepted: 0, refused: 0, shed: 0, sent: 0, seconds: 0, heldBytes: 0 };
  let refusedInARow = 0;
  const startedMs = Date.now();
  const worker = async () => {
    while (result.sent < flood.most && refusedInARow < 40 && Date.now() - startedMs < FLOOD_MS) {
      const { method, path, body } = flood.request(result.sent++);
      const response = await send(path, { method, secret: ATTACKER, body });
      if (response.status !== 503) await response.arrayBuffer();
      if (response.status < 300) {
        result.accepted++;
        refusedInARow = 0;
      } else if (response.status === 429) {
        result.refused++;
        refusedInARow++;
      } else if (response.status === 503) {
        const text = await response.text();
        if (result.shed++ === 0) process.stderr.write(`  first 503: ${text}\n`);
      } else throw new Error(`${method} ${path}: ${response.status}`);
    }
  };
  await Promise.all(Array.from({ length: flood.workers }, worker));
  result.seconds = (Date.now() - startedMs) / 1000;
  result.heldBytes = (await usedMemory(redis)) - before;
  return result;
}

async function usedMemory(redis: Redis): Promise<number> {
  await redis.eval("collectgarbage('collect') return 0", 0);
  return Number(/used_memory:(\d+)/.exec(await redis.info('memory'))?.[1]);
}
