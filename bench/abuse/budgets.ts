/**
 * `npm run abuse`, budgets part: issue #22 rows 9 (fresh Idempotency-Keys filling Redis), 11 (a
 * squatted key on a shared board) and 7 (the costliest item history, read by two clients at once),
 * against a private redis-server and the built service (dist/main.js: `npm run build` first).
 * Loopback only; the floods are bounded in count and time (well under 20 s each). ABUSE_BUDGETS_ROWS=7
 * runs row 7 alone.
 */
import Redis from 'ioredis';
import { loadavg } from 'node:os';
import { stopChild } from '../../harness/processes';
import { startRedisServer, startService, waitForHttp } from '../process-stats';
import type { AbusePart, AbuseRow } from './abuse-part';
import { seedHistory } from './history-seed';
import { isScriptCall } from '../script-calls';
import { HISTORY_ROWS_PER_CALL } from '../../src/ranking/core/ranking.limits';

const ADMIN_TOKEN = 'abuse-admin-token-0123456789';
const ATTACKER = 'abuse-attacker-secret-0123456789';
const VICTIM = 'abuse-victim-secret-0123456789';
const FRESH_KEYS = 20_000;
/** The flood stops here if the fresh keys are not all sent by then (a busy machine). */
const FLOOD_MS = 15_000;
/** QUOTA_IDEMPOTENT_ANSWERS for this run: below what the flood sends, so the refusals show. */
const QUOTA = 2000;
const CONCURRENCY = 32;
const HISTORY_KEEP = 1000;
const HISTORY_TOP = 1000;
const HISTORY_READ_MS = 5000;
const BASELINE_MS = 2000;
/** ABUSE_BUDGETS_ROWS=7,9: only those rows (all by default). */
const ONLY_ROWS = (row: string) => (process.env.ABUSE_BUDGETS_ROWS?.split(',') ?? [row]).includes(row);

type Send = (
  path: string,
  init?: { method?: string; secret?: string; key?: string; body?: unknown },
) => Promise<Response>;

