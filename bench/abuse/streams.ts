import { Socket } from 'node:net';
import { cpuSeconds } from '../process-stats';
import type { AbusePart, AbuseRow } from './abuse-part';
import {
  ADMIN,
  address,
  call,
  LONG_IDS,
  openStream,
  putBoard,
  readsHeld,
  rssMb,
  stalledStream,
  startAll,
  tcpKernelMb,
  unrelatedReads,
  withWriters,
  writer,
} from './stream-clients';

/**
 * Issue #22 rows 1-5 and the HEAD hang, replayed against the built service (dist/main.js) on a private
 * redis-server, loopback only. Clients come from distinct loopback addresses (127.0.0.x) where the
 * attack needs many clients. Each flood lasts at most 20 s; the whole part about a minute.
 */

/**
 * `total` streams of the live board, 100 opened at a time, from `clients` clients: loopback addresses,
 * which the service counts as one client (loopback is one machine), or with `forwarded` addresses of
 * 10.0.0.0/16 in X-Forwarded-For (the service trusting loopback as its proxy): one client each.
 */
async function tallyStreams(flood: { url: string; clients: number; total: number; forwarded?: boolean }) {
  const { url, clients, total } = flood;
  const counts: Record<number, number> = {};
  const sockets: Socket[] = [];
  for (let start = 0; start < total; start += 100) {
    const opened = await Promise.all(
      Array.from({ length: Math.min(100, total - start) }, (_, i) => {
        const n = (start + i) % clients;
        const headers: Record<string, string> = flood.forwarded ? { 'x-forwarded-for': forwardedAddress(n) } : {};
        return openStream(`${url}/boards/live/stream`, address(n), headers);
      }),
    );
    for (const stream of opened) {
      counts[stream.status] = (counts[stream.status] ?? 0) + 1;
      sockets.push(stream.socket);
    }
  }
  return { counts, sockets };
}

const forwardedAddress = (n: number) => `10.0.${Math.floor(n / 250)}.${1 + (n % 250)}`;

function describe(counts: Record<number, number>): string {
  return Object.entries(counts)
    .map(([status, count]) => `${count}×${status}`)
    .join(', ');
}

async function manyStreams(): Promise<AbuseRow[]> {
  // Behind a trusted proxy (loopback) each forwarded address is a client; the loopback peers one.
  const service = await startAll({ TRUST_PROXY: '127.0.0.0/8' });
  try {
    await putBoard(service.url, 'live');
    await putBoard(service.url, 'other');
    const tally = (clients: number, total: number, forwarded = false) =>
      tallyStreams({ url: service.url, clients, total, forwarded });
    const baseline = await unrelatedReads(service.url, Date.now() + 2000);
    const oneClient = await tally(1, 2000);
    for (const socket of oneClient.sockets) socket.destroy();
    await new Promise((resolve) => setTimeout(resolve, 500));
    const floodStartMs = Date.now();
    const manyClients = await tally(100, 2500, true);
    const floodSec = (Date.now() - floodStartMs) / 1000;
    const probe = await call(`${service.url}/health/live`);
    const reads = await unrelatedReads(service.url, Date.now() + 3000);
    for (const socket of manyClients.sockets) socket.destroy();
    return [
      {
        attack: '1: 2 000 SSE streams from one client (open mode)',
        measured: `${describe(oneClient.counts)} (per-client cap 32: 429 STREAM_LIMIT)`,
        held: (oneClient.counts[200] ?? 0) === 32,
      },
      {
        attack: '1: 2 500 SSE streams from 100 clients (addresses forwarded by a trusted proxy)',
        measured: `${describe(manyClients.counts)} in ${floodSec.toFixed(1)} s (instance cap 2 000: 503 STREAM_CAPACITY); /health/live ${probe.status}; unrelated top p99 ${reads.p99Ms} ms (before ${baseline.p99Ms} ms), ${reads.failed}/${reads.count} failed`,
        // The instance's cap reached (503s), not a client's: the flood measured what it names.
        held:
          (manyClients.counts[200] ?? 0) <= 2000 &&
          (manyClients.counts[503] ?? 0) > 0 &&
          probe.status === 200 &&
          readsHeld(reads, baseline),
      },
    ];
  } finally {
    await service.stop();
  }
}

