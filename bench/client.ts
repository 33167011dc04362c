/**
 * `npm run bench:client`: what @trendboard/client costs per call over raw fetch doing the same request.
 *
 * 0. With a fetch that answers from memory: the client's own CPU per call and nothing else (the
 *    figure to compare code changes with; the network rows below move with the machine's load).
 * 1. Against a stub HTTP server (node:http, a fixed JSON answer): the client's own CPU per call (URL
 *    and headers, a random Idempotency-Key, the attempt timer and abort wiring, the answer's checks),
 *    with nothing else in the figure to hide it.
 * 2. Against the service (in process, on a private redis-server): what that overhead is worth next to
 *    a real increment and a real top read.
 * Calls run one after another (latency, not throughput); raw and client rounds alternate, and each
 * figure is the median of the rounds, so a noisy shared machine moves both alike.
 */
import { createRequire } from 'node:module';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type * as ClientPackage from '../clients/typescript/src';
import { createApp } from '../src/bootstrap';
import { stopChild } from '../harness/processes';
import { fmt, median } from './load';
import { startRedisServer } from './process-stats';

// The built package (npm run client:build), as a user gets it: ES modules, which Node loads with
// require; ts-node would refuse the package's .ts sources ("type": "module").
const { TrendboardClient } = createRequire(__filename)('../clients/typescript/dist/index.js') as typeof ClientPackage;

const ROUNDS = Number(process.env.BENCH_REPEATS ?? 7);
const CALLS = Number(process.env.BENCH_CLIENT_CALLS ?? 2000);
const ADMIN_TOKEN = 'bench-admin-token-0123456789';
const STUB_ANSWER = '{"board":"bench","item":"item-1","windows":{"1h":{"score":1,"rank":1,"previousRank":null}}}';

type Pair = { raw: () => Promise<unknown>; client: () => Promise<unknown> };

/** Median microseconds per call of each side, alternating rounds of CALLS sequential calls. */
async function measure(pair: Pair, calls = CALLS): Promise<{ raw: number; client: number }> {
  const perCall: { raw: number[]; client: number[] } = { raw: [], client: [] };
  for (let i = 0; i < 200; i++) await Promise.all([pair.raw(), pair.client()]); // warm up: JIT, sockets
  for (let round = 0; round < ROUNDS; round++) {
    for (const side of round % 2 === 0 ? (['raw', 'client'] as const) : (['client', 'raw'] as const)) {
      const start = process.hrtime.bigint();
      for (let i = 0; i < calls; i++) await pair[side]();
      perCall[side].push(Number(process.hrtime.bigint() - start) / 1000 / calls);
    }
  }
  return { raw: median(perCall.raw), client: median(perCall.client) };
}

function row(what: string, figures: { raw: number; client: number }): string {
  const extra = figures.client - figures.raw;
  const micro = (n: number) => (n < 100 ? n.toFixed(1) : fmt(n));
  return `| ${what} | ${micro(figures.raw)} | ${micro(figures.client)} | ${micro(extra)} | ${fmt((figures.client / figures.raw - 1) * 100)} % |`;
}

/** Raw fetch of an increment exactly as the client sends it (its key included), and of a top read. */
function rawCalls(
  base: string,
  send: typeof fetch = fetch,
): { increment: () => Promise<unknown>; top: () => Promise<unknown> } {
  return {
    increment: async () => {
      const answer = await send(`${base}/boards/bench/items/item-1/increment`, {
        method: 'POST',
        headers: {
          accept: 'application/json',
          'content-type': 'application/json',
          'idempotency-key': globalThis.crypto.randomUUID(),
        },
        body: JSON.stringify({ amount: 1 }),
      });
      if (!answer.ok) throw new Error(`HTTP ${answer.status}`);
      return answer.json();
    },
    top: async () => {
      const answer = await send(`${base}/boards/bench/top?limit=10`, { headers: { accept: 'application/json' } });
      if (!answer.ok) throw new Error(`HTTP ${answer.status}`);
      return answer.json();
    },
  };
}

/** Raw fetch and the client against an in-process fetch that answers at once: the client's own cost. */
async function memoryRows(): Promise<string[]> {
  const fromMemory: typeof fetch = () =>
    Promise.resolve(new Response(STUB_ANSWER, { headers: { 'content-type': 'application/json' } }));
  const memoryClient = new TrendboardClient({ baseUrl: 'http://memory.invalid', fetch: fromMemory });
  const memoryRaw = rawCalls('http://memory.invalid', fromMemory);
  const memoryCalls = CALLS * 10;
  return [
    row(
      'no network: increment',
      await measure(
        { raw: memoryRaw.increment, client: () => memoryClient.boards.increment('bench', 'item-1', { amount: 1 }) },
        memoryCalls,
      ),
    ),
    row(
      'no network: top',
      await measure({ raw: memoryRaw.top, client: () => memoryClient.boards.top('bench', { limit: 10 }) }, memoryCalls),
    ),
  ];
}

/** The same against a local HTTP server that answers the same body to any request. */
async function stubRows(): Promise<string[]> {
  const stub = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(STUB_ANSWER);
    });
  });
  await new Promise<void>((resolve) => stub.listen(0, '127.0.0.1', resolve));
  const stubUrl = `http://127.0.0.1:${(stub.address() as AddressInfo).port}`;
  const stubClient = new TrendboardClient({ baseUrl: stubUrl });
  const stubRaw = rawCalls(stubUrl);
  const rows = [
    row(
      'stub server: increment',
      await measure({
        raw: stubRaw.increment,
        client: () => stubClient.boards.increment('bench', 'item-1', { amount: 1 }),
      }),
    ),
    row(
      'stub server: top',
      await measure({ raw: stubRaw.top, client: () => stubClient.boards.top('bench', { limit: 10 }) }),
    ),
  ];
  stub.close();
  return rows;
}

/** The same against the service on a private redis-server. */
async function serviceRows(): Promise<string[]> {
  const redis = await startRedisServer();
  const app = await createApp({
    env: { REDIS_URL: redis.url, ADMIN_TOKEN, LOG_LEVEL: 'error', KEY_PREFIX: 'benchclient:' },
  });
  try {
    await app.listen(0, '127.0.0.1');
    const base = (await app.getUrl()).replace('[::1]', '127.0.0.1');
    const client = new TrendboardClient({ baseUrl: base, adminToken: ADMIN_TOKEN });
    await client.boards.put('bench', { windows: [{ period: '1h', interval: '1m' }] });
    const raw = rawCalls(base);
    return [
      row(
        'service: increment',
        await measure({ raw: raw.increment, client: () => client.boards.increment('bench', 'item-1', { amount: 1 }) }),
      ),
      row(
        'service: top (10 rows)',
        await measure({ raw: raw.top, client: () => client.boards.top('bench', { limit: 10 }) }),
      ),
    ];
  } finally {
    await app.close();
    await stopChild(redis.child);
  }
}

export async function clientBench(): Promise<void> {
  const lines = [
    `Client overhead per call (Node ${process.version}; ${ROUNDS} alternating rounds of ${CALLS} sequential calls, medians)\n`,
    '| call | raw fetch µs | client µs | client overhead µs | overhead |',
    '|---|---|---|---|---|',
  ];
  lines.push(...(await memoryRows()), ...(await stubRows()), ...(await serviceRows()));
  console.log(lines.join('\n'));
}
