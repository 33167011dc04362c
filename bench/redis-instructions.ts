/**
 * Redis's instructions per request (issue #24's "Redis CPU per acknowledged increment", counted instead
 * of timed; `npm run bench -- --part redis-instructions`, under a minute). This VM has
 * no hardware counters and its CPU times move with the host, so redis-server runs under valgrind's
 * callgrind, which counts the instructions Redis executes in user space, the same for the same work
 * whatever else the machine does. Kernel work (the socket's read and write, epoll) is not counted: it
 * is paid per call Redis reads, so the table gives calls per request beside it.
 *
 * Each variant runs CALLS calls on the same plain one-window board of 10 000 items (the hot-path
 * bench's) or on the hand-rolled script's keys (bench/minimal-increment.lua), every call sent after the
 * last one's reply, as a Redis serving an HTTP service sees them when each wake-up finds one call
 * (the coalescer keeps one call per shard in flight); the hand-rolled script is also sent INSTR_PIPELINED
 * calls at a time, as its 50 connections hand a busy Redis several per wake-up. Counters are dumped
 * (`callgrind_control -d`) before and after each variant; CALLS is large enough that Lua's collector,
 * stepped every 50 calls, is paid inside the counts. INSTR_CACHE=1 adds callgrind's simulated caches
 * (first-level data misses and last-level misses per request; a warm cache, no other process).
 * INSTR_KEEP=1 keeps the dumps and prints their files, for `callgrind_annotate` (the Debian redis-server
 * has no symbols, so only the totals mean much). INSTR_PARTS=1 adds the increment call part by part.
 */
import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Redis from 'ioredis';
import { PreparedBoard } from '../src/ranking/core/board';
import { RANKING } from '../src/ranking/ranking.functions';
import { fcallArgs } from '../src/redis/redis-functions';
import { freePort, stopChild, waitForPing } from '../harness/processes';
import { cutLibrary, incrementPartCuts, seedMinimal } from './coalesced-increment';
import { benchFunctions } from './functions-client';
import { makePlainBoard, onPlainShard, PLAIN_BOARD_ITEMS } from './plain-boards';

const S = RANKING.functions;
const CALLS = Number(process.env.INSTR_CALLS ?? 600);
const PIPELINED = Number(process.env.INSTR_PIPELINED ?? 16);
const CACHE = process.env.INSTR_CACHE === '1';
const KEEP = process.env.INSTR_KEEP === '1';
const PARTS = process.env.INSTR_PARTS === '1';
/** Requests per call of the INSTR_PARTS table. */
const PARTS_SIZES = [1, 16];

/** Requests per coalesced call: one alone, and the sizes seen under HTTP load (15-26 in earlier runs). */
const CALL_SIZES = [1, 4, 16, 25];

/** A library of one function that does nothing: what any FCALL costs Redis. */
const NOOP_LIBRARY = "#!lua name=tb_bench_noop\nredis.register_function('tb_bench_noop', function() return 1 end)";

export interface Callgrind {
  child: ChildProcess;
  url: string;
  dir: string;
}

/**
 * redis-server under callgrind on a free port, answering PING (valgrind takes seconds to start it);
 * `extraArgs` after the bench's own, `valgrindArgs` after callgrind's (`--instr-atstart=no`: nothing
 * counted, and Redis several times faster, till `counting(server, true)`).
 */
export async function startCallgrindRedis(extraArgs: string[] = [], valgrindArgs: string[] = []): Promise<Callgrind> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'tb-callgrind-'));
  const child = spawn(
    'valgrind',
    [
      '--tool=callgrind',
      `--callgrind-out-file=${join(dir, 'cg.out')}`,
      '--dump-instr=no',
      `--cache-sim=${CACHE ? 'yes' : 'no'}`,
      ...valgrindArgs,
      'redis-server',
      ...['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      ...extraArgs,
    ],
    { stdio: 'ignore' },
  );
  for (let attempt = 0; attempt < 20; attempt++) {
    if (await waitForPing(port, child)) return { child, url: `redis://127.0.0.1:${port}`, dir };
  }
  await stopChild(child);
  throw new Error('redis-server under callgrind did not start');
}