/** The service's RSS and the kernel's TCP memory every 200 ms until stopped: at the start, its peak, and 5 s before `untilMs`. */
function sampleMemory(pid: number | undefined, untilMs: number) {
  const figures = {
    rssBeforeMb: rssMb(pid),
    rssMidMb: 0,
    rssPeakMb: 0,
    kernelBeforeMb: tcpKernelMb(),
    kernelPeakMb: 0,
  };
  figures.rssPeakMb = figures.rssBeforeMb;
  figures.kernelPeakMb = figures.kernelBeforeMb;
  const sampler = setInterval(() => {
    figures.rssPeakMb = Math.max(figures.rssPeakMb, rssMb(pid));
    if (figures.rssMidMb === 0 && Date.now() >= untilMs - 5000) figures.rssMidMb = rssMb(pid);
    figures.kernelPeakMb = Math.max(figures.kernelPeakMb, tcpKernelMb());
  }, 200);
  return {
    stop: () => {
      clearInterval(sampler);
      return figures;
    },
  };
}

async function stalledReaders(): Promise<AbuseRow> {
  const service = await startAll();
  const sockets: Socket[] = [];
  try {
    await putBoard(service.url, 'busy');
    await putBoard(service.url, 'other');
    await call(`${service.url}/boards/busy/increments`, 'POST', {
      items: LONG_IDS.map((item, i) => ({ item, amount: 1_000_000 - i })),
    });
    const baseline = await withWriters(service.url, 'busy', LONG_IDS);
    for (let i = 0; i < 200; i++)
      sockets.push(await stalledStream(`${service.url}/boards/busy/stream?limit=100`, address(i % 7)));
    const untilMs = Date.now() + 10_000;
    const memory = sampleMemory(service.child.pid, untilMs);
    const [reads] = await Promise.all([
      unrelatedReads(service.url, untilMs),
      writer(service.url, 'busy', LONG_IDS[0], untilMs),
      writer(service.url, 'busy', LONG_IDS[1], untilMs),
    ]);
    const { rssBeforeMb, rssMidMb, rssPeakMb, kernelBeforeMb, kernelPeakMb } = memory.stop();
    const rssAfterMb = rssMb(service.child.pid);
    return {
      attack: '2: 200 streams that never read, on a busy board, 10 s',
      measured: `service RSS ${rssBeforeMb} MB, ${rssMidMb} MB at 5 s, ${rssAfterMb} MB at 10 s (peak ${rssPeakMb}); kernel TCP memory ${kernelBeforeMb} → peak ${kernelPeakMb} MB; unrelated top p99 ${reads.p99Ms} ms (same writes, no streams: ${baseline.p99Ms} ms), ${reads.failed}/${reads.count} failed`,
      // Bounded: no growth over the flood's second half (the old code grew 41 MB/s).
      held: rssAfterMb - rssMidMb < 20 && readsHeld(reads, baseline),
    };
  } finally {
    for (const socket of sockets) socket.destroy();
    await service.stop();
  }
}

async function stalledThenDeleted(): Promise<AbuseRow> {
  const service = await startAll();
  try {
    await putBoard(service.url, 'doomed');
    await call(`${service.url}/boards/doomed/increments`, 'POST', {
      items: LONG_IDS.map((item, i) => ({ item, amount: 1_000_000 - i })),
    });
    const stalled = await stalledStream(`${service.url}/boards/doomed/stream?limit=100`, '127.0.0.1');
    await writer(service.url, 'doomed', LONG_IDS[0], Date.now() + 2000);
    await call(`${service.url}/admin/boards/doomed`, 'DELETE', undefined, ADMIN);
    // Past one heartbeat (15 s): on the old code it wrote to the ended response.
    await new Promise((resolve) => setTimeout(resolve, 16_000));
    const alive = service.child.exitCode === null;
    const probe = alive ? await call(`${service.url}/health/live`).catch(() => ({ status: 0 })) : { status: 0 };
    stalled.destroy();
    return {
      attack: '3: one stalled stream, then its board deleted (+ a heartbeat)',
      measured: `process ${alive ? 'alive' : `exited (${service.child.exitCode})`}; /health/live ${probe.status}`,
      held: alive && probe.status === 200,
    };
  } finally {
    await service.stop();
  }
}