export const budgetsAbuse: AbusePart = async () => {
  const redisServer = await startRedisServer();
  const redis = new Redis(redisServer.url);
  const service = await startService(
    {
      REDIS_URL: redisServer.url,
      ADMIN_TOKEN,
      API_KEYS: `${ATTACKER}:read+write,${VICTIM}:read+write`,
      QUOTA_IDEMPOTENT_ANSWERS: String(QUOTA),
      LOG_LEVEL: 'error',
    },
    true,
  );
  try {
    await waitForHttp(`${service.url}/health/ready`);
    const send: Send = (path, init = {}) =>
      fetch(`${service.url}${path}`, {
        method: init.method ?? 'GET',
        headers: {
          'content-type': 'application/json',
          ...(init.secret ? { authorization: `Bearer ${init.secret}` } : {}),
          ...(init.key ? { 'idempotency-key': init.key } : {}),
        },
        body: init.body === undefined ? undefined : JSON.stringify(init.body),
      });
    const board = (name: string, body: unknown) =>
      fetch(`${service.url}/admin/boards/${name}`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN_TOKEN}` },
        body: JSON.stringify(body),
      });
    await board('shared', { windows: [{ period: '1h', interval: '1m' }] });
    await board('other', { windows: [{ period: '1h', interval: '1m' }] });
    return await measureRows(send, redis);
  } finally {
    redis.disconnect();
    await stopChild(service.child);
    await stopChild(redisServer.child);
  }
};

/** Rows 9, 11 and 7, or those ABUSE_BUDGETS_ROWS names. */
async function measureRows(send: Send, redis: Redis): Promise<AbuseRow[]> {
  const rows = [
    ['9', () => freshKeys(send, redis)],
    ['11', () => squat(send)],
    ['7', () => costlyHistory(send, redis)],
  ] as const;
  const measured: AbuseRow[] = [];
  for (const [row, measure] of rows) if (ONLY_ROWS(row)) measured.push(await measure());
  return measured;
}

/** Row 9: 20 000 keyed writes with fresh keys to one existing item. */
async function freshKeys(send: Send, redis: Redis): Promise<AbuseRow> {
  await send('/boards/shared/items/x/increment', { method: 'POST', secret: ATTACKER, body: {} });
  const before = await usedMemory(redis);
  const statuses = new Map<number, number>();
  let next = 0;
  const startedMs = Date.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < FRESH_KEYS && Date.now() - startedMs < FLOOD_MS) {
        const key = `fresh-${next++}-${'k'.repeat(100)}`;
        const response = await send('/boards/shared/items/x/increment', {
          method: 'POST',
          secret: ATTACKER,
          key,
          body: {},
        });
        await response.arrayBuffer();
        statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
      }
    }),
  );
  const seconds = (Date.now() - startedMs) / 1000;
  const held = (await usedMemory(redis)) - before;
  const accepted = statuses.get(200) ?? 0;
  const refused = statuses.get(429) ?? 0;
  const perAnswer = accepted > 0 ? held / accepted : 0;
  // The token bucket refills during the flood: QUOTA per hour.
  const allowed = QUOTA + Math.ceil((QUOTA * seconds) / 3600) + 1;
  return {
    attack: `9: ${next.toLocaleString('en')} writes with fresh 110-char Idempotency-Keys from one client (QUOTA_IDEMPOTENT_ANSWERS=${QUOTA})`,
    measured: `accepted ${accepted}, refused 429 QUOTA_EXCEEDED ${refused}, in ${seconds.toFixed(1)} s; Redis holds +${(held / 1e6).toFixed(2)} MB: ${perAnswer.toFixed(0)} B per stored answer (was 282-352 B per request, none refused)`,
    held: accepted <= allowed && accepted + refused === next && perAnswer < 300,
  };
}

/** Row 11: an attacker uses the victim's next key first, once for another request and once for the same one. */
async function squat(send: Send): Promise<AbuseRow> {
  const score = async () =>
    ((await (await send('/boards/shared/items/mine', { secret: VICTIM })).json()) as { score: number }).score;
  await send('/boards/shared/items/decoy/increment', { method: 'POST', secret: ATTACKER, key: 'order-1', body: {} });
  await send('/boards/shared/items/mine/increment', {
    method: 'POST',
    secret: ATTACKER,
    key: 'order-2',
    body: { amount: 5 },
  });
  const before = await score();
  const other = await send('/boards/shared/items/mine/increment', {
    method: 'POST',
    secret: VICTIM,
    key: 'order-1',
    body: { amount: 5 },
  });
  const same = await send('/boards/shared/items/mine/increment', {
    method: 'POST',
    secret: VICTIM,
    key: 'order-2',
    body: { amount: 5 },
  });
  const gained = (await score()) - before;
  const replayed = same.headers.get('idempotent-replayed') === 'true';
  return {
    attack: "11: an attacker sends the victim's next Idempotency-Keys first (another request, then the same one)",
    measured: `victim's writes answered ${other.status} and ${same.status}${replayed ? ' (a replay)' : ''}; its score moved +${gained} (+10 expected)`,
    held: other.status === 200 && same.status === 200 && !replayed && gained === 10,
  };
}

/** One client paging through the item's history until `endMs`, counting the pages all readers read. */
async function historyReader(reading: { send: Send; lowestItem: string; endMs: number; pages: number }): Promise<void> {
  let from = 0;
  while (Date.now() < reading.endMs) {
    const response = await reading.send(`/boards/hist/items/${reading.lowestItem}/history?from=${from}`, {
      secret: ATTACKER,
    });
    const body = (await response.json()) as { nextFrom?: number | null };
    reading.pages++;
    from = body.nextFrom ?? 0;
  }
}

