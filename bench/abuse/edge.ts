import Redis from 'ioredis';
import { connect } from 'node:net';
import { loadavg } from 'node:os';
import { JSON_LIMITS } from '../../src/edge/json-body';
import { stopChild } from '../../harness/processes';
import { startRedisServer, startService, waitForHttp } from '../process-stats';
import type { AbusePart, AbuseRow } from './abuse-part';

/**
 * Issue #22 rows 6, 8, 10, 12, 13, 14, 15 (the HTTP edge, the key store, scopes) against the built
 * service (`npm run build` first): one open and one keyed service on a private redis-server, each
 * flood bounded in count (a few seconds each on loopback).
 */
const ADMIN_TOKEN = 'abuse-admin-token-0123456789';
const READER = 'abuse-reader-key-0123456789';
const ADMIN = { Authorization: `Bearer ${ADMIN_TOKEN}` };
const JSON_TYPE = { 'Content-Type': 'application/json' };
const QUOTA_NEW_COUNTERS = 100;
/** The 1 MB body of row 6: an array of empty objects just under the batch route's size limit. */
const ARRAY_BODY = `{"items":[${'{},'.repeat(330_000)}{}]}`;
/** What the parser answers when it stops at the first element past its bound (src/edge/json-body.ts). */
const ELEMENTS_REFUSAL = `body has an array with more than ${JSON_LIMITS.maxElementsPerArray} elements`;

type Call = { status: number; ms: number; text: string };

async function call(url: string, init: RequestInit = {}): Promise<Call> {
  const startedMs = performance.now();
  const answer = await fetch(url, init);
  const text = await answer.text();
  return { status: answer.status, ms: performance.now() - startedMs, text };
}

/** Runs `task(i)` for i < count, `concurrency` at a time; answers every result. */
async function pool<T>(count: number, concurrency: number, task: (i: number) => Promise<T>): Promise<T[]> {
  const results: T[] = new Array<T>(count);
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      results[i] = await task(i);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return results;
}

/** GET /health/live one after another until `during` settles: the p99 and max latency (ms) of unrelated reads. */
async function probeWhile(base: string, during: Promise<unknown>): Promise<{ p99Ms: number; maxMs: number }> {
  const latencies: number[] = [];
  let done = false;
  void during.finally(() => (done = true));
  while (!done) latencies.push((await call(`${base}/health/live`)).ms);
  latencies.sort((a, b) => a - b);
  return {
    p99Ms: latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * 0.99))] ?? 0,
    maxMs: latencies[latencies.length - 1] ?? 0,
  };
}

const count = (calls: Call[], status: number) => calls.filter((c) => c.status === status).length;
const ms = (value: number) => `${value.toFixed(1)} ms`;

async function start(
  redisUrl: string,
  env: Record<string, string>,
): Promise<{ stop: () => Promise<void>; base: string }> {
  const service = await startService({ REDIS_URL: redisUrl, ADMIN_TOKEN, LOG_LEVEL: 'fatal', ...env }, true);
  await waitForHttp(`${service.url}/health/live`);
  return { base: service.url, stop: () => stopChild(service.child) };
}

/**
 * The longest the service's event loop was blocked since the last call (prom-client's
 * nodejs_eventloop_lag_max_seconds, reset by every scrape), ms: measured inside the service, so the
 * bench's own client work does not count.
 */
async function loopBlockMs(base: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  return Number(/^nodejs_eventloop_lag_max_seconds (\S+)$/m.exec(text)?.[1] ?? NaN) * 1000;
}

/**
 * Sends five 1 MB array bodies one after another: their answers, the longest event-loop block one of
 * them caused, and the longest block of the half second before the first (the machine's own noise).
 */
async function sendArrays(base: string): Promise<{ calls: Call[]; blockMs: number; idleMs: number }> {
  await loopBlockMs(base);
  await new Promise((resolve) => setTimeout(resolve, 500));
  const idleMs = await loopBlockMs(base);
  const calls: Call[] = [];
  let blockMs = 0;
  for (let i = 0; i < 5; i++) {
    calls.push(await call(`${base}/boards/b/increments`, { method: 'POST', headers: JSON_TYPE, body: ARRAY_BODY }));
    blockMs = Math.max(blockMs, await loopBlockMs(base));
  }
  return { calls, blockMs, idleMs };
}

/**
 * The status line of the answer to a 1 MB write of which only the headers are sent ('' if none came in
 * `waitMs`): an answer before any byte of the body proves the service read none of it.
 */
async function headersOnlyAnswer(base: string, waitMs: number): Promise<string> {
  const { hostname, port } = new URL(base);
  const socket = connect({ host: hostname, port: Number(port) });
  let timer: NodeJS.Timeout | undefined;
  const answer = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(''), waitMs);
    socket.once('data', (chunk) => resolve(chunk.toString('latin1').split('\r\n')[0]));
    socket.once('error', () => resolve(''));
  });
  socket.write(
    'POST /boards/b/increments HTTP/1.1\r\nHost: abuse\r\nContent-Type: application/json\r\n' +
      `Content-Length: ${Buffer.byteLength(ARRAY_BODY)}\r\n\r\n`,
  );
  const line = await answer;
  clearTimeout(timer);
  socket.destroy();
  return line;
}