/** 1 500 idle boards; 300 streams of the groups board over distinct window/limit pairs, then one stream of each idle board. */
async function openGroupStreams(url: string, sockets: Socket[]): Promise<void> {
  const boards = 1500;
  for (let start = 0; start < boards; start += 50)
    await Promise.all(Array.from({ length: 50 }, (_, i) => putBoard(url, `idle${start + i}`)));
  for (const window of ['1m', '5m', '1h'])
    for (let limit = 1; limit <= 100; limit += 10) {
      const opened = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          openStream(`${url}/boards/groups/stream?window=${window}&limit=${limit + i}`, '127.0.0.1'),
        ),
      );
      sockets.push(...opened.map((stream) => stream.socket));
    }
  for (let start = 0; start < boards; start += 100) {
    const opened = await Promise.all(
      Array.from({ length: 100 }, (_, i) => openStream(`${url}/boards/idle${start + i}/stream`, '127.0.0.2')),
    );
    sockets.push(...opened.map((stream) => stream.socket));
  }
}

async function manyGroups(): Promise<AbuseRow> {
  const service = await startAll({ STREAM_MAX_PER_CLIENT: '1000' });
  const sockets: Socket[] = [];
  try {
    const windows = ['1m', '5m', '1h'].map((period) => ({ name: period, period, interval: '1m' }));
    await putBoard(service.url, 'groups', windows);
    await putBoard(service.url, 'other');
    await openGroupStreams(service.url, sockets);
    const baseline = await withWriters(service.url, 'groups', ['a']);
    const cpuBefore = cpuSeconds(service.child.pid);
    const startedMs = Date.now();
    const untilMs = startedMs + 10_000;
    const [reads] = await Promise.all([
      unrelatedReads(service.url, untilMs),
      writer(service.url, 'groups', 'a', untilMs),
      writer(service.url, 'idle7', 'b', untilMs),
    ]);
    const cpuShare = (cpuSeconds(service.child.pid) - cpuBefore) / ((Date.now() - startedMs) / 1000);
    return {
      attack: '4: 300 streams over distinct window/limit pairs + 1 500 streams on 1 500 boards, 10 s',
      measured: `unrelated top p99 ${reads.p99Ms} ms (same writes, no streams: ${baseline.p99Ms} ms), ${reads.failed}/${reads.count} not 200; service CPU ${Math.round(cpuShare * 100)} % (a writer included)`,
      held: readsHeld(reads, baseline),
    };
  } finally {
    for (const socket of sockets) socket.destroy();
    await service.stop();
  }
}

/** A read key's stream of the secret board, then the key revoked: whether the stream ended within 2 s, and when. */
async function revokeWhileStreaming(url: string): Promise<{ ended: boolean; endedMs: number }> {
  const made = await call(`${url}/admin/keys`, 'POST', { name: 'viewer', scopes: ['read'] }, ADMIN);
  const key = (JSON.parse(made.text) as { key: string }).key;
  const stream = await openStream(`${url}/boards/secret/stream`, '127.0.0.1', {
    authorization: `Bearer ${key}`,
  });
  const revokedMs = performance.now();
  await call(`${url}/admin/keys/viewer`, 'DELETE', undefined, ADMIN);
  const ended = await Promise.race([
    stream.ended.then(() => true),
    new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 2000)),
  ]);
  const endedMs = Math.round(performance.now() - revokedMs);
  stream.socket.destroy();
  return { ended, endedMs };
}

async function revokedAndHead(): Promise<AbuseRow[]> {
  const service = await startAll();
  try {
    await putBoard(service.url, 'secret');
    const { ended, endedMs } = await revokeWhileStreaming(service.url);
    const headStartMs = performance.now();
    const head = await Promise.race([
      call(`${service.url}/boards/secret/stream`, 'HEAD'),
      new Promise<{ status: number }>((resolve) => setTimeout(() => resolve({ status: 0 }), 2000)),
    ]);
    return [
      {
        attack: '5: a key revoked while its stream is open',
        measured: ended
          ? `stream ended ${endedMs} ms after the revocation`
          : 'stream still open 2 s after the revocation',
        held: ended,
      },
      {
        attack: '(HEAD) HEAD /boards/:board/stream',
        measured:
          head.status === 0
            ? 'no answer within 2 s'
            : `${head.status} in ${Math.round(performance.now() - headStartMs)} ms`,
        held: head.status === 401 || head.status === 200,
      },
    ];
  } finally {
    await service.stop();
  }
}

export const streamsAbuse: AbusePart = async () => [
  ...(await manyStreams()),
  await stalledReaders(),
  await stalledThenDeleted(),
  await manyGroups(),
  ...(await revokedAndHead()),
];