/** Turns callgrind's counting on or off (a server started with `--instr-atstart=no` counts nothing till on). */
export function counting(server: Callgrind, on: boolean): void {
  execFileSync('callgrind_control', ['-i', on ? 'on' : 'off', String(server.child.pid)], { stdio: 'ignore' });
}

/** A word to Atomics.wait on: a pause of the dump's wait, nothing else waits on it. */
const PAUSE = new Int32Array(new SharedArrayBuffer(4));

/**
 * The events callgrind counted since its last dump (Ir, and with INSTR_CACHE the cache events), by name, and the
 * dump's file; under `--separate-threads=yes` (a file per thread) `counts` sums the threads and `main` is Redis'
 * main thread's alone (what a call holds other clients for; a lazy free runs on a background thread).
 */
export function dumpCounts(server: Callgrind): {
  counts: Record<string, number>;
  main: Record<string, number>;
  file: string;
} {
  const before = new Set(readdirSync(server.dir));
  const fresh = () =>
    readdirSync(server.dir)
      .filter((name) => !before.has(name))
      .sort();
  // On a loaded host callgrind_control may return before the dump is written: wait for it (up to 60 s:
  // at a load of 18 on 2 cores 10 s was not always enough), and ask once more (at a load of 20 with
  // three callgrind runs a request was lost: callgrind_control said OK and nothing was ever written).
  let said = '';
  for (let ask = 0; ask < 2 && fresh().length === 0; ask++) {
    said = execFileSync('callgrind_control', ['-d', String(server.child.pid)], { encoding: 'utf8' });
    for (let wait = 0; wait < 600 && fresh().length === 0; wait++) Atomics.wait(PAUSE, 0, 0, 100);
  }
  const dumped = fresh();
  if (dumped.length === 0) throw new Error(`callgrind_control -d wrote no file: ${said}`);
  const threads = dumped.map((name) => eventsOf(readFileSync(join(server.dir, name), 'utf8')));
  const counts: Record<string, number> = {};
  for (const thread of threads)
    for (const [name, value] of Object.entries(thread)) counts[name] = (counts[name] ?? 0) + value;
  return { counts, main: threads[0], file: join(server.dir, dumped[0]) };
}

/**
 * The commands a dump's script calls ran, by name: how many and their instructions (each command's own function
 * and what it called, from `callgrind_annotate --tree=calling`), costliest first. Read from the dump rather than
 * SLOWLOG, whose entry per command (and the latency histograms a CONFIG RESETSTAT makes each command start
 * again) would be counted inside the call: 0.3-1.5 M instructions of a write of a few hundred commands.
 */
export function scriptCommandsOf(file: string): Array<{ name: string; calls: number; ir: number }> {
  const tree = execFileSync('callgrind_annotate', ['--inclusive=yes', '--tree=calling', file], {
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  });
  // The commands a script runs are called from call() one level below the FCALL's own (callgrind names it call'2).
  const block = /^\s*[\d,]+ \([^)]*\)\s+\*\s+\S*:call'2 \[[^\n]*\n((?:[^\n]*>[^\n]*\n)*)/m.exec(tree)?.[1] ?? '';
  const commands = [...block.matchAll(/^\s*([\d,]+) \([^)]*\)\s+>\s+\S*:(\w+)Command \((\d+)x\)/gm)];
  return commands
    .map(([, ir, name, calls]) => ({
      name: name.toLowerCase(),
      calls: Number(calls),
      ir: Number(ir.replace(/,/g, '')),
    }))
    .sort((a, b) => b.ir - a.ir);
}

/** The instructions a dump counts inside FCALL (fcallCommand and what it called), 0 when it ran none. */
export function fcallInstructionsOf(file: string): number {
  const listing = execFileSync('callgrind_annotate', ['--inclusive=yes', file], {
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  });
  const found = /^\s*([\d,]+) \([^)]*\)\s+\S*:fcallCommand \[/m.exec(listing);
  return found ? Number(found[1].replace(/,/g, '')) : 0;
}