/** Calls answered 400 by the parser's element bound: it stopped there, before JSON.parse built anything. */
const refusedAtBound = (calls: Call[]) =>
  calls.filter((c) => c.status === 400 && (JSON.parse(c.text) as { message?: string }).message === ELEMENTS_REFUSAL)
    .length;

/**
 * Row 6: five 1 MB array bodies, open (refused in the parser) and anonymous on a keyed service (refused
 * before the body is read). Held on counts the load does not move: every open body refused at the element
 * bound (the shape walk stops at element 1 001, ~3 KB in; nothing is built), every keyed one answered 401,
 * and a keyed write answered 401 before a byte of its body was sent. The loop's block is printed only
 * (at load ~23 it read 88-135 ms where a quiet machine reads ~20 ms).
 */
async function arrayBodies(open: string, keyed: string): Promise<AbuseRow> {
  const o = await sendArrays(open);
  const k = await sendArrays(keyed);
  const unsent = await headersOnlyAnswer(keyed, 10_000);
  const walkedBytes = '{"items":['.length + 3 * JSON_LIMITS.maxElementsPerArray;
  return {
    attack: '6: 1 MB {"items":[{},{},…]} bodies, 5 each (open; anonymous on a keyed service)',
    measured:
      `open: ${refusedAtBound(o.calls)}/5 answered 400 at the ${JSON_LIMITS.maxElementsPerArray}-element bound (the walk stops ${walkedBytes} B into ${Buffer.byteLength(ARRAY_BODY)} B), ` +
      `event loop blocked at most ${ms(o.blockMs)} (idle ${ms(o.idleMs)}); keyed: ${count(k.calls, 401)}/5 answered 401, ` +
      `blocked at most ${ms(k.blockMs)} (idle ${ms(k.idleMs)}); headers only, no body byte sent: ${unsent || 'no answer'}; load ${loadavg()[0].toFixed(1)}`,
    held: refusedAtBound(o.calls) === 5 && count(k.calls, 401) === 5 && / 401 /.test(unsent),
  };
}

/** Row 10: an admin key limited to eu. (refused at creation; one stored by an older version, planted). */
async function prefixedAdmin(base: string, redis: Redis): Promise<AbuseRow> {
  const made = await call(`${base}/admin/keys`, {
    method: 'POST',
    headers: { ...ADMIN, ...JSON_TYPE },
    body: JSON.stringify({ name: 'eu-admin', scopes: ['admin'], prefixes: ['eu.'] }),
  });
  const secret = 'legacy-eu-admin-0123456789';
  const { createHash } = await import('node:crypto');
  const digest = createHash('sha256').update(secret).digest('hex');
  await redis.hset(
    'tb:apikeys',
    'eu-admin',
    JSON.stringify({ digest, scopes: ['admin'], prefixes: ['eu.'], createdAtSec: 1 }),
  );
  await new Promise((resolve) => setTimeout(resolve, 1000)); // API_KEYS_REFRESH_MS=300
  const bearer = { Authorization: `Bearer ${secret}`, ...JSON_TYPE };
  const deleted = await call(`${base}/admin/boards/us.posts`, { method: 'DELETE', headers: bearer });
  const minted = await call(`${base}/admin/keys`, {
    method: 'POST',
    headers: bearer,
    body: JSON.stringify({ name: 'root', scopes: ['admin'] }),
  });
  await redis.hdel('tb:apikeys', 'eu-admin');
  return {
    attack: '10: an admin key limited to prefix eu.',
    measured: `creating one: ${made.status}; a stored one deleting us.posts: ${deleted.status}, minting an unrestricted admin key: ${minted.status}`,
    held: made.status === 400 && deleted.status === 403 && minted.status === 403,
  };
}

/** Row 12: 15 loopback addresses (X-Forwarded-For through TRUST_PROXY) each creating 100 counters. */
async function loopbackCounters(base: string): Promise<AbuseRow> {
  const calls = await pool(15 * QUOTA_NEW_COUNTERS, 20, (i) =>
    call(`${base}/counters/abuse-${i}/increment`, {
      method: 'POST',
      headers: { ...JSON_TYPE, 'X-Forwarded-For': `127.0.0.${2 + (i % 15)}` },
    }),
  );
  const accepted = count(calls, 200);
  return {
    attack: '12: counters created from 15 loopback addresses, 100 each',
    measured: `${accepted} of ${calls.length} accepted against a quota of ${QUOTA_NEW_COUNTERS} per client, ${count(calls, 429)} answered 429`,
    held: accepted <= QUOTA_NEW_COUNTERS,
  };
}