/** Row 7: two clients page through the history of the lowest item of 1 000 snapshots of 1 000 rows. */
async function costlyHistory(send: Send, redis: Redis): Promise<AbuseRow> {
  const { lowestItem } = await seedHistory(redis, 'tb:', 'hist', HISTORY_KEEP, HISTORY_TOP);
  await send('/boards/other/items/y/increment', { method: 'POST', secret: VICTIM, body: {} });
  const baselineMs: number[] = [];
  await unrelatedReads(send, Date.now() + BASELINE_MS, baselineMs);
  // Every command logged with its time in Redis: the history scripts are told apart by their keys.
  await redis.config('SET', 'slowlog-log-slower-than', '0');
  await redis.config('SET', 'slowlog-max-len', '100000');
  await redis.slowlog('RESET');
  const endMs = Date.now() + HISTORY_READ_MS;
  const unrelatedMs: number[] = [];
  const reading = { send, lowestItem, endMs, pages: 0 };
  await Promise.all([historyReader(reading), historyReader(reading), unrelatedReads(send, endMs, unrelatedMs)]);
  const { pages } = reading;
  const logged = (await redis.slowlog('GET', 100_000)) as Array<[number, number, number, string[]]>;
  await redis.config('SET', 'slowlog-log-slower-than', '10000');
  const history = logged.filter((entry) => entry[3].some((arg) => arg.startsWith('{tb:board:hist}')));
  const scriptMs = history.filter((entry) => isScriptCall(entry[3][0])).map((entry) => entry[2] / 1000);
  const snapshots = snapshotsPerCall(history);
  const mostRows = Math.max(0, ...snapshots) * HISTORY_TOP;
  const p99 = percentile(unrelatedMs, 0.99);
  return {
    attack: `7: two clients page through the history of the lowest item of ${HISTORY_KEEP} snapshots of ${HISTORY_TOP} rows`,
    measured:
      `${pages} pages in ${HISTORY_READ_MS / 1000} s, ${snapshots.length} history calls reading at most ${mostRows} rows each (HISTORY_ROWS_PER_CALL ${HISTORY_ROWS_PER_CALL}; was one script over all ${HISTORY_KEEP * HISTORY_TOP}, 1.36 s); ` +
      `Redis per history script p50 ${percentile(scriptMs, 0.5).toFixed(1)} ms, p99 ${percentile(scriptMs, 0.99).toFixed(1)} ms, max ${Math.max(0, ...scriptMs).toFixed(1)} ms; unrelated reads p99 ${p99.toFixed(1)} ms ` +
      `(${unrelatedMs.length} reads; ${percentile(baselineMs, 0.99).toFixed(1)} ms with no history reader; load ${loadavg()[0].toFixed(1)})`,
    // Counts, not times (a loaded machine stretches every time): each call reads one page's rows at most.
    held: pages > 0 && snapshots.length > 0 && mostRows <= HISTORY_ROWS_PER_CALL,
  };
}

/**
 * The snapshots each history call read: its script's GETs of snapshot rows, which SLOWLOG logs right
 * before the call itself (a script runs alone), `logged` newest first.
 */
function snapshotsPerCall(logged: Array<[number, number, number, string[]]>): number[] {
  const calls: number[] = [];
  let read = 0;
  for (const [, , , args] of [...logged].reverse()) {
    if (isScriptCall(args[0])) {
      calls.push(read);
      read = 0;
    } else if (/^get$/i.test(args[0]) && args[1]?.includes(':snap:')) read += 1;
  }
  return calls;
}

/** Top reads of another board, one every 20 ms until `endMs`: their latencies go to `latenciesMs`. */
async function unrelatedReads(send: Send, endMs: number, latenciesMs: number[]): Promise<void> {
  while (Date.now() < endMs) {
    const startedMs = performance.now();
    await (await send('/boards/other/top?limit=10', { secret: VICTIM })).arrayBuffer();
    latenciesMs.push(performance.now() - startedMs);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function usedMemory(redis: Redis): Promise<number> {
  await redis.eval("collectgarbage('collect') return 0", 0);
  return Number(/used_memory:(\d+)/.exec(await redis.info('memory'))?.[1]);
}

function percentile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
}