/** A callgrind dump's event totals by name. */
function eventsOf(text: string): Record<string, number> {
  const names = /^events: (.+)$/m.exec(text)?.[1].split(' ') ?? [];
  const totals = /^summary: (.+)$/m.exec(text)?.[1].split(' ').map(Number) ?? [];
  return Object.fromEntries(names.map((name, i) => [name, totals[i] ?? 0]));
}

interface Variant {
  name: string;
  requestsPerCall: number;
  callsAtOnce: number;
  /** Sends the `n`th call. */
  send: (redis: Redis, n: number) => Promise<unknown>;
}

interface Counted {
  variant: Variant;
  perRequest: Record<string, number>;
  /** The variant's callgrind dump (kept with INSTR_KEEP=1, for callgrind_annotate). */
  file: string;
}

async function count(redis: Redis, server: Callgrind, v: Variant): Promise<Counted> {
  dumpCounts(server);
  for (let sent = 0; sent < CALLS; sent += v.callsAtOnce) {
    const calls = Array.from({ length: Math.min(v.callsAtOnce, CALLS - sent) }, (_, i) => v.send(redis, sent + i));
    await Promise.all(calls);
  }
  const { counts, file } = dumpCounts(server);
  const requests = CALLS * v.requestsPerCall;
  return {
    variant: v,
    perRequest: Object.fromEntries(Object.entries(counts).map(([name, total]) => [name, total / requests])),
    file,
  };
}

/** What the variants call: the seeded board, the hand-rolled script's keys, and the write header's settings. */
interface Setup {
  board: PreparedBoard;
  nowMs: number;
  expireChunk: number;
  minimal: { sha: string; keys: [string, string] };
}

const itemOf = (n: number) => `i${(n * 7919) % PLAIN_BOARD_ITEMS}`;

/** The service's coalesced increment, `size` requests a call (under another library's name for the parts). */
function coalescedVariant(
  setup: Setup,
  size: number,
  name = `the service's increment, calls of ${size}`,
  fn = S.increments.redisName,
): Variant {
  const { board, nowMs, expireChunk } = setup;
  return {
    name,
    requestsPerCall: size,
    callsAtOnce: 1,
    send: (client: Redis, n: number) =>
      client.fcall(
        fn,
        ...fcallArgs(
          S.increments,
          S.increments.build({
            ...onPlainShard(board, nowMs, expireChunk),
            requests: Array.from({ length: size }, (_, k) => ({ item: itemOf(n * size + k), amount: 1, newItems: 1 })),
          }),
        ),
      ),
  };
}

function handRolledVariant(setup: Setup, callsAtOnce: number): Variant {
  const { minimal } = setup;
  return {
    name: `hand-rolled script, ${callsAtOnce === 1 ? 'one call at a time' : `${callsAtOnce} calls at a time`}`,
    requestsPerCall: 1,
    callsAtOnce,
    send: (client, n) => client.evalsha(minimal.sha, 2, ...minimal.keys, itemOf(n), 1),
  };
}

/** The floor (PING, an empty FCALL), the hand-rolled script, the service's increments, and both top-10 reads. */
function variantsOf(setup: Setup): Variant[] {
  const { board, nowMs, expireChunk, minimal } = setup;
  const window = board.config.windows[0];
  const topArgs = fcallArgs(
    S.readTop,
    S.readTop.build({ ...onPlainShard(board, nowMs, expireChunk), window, offset: 0, limit: 10 }),
  );
  const one = { requestsPerCall: 1, callsAtOnce: 1 };
  return [
    { name: 'PING (a round trip, no work)', ...one, send: (client) => client.ping() },
    { name: 'FCALL of a function returning 1', ...one, send: (client) => client.fcall('tb_bench_noop', 0) },
    handRolledVariant(setup, 1),
    handRolledVariant(setup, PIPELINED),
    ...CALL_SIZES.map((size) => coalescedVariant(setup, size)),
    {
      name: 'hand-rolled top-10: ZREVRANGE … WITHSCORES',
      ...one,
      send: (client) => client.zrevrange(minimal.keys[1], 0, 9, 'WITHSCORES'),
    },
    { name: "the service's top-10 read", ...one, send: (client) => client.fcall(S.readTop.redisName, ...topArgs) },
  ];
}