/** Row 13: bodyless POSTs without a content type, as a cross-origin form sends them. */
async function bodylessWrites(base: string): Promise<AbuseRow> {
  const calls = await pool(200, 20, () => call(`${base}/boards/b/items/formed/increment`, { method: 'POST' }));
  const top = (await (await fetch(`${base}/boards/b/top?window=1h`)).json()) as { items: unknown[] };
  return {
    attack: '13: bodyless cross-origin POSTs with no content type (open mode), 200',
    measured: `${count(calls, 415)} of 200 answered 415, items on the board ${top.items.length}`,
    held: count(calls, 415) === 200 && top.items.length === 0,
  };
}

/** Row 14: a client writing the service's own AccessTime of a route. */
async function reservedStats(base: string): Promise<AbuseRow> {
  const route = encodeURIComponent('GET /boards/:board/top');
  const written = await call(`${base}/stats/${route}/AccessTime`, {
    method: 'POST',
    headers: JSON_TYPE,
    body: JSON.stringify({ value: 1e100 }),
  });
  const slowest = (await (await fetch(`${base}/admin/stats/slowest?limit=1`, { headers: ADMIN })).json()) as {
    items: Array<{ average: number }>;
  };
  const worst = slowest.items[0]?.average ?? 0;
  return {
    attack: '14: POST /stats/GET%20%2Fboards%2F%3Aboard%2Ftop/AccessTime {"value":1e100}',
    measured: `answered ${written.status}; slowest list's first average ${worst.toExponential(2)} s (current hour only)`,
    held: written.status === 400 && worst < 1,
  };
}

/**
 * Row 15: 5 000 key guesses from one address on a keyed service. Held when at most a few hundred keys
 * were checked; the p99 of unrelated reads is shown beside its idle value (10 connections of refusals
 * keep one core busy: a 429 costs the service about 0.7 ms, a checked 401 about 1.1 ms).
 */
async function keyGuesses(base: string): Promise<AbuseRow> {
  const idle = await probeWhile(base, new Promise((resolve) => setTimeout(resolve, 500)));
  const flood = pool(5000, 10, (i) =>
    call(`${base}/boards/b/top?window=1h`, { headers: { 'X-Api-Key': `guess-${i}-0123456789abcdef` } }),
  );
  const probe = await probeWhile(base, flood);
  const calls = await flood;
  return {
    attack: '15: 5 000 API key guesses from one address',
    measured:
      `${count(calls, 401)} answered 401 (checked), ${count(calls, 429)} 429 (refused unchecked); ` +
      `/health/live p99 ${ms(probe.p99Ms)} (idle ${ms(idle.p99Ms)})`,
    held: count(calls, 401) <= 200 && count(calls, 429) >= 4800,
  };
}

/** Row 8: the key hash deleted (what a FLUSHALL or a failover to an empty replica does), then an anonymous write. */
async function lostKeys(base: string, redis: Redis): Promise<AbuseRow> {
  await call(`${base}/admin/keys`, {
    method: 'POST',
    headers: { ...ADMIN, ...JSON_TYPE },
    body: JSON.stringify({ name: 'ingest', scopes: ['write'] }),
  });
  await redis.del('tb:apikeys', '{tb:apikeys}:keyed');
  await new Promise((resolve) => setTimeout(resolve, 1000)); // three refreshes
  const write = await call(`${base}/boards/b/items/after-loss/increment`, { method: 'POST', headers: JSON_TYPE });
  return {
    attack: '8: DEL of the stored keys and the marker, then an anonymous write 1 s later',
    measured: `anonymous write answered ${write.status}`,
    held: write.status === 401,
  };
}

export const edgeAbuse: AbusePart = async () => {
  const redisServer = await startRedisServer();
  const redis = new Redis(redisServer.url);
  const common = { API_KEYS_REFRESH_MS: '300', SCHEDULER_ENABLED: 'false' };
  const keyedRedis = await startRedisServer();
  const [open, keyed] = await Promise.all([
    start(redisServer.url, { ...common, TRUST_PROXY: '127.0.0.1', QUOTA_NEW_COUNTERS: String(QUOTA_NEW_COUNTERS) }),
    start(keyedRedis.url, { ...common, API_KEYS: `${READER}:read` }),
  ]);
  try {
    const board = { method: 'PUT', headers: { ...ADMIN, ...JSON_TYPE } };
    const windows = JSON.stringify({ windows: [{ period: '1h', interval: '1m' }] });
    for (const [base, name] of [
      [open.base, 'b'],
      [open.base, 'us.posts'],
      [keyed.base, 'b'],
    ])
      await fetch(`${base}/admin/boards/${name}`, { ...board, body: windows });
    const rows = [
      await arrayBodies(open.base, keyed.base),
      await loopbackCounters(open.base),
      await bodylessWrites(open.base),
      await reservedStats(open.base),
      await keyGuesses(keyed.base),
      // Last on the open service: both store a key, which closes it for good.
      await prefixedAdmin(open.base, redis),
      await lostKeys(open.base, redis),
    ];
    return rows.sort((a, b) => parseInt(a.attack, 10) - parseInt(b.attack, 10));
  } finally {
    redis.disconnect();
    await Promise.all([open.stop(), keyed.stop()]);
    await Promise.all([stopChild(redisServer.child), stopChild(keyedRedis.child)]);
  }
};
