/**
 * `npm run abuse`, growth part: issue #45 rows 2 (batches of existing items, each with a new actor), 3
 * (batches of existing items naming 8 segments) and 8 (1 KB of data on every existing item), each
 * flooded by one client against a private redis-server and the built service (dist/main.js) twice:
 * with the growth quotas at their defaults, and with the three quotas off (QUOTA_*=0: what every
 * release before them did). Reports the bytes Redis holds per accepted request (INFO memory's
 * used_memory) and how many were refused. Loopback only. A flood with the quotas off is bounded in
 * count and time (its figure is bytes per request); the flood against a quota is bounded by count alone
 * (the row's most accepted, then refusals in a row), so its verdict counts requests and never reads the
 * machine's speed: a loaded host slows it, never stops it before the quota.
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
/** Refusals in a row that end a flood: the quota holds. */
const REFUSED_IN_A_ROW = 40;
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
  /** Wall time after which no request is sent (Infinity: bounded by count alone). */
  ms: number;
}

/**
 * The quotas' longest interval (30 days): a bucket refills by the clock, so at the default hour a
 * slower flood would be accepted more; over 30 days an hour's flood refills under 0.2 % of a quota.
 */
const SLOWEST_REFILL = { QUOTA_INTERVAL_SEC: String(30 * 86_400) };

/**
 * `flood` against a quota that accepts `mostAccepted` requests at most: enough requests to see it
 * refuse in a row past them, and no wall-time bound.
 */
function againstQuota(flood: Flood, mostAccepted: number): Flood {
  return { ...flood, most: mostAccepted + REFUSED_IN_A_ROW + 1, ms: Infinity };
}

interface FloodResult {
  accepted: number;
  refused: number;
  /** Answered 409 BATCH_PARTIAL: a batch's later call refused by the quota, its earlier calls applied. */
  partial: number;
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
    ms: FLOOD_MS,
    request: (i) => ({
      method: 'POST',
      path: '/boards/g/increments',
      body: { items: ITEMS.slice(0, batch).map((item) => ({ item, actor: `actor-${i}` })) },
    }),
  };
  const on = { QUOTA_NEW_ACTOR_ENTRIES: String(quota), ...SLOWEST_REFILL };
  const mostAccepted = 34;
  const before = await floodOnce(board, flood, QUOTAS_OFF);
  const after = await floodOnce(board, againstQuota(flood, mostAccepted), on);
  return {
    attack: `2: batches of ${batch} existing items (one call's most), each entry with a new actor (3 windows, a \`unique\` view)`,
    measured: measured(before, after, `QUOTA_NEW_ACTOR_ENTRIES=${quota} (33 such batches; default 100 000)`),
    held: held(after, mostAccepted),
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
    ms: FLOOD_MS,
    request: (i) => ({
      method: 'POST',
      path: '/boards/g/increments',
      body: { items: ITEMS.slice(0, batch).map((item) => ({ item, segments: eight(i) })) },
    }),
  };
  const on = { QUOTA_NEW_SEGMENT_ENTRIES: String(quota), ...SLOWEST_REFILL };
  const mostAccepted = 5;
  const before = await floodOnce(board, flood, QUOTAS_OFF);
  const after = await floodOnce(board, againstQuota(flood, mostAccepted), on);
  return {
    attack: `3: batches of ${batch} existing items (one call's most) × 8 segments (3 windows)`,
    measured: measured(before, after, `QUOTA_NEW_SEGMENT_ENTRIES=${quota} (4 such batches; default 100 000)`),
    held: held(after, mostAccepted),
  };
}

/** Row 8: 1 KB of item data on each existing item, one write per item. */
async function dataRow(): Promise<AbuseRow> {
  const note = 'd'.repeat(1000);
  const flood: Flood = {
    most: 15_000,
    workers: 16,
    ms: FLOOD_MS,
    request: (i) => ({
      method: 'PUT',
      path: `/boards/g/items/${ITEMS[i % ITEMS.length]}-${Math.floor(i / 1000)}/data`,
      body: { note },
    }),
  };
  const on = { QUOTA_ITEM_DATA_BYTES: String(DATA_QUOTA_BYTES), ...SLOWEST_REFILL };
  const mostAccepted = 2_000;
  const before = await floodOnce({ windows: WINDOWS }, flood, QUOTAS_OFF, 15);
  const after = await floodOnce({ windows: WINDOWS }, againstQuota(flood, mostAccepted), on, 15);
  return {
    attack: '8: 1 KB of item data on every existing item (15 000 items)',
    measured: measured(before, after, `QUOTA_ITEM_DATA_BYTES=${DATA_QUOTA_BYTES} (about 1 980 such writes)`),
    held: held(after, mostAccepted),
  };
}

/**
 * The quota held: it refused, and the requests it let apply (whole or, a batch, in part) are at most
 * the row's most.
 */
function held(result: FloodResult, mostAccepted: number): boolean {
  return result.refused + result.partial > 0 && result.accepted + result.partial <= mostAccepted;
}

const ITEMS = Array.from({ length: 1000 }, (_, i) => `item-${i}`);

function measured(before: FloodResult, after: FloodResult, quota: string): string {
  const perRequest = (result: FloodResult) =>
    result.accepted > 0 ? `${(result.heldBytes / result.accepted / 1000).toFixed(1)} KB` : '-';
  const line = (result: FloodResult) =>
    `${result.sent} sent in ${result.seconds.toFixed(1)} s: ${result.accepted} accepted, ${result.refused} refused 429` +
    `${result.partial > 0 ? `, ${result.partial} partly applied 409 BATCH_PARTIAL` : ''}` +
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
 * (`workers` requests at a time) until done, refused REFUSED_IN_A_ROW times in a row, or past its `ms`.
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
  const result = { accepted: 0, refused: 0, partial: 0, shed: 0, sent: 0, seconds: 0, heldBytes: 0 };
  let refusedInARow = 0;
  const startedMs = Date.now();
  const worker = async () => {
    while (result.sent < flood.most && refusedInARow < REFUSED_IN_A_ROW && Date.now() - startedMs < flood.ms) {
      const { method, path, body } = flood.request(result.sent++);
      const response = await send(path, { method, secret: ATTACKER, body });
      const text = await response.text();
      const answer = tally(result, response.status, text);
      if (answer === undefined) throw new Error(`${method} ${path}: ${response.status} ${text}`);
      if (answer !== 'shed') refusedInARow = answer === 'refused' ? refusedInARow + 1 : 0;
    }
  };
  await Promise.all(Array.from({ length: flood.workers }, worker));
  result.seconds = (Date.now() - startedMs) / 1000;
  result.heldBytes = (await usedMemory(redis)) - before;
  return result;
}

/**
 * Counts an answer in `result`: a refusal is a 429 or a batch's later call refused by the quota (409
 * BATCH_PARTIAL); undefined for an answer a flood does not expect.
 */
function tally(result: FloodResult, status: number, text: string): 'accepted' | 'refused' | 'shed' | undefined {
  if (status < 300) {
    result.accepted++;
    return 'accepted';
  }
  if (status === 429 || (status === 409 && text.includes('BATCH_PARTIAL'))) {
    if (status === 429) result.refused++;
    else result.partial++;
    return 'refused';
  }
  if (status !== 503) return undefined;
  if (result.shed++ === 0) process.stderr.write(`  first 503: ${text}\n`);
  return 'shed';
}

async function usedMemory(redis: Redis): Promise<number> {
  await redis.eval("collectgarbage('collect') return 0", 0);
  return Number(/used_memory:(\d+)/.exec(await redis.info('memory'))?.[1]);
}
