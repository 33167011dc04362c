/**
 * The clients of the stream abuse rows (streams.ts): the service on a private redis-server, plain HTTP
 * calls, SSE streams opened from a given loopback address or never read, the service's and the
 * kernel's memory, and the unrelated reads whose latency says whether a flood hurt anyone else.
 */
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { connect, Socket } from 'node:net';
import { stopChild } from '../../harness/processes';
import { startRedisServer, startService, waitForHttp } from '../process-stats';

export const ADMIN_TOKEN = 'abuse-admin-token-0123456789';
export const ADMIN = { authorization: `Bearer ${ADMIN_TOKEN}` };
const P99_BOUND_MS = 50;
/** 100 rows of 123-character ids of 4-byte characters: about 30 KB an event. */
export const LONG_IDS = Array.from({ length: 100 }, (_, i) => `${'😀'.repeat(60)}${String(i).padStart(3, '0')}`);
const keepAlive = new Agent({ keepAlive: true, maxSockets: 16 });

export interface Service {
  child: ChildProcess;
  url: string;
  stop(): Promise<void>;
}

export async function startAll(env: Record<string, string> = {}): Promise<Service> {
  const redis = await startRedisServer();
  const service = await startService(
    { REDIS_URL: redis.url, ADMIN_TOKEN, LOG_LEVEL: 'warn', SCHEDULER_ENABLED: 'false', QUOTA_NEW_ITEMS: '0', ...env },
    true,
  );
  await waitForHttp(`${service.url}/health/live`);
  return {
    ...service,
    stop: async () => {
      await stopChild(service.child);
      await stopChild(redis.child);
    },
  };
}

/** One HTTP call: status and body. */
export function call(
  url: string,
  method = 'GET',
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      url,
      {
        method,
        agent: keepAlive,
        headers: { ...(payload ? { 'content-type': 'application/json' } : {}), ...headers },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

export async function putBoard(url: string, board: string, windows: object[] = [{ period: '1h', interval: '1m' }]) {
  const answer = await call(`${url}/admin/boards/${board}`, 'PUT', { windows }, ADMIN);
  if (answer.status >= 300) throw new Error(`PUT ${board}: ${answer.status} ${answer.text}`);
}

/** An SSE stream opened from `localAddress`: its status once the headers came, and its socket. */
export function openStream(
  url: string,
  localAddress: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; socket: Socket; ended: Promise<void> }> {
  return new Promise((resolve) => {
    const req = request(
      url,
      { agent: false, localAddress, headers: { accept: 'text/event-stream', ...headers } },
      (res) => {
        const ended = new Promise<void>((done) => res.on('close', done));
        res.resume();
        resolve({ status: res.statusCode ?? 0, socket: res.socket, ended });
      },
    );
    req.on('error', () => resolve({ status: 0, socket: req.socket ?? new Socket(), ended: Promise.resolve() }));
    req.end();
  });
}

/** A stream request whose answer is never read (the socket stays paused). */
export function stalledStream(url: string, localAddress: string): Promise<Socket> {
  const { hostname, port, pathname, search } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port), localAddress }, () => {
      socket.write(`GET ${pathname}${search} HTTP/1.1\r\nHost: ${hostname}\r\nAccept: text/event-stream\r\n\r\n`);
      socket.pause();
      resolve(socket);
    });
    socket.on('error', () => undefined);
    socket.once('error', reject);
  });
}

export function rssMb(pid: number | undefined): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Math.round(Number(match[1]) / 1024) : 0;
}

/** Kernel memory of every TCP socket on the machine (/proc/net/sockstat, pages of 4 KB). */
export function tcpKernelMb(): number {
  const match = /TCP:.* mem (\d+)/.exec(readFileSync('/proc/net/sockstat', 'utf8'));
  return match ? Math.round((Number(match[1]) * 4) / 1024) : 0;
}

/** Sequential unrelated reads until `untilMs`: their p99 in ms and how many were not 200. */
export async function unrelatedReads(
  url: string,
  untilMs: number,
): Promise<{ p99Ms: number; failed: number; count: number }> {
  const times: number[] = [];
  let failed = 0;
  while (Date.now() < untilMs) {
    const startMs = performance.now();
    const answer = await call(`${url}/boards/other/top?limit=10`).catch(() => ({ status: 0 }));
    times.push(performance.now() - startMs);
    if (answer.status !== 200) failed++;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  times.sort((a, b) => a - b);
  return { p99Ms: Math.round(times[Math.floor(times.length * 0.99)] ?? 0), failed, count: times.length };
}

/**
 * Whether unrelated reads held: none failed, and p99 under 50 ms or, on a machine busy with other work,
 * within twice the p99 of the same reads measured on the same service just before the flood.
 */
export function readsHeld(reads: { p99Ms: number; failed: number }, baseline: { p99Ms: number }): boolean {
  return reads.failed === 0 && (reads.p99Ms < P99_BOUND_MS || reads.p99Ms <= 2 * baseline.p99Ms);
}

/** Unrelated reads for 2 s while writers increment `items` of `board`: the flood's control, without streams. */
export async function withWriters(url: string, board: string, items: string[]) {
  const untilMs = Date.now() + 2000;
  const [reads] = await Promise.all([
    unrelatedReads(url, untilMs),
    ...items.slice(0, 2).map((item) => writer(url, board, item, untilMs)),
  ]);
  return reads;
}

/** Increments `item` of `board` as fast as one client can until `untilMs`. */
export async function writer(url: string, board: string, item: string, untilMs: number): Promise<void> {
  while (Date.now() < untilMs)
    await call(`${url}/boards/${board}/items/${encodeURIComponent(item)}/increment`, 'POST', { amount: 1 });
}

export const address = (i: number) => `127.0.${1 + Math.floor(i / 250)}.${2 + (i % 250)}`;