export async function redisInstructionsBench(): Promise<void> {
  const server = await startCallgrindRedis();
  // Auto-pipelining off: a variant decides how many calls Redis finds at once.
  const redis = new Redis(server.url, { enableAutoPipelining: false });
  try {
    const { functions, ranking, prefix } = await benchFunctions(server.url, redis, [RANKING.library], {
      // Setup goes through the service's deadline, and valgrind runs Redis about 50 times slower.
      REDIS_COMMAND_TIMEOUT_MS: '60000',
    });
    const nowMs = Date.now();
    const common = { functions, prefix, windowCount: 1, nowMs, expireChunk: ranking.expireChunk };
    const board = await makePlainBoard({ ...common, name: 'instructions', amountOf: (i) => 1 + (i % 97) });
    const minimal = await seedMinimal(redis, `{${prefix}minimal}`);
    const setup: Setup = { board, nowMs, expireChunk: ranking.expireChunk, minimal };
    await redis.function('LOAD', 'REPLACE', NOOP_LIBRARY);
    const counted: Counted[] = [];
    for (const v of variantsOf(setup)) counted.push(await count(redis, server, v));
    report(counted);
    if (PARTS) await reportParts(redis, server, (size, name, fn) => coalescedVariant(setup, size, name, fn));
  } finally {
    redis.disconnect();
    await stopChild(server.child);
    if (!KEEP) rmSync(server.dir, { recursive: true, force: true });
  }
}

async function reportParts(
  redis: Redis,
  server: Callgrind,
  coalesced: (size: number, name: string, fn: string) => Variant,
): Promise<void> {
  // Copies of the library whose increment returns early (cutLibrary, as bench/coalesced-increment.ts cuts).
  const cuts = incrementPartCuts();
  const names = cuts.map((_, i) => `tb_parts${i}`);
  for (const [i, cut] of cuts.entries()) await redis.function('LOAD', 'REPLACE', cutLibrary(names[i], cut));
  const rows = [...cuts.map((cut) => cut.label), '+ the change version and the reply (the whole call)'];
  const perCall: number[][] = [];
  for (const size of PARTS_SIZES) {
    const fns = [
      ...names.map((name) => S.increments.redisName.replace(RANKING.library.name, name)),
      S.increments.redisName,
    ];
    const counts: number[] = [];
    for (const fn of fns) counts.push((await count(redis, server, coalesced(size, fn, fn))).perRequest.Ir * size);
    perCall.push(counts);
  }
  console.log(`\nThe increment call part by part: instructions per call, cumulative.\n`);
  console.log(`| returns after | ${PARTS_SIZES.map((size) => `call of ${size}`).join(' | ')} |`);
  console.log(`| ------------- | ${PARTS_SIZES.map(() => '---:').join(' | ')} |`);
  rows.forEach((row, i) => console.log(`| ${row} | ${perCall.map((counts) => counts[i].toFixed(0)).join(' | ')} |`));
}

function report(counted: Counted[]): void {
  console.log(`callgrind, ${CALLS} calls per variant; instructions Redis executed in user space, per request.\n`);
  const cacheColumns = CACHE ? ' first-level data misses | last-level misses |' : '';
  console.log(`| variant | calls per request | instructions |${cacheColumns}`);
  console.log(`| ------- | ----------------: | -----------: |${CACHE ? ' ---: | ---: |' : ''}`);
  for (const { variant, perRequest, file } of counted) {
    if (KEEP) console.log(`${variant.name}: ${file}`);
    const cache = CACHE
      ? ` ${(perRequest.D1mr + perRequest.D1mw).toFixed(0)} | ${(perRequest.ILmr + perRequest.DLmr + perRequest.DLmw).toFixed(0)} |`
      : '';
    console.log(
      `| ${variant.name} | ${(1 / variant.requestsPerCall).toFixed(3)} | ${perRequest.Ir.toFixed(0)} |${cache}`,
    );
  }
}
