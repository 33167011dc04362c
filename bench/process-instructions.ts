/**
 * Instructions the server process spends per increment, the service against the hand-rolled server,
 * counted under callgrind (`npm run bench -- --part process-instructions`; this VM has no hardware
 * counters). Each server runs under `valgrind --tool=callgrind --instr-atstart=no` on one private
 * redis-server holding the hot-path board (bench/hot-seed.ts); instrumentation is switched on for a
 * warm-up of PROC_WARMUP (4 000) increments, then PROC_ROUNDS (5) rounds of PROC_REQUESTS (3 000)
 * increments at PROC_CONNECTIONS (16) are counted per server, the servers taking turns. Fair to both:
 * every server runs as `node --expose-gc -r bench/gc-on-signal.ts` with the same flags, and each counted
 * round starts right after a scavenge in that server (SIGUSR2, the bench waits for it to finish) with its
 * counters zeroed after it, so no round pays for the young garbage an earlier round or its warm-up left.
 * Not a full collection (PROC_GC=major, for comparison): on an idle server it finds dead the maps and
 * constants optimised code holds weakly and deoptimises that code, so each round paid the JIT again
 * instead of measuring the steady state; old-generation collections fall in the rounds as they come.
 * Each round gives two counts: the main thread's (the JavaScript, the HTTP parser,
 * the collector's main-thread share), the one to judge a cut by, and every thread's (V8's concurrent
 * marker, scavenger and compiler helpers too: the CPU /proc counts; it swings more from round to round).
 * The ratio is reported per round, with its median and its spread (min-max) over the rounds. PROC_DISTS names other service builds (`name=dir/dist`, comma-separated) counted in the same
 * rounds; PROC_KEEP_DUMPS=1 keeps each server's callgrind dump of its last round (for callgrind_annotate).
 */
import autocannon from 'autocannon';
import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import ts from 'typescript';
import Redis from 'ioredis';
import { freePort, stopChild } from '../harness/processes';
import { loadAverage } from './call-rounds';
import { BENCH_ADMIN_TOKEN, BOARD, ITEMS, PREFIX, seededService } from './hot-seed';
import { startRedisServer, waitForHttp } from './process-stats';

const SERVER_HOST = '127.0.0.1';
const WARMUP = Number(process.env.PROC_WARMUP ?? 4000);
const REQUESTS = Number(process.env.PROC_REQUESTS ?? 3000);
const CONNECTIONS = Number(process.env.PROC_CONNECTIONS ?? 16);
const ROUNDS = Number(process.env.PROC_ROUNDS ?? 5);
/** PROC_DISTS=name=dir,...: other service builds (their dist/) counted in the same rounds. */
const OTHER_DISTS = (process.env.PROC_DISTS ?? '').split(',').filter(Boolean);
const KEEP_DUMPS = process.env.PROC_KEEP_DUMPS === '1';
/** PROC_NODE_FLAGS: more flags for every server's node (e.g. `--no-memory-reducer`), space-separated. */
const NODE_FLAGS = (process.env.PROC_NODE_FLAGS ?? '').split(' ').filter(Boolean);
/** PROC_GC: the collection before each round, `minor` (a scavenge) or `major` (the whole heap): see gc-on-signal. */
const GC_TYPE = process.env.PROC_GC ?? 'minor';
/** Preloaded into every server (`-r`): a full collection on SIGUSR2. */
const GC_PRELOAD_FILE = 'gc-on-signal.ts';
/** How often the bench looks for a server's collection to have finished. */
const GC_POLL_MS = 50;

interface Counted {
  name: string;
  child: ChildProcess;
  url: string;
  path: string;
  dir: string;
}

/** Instructions of one counted span: the main thread's, and every thread's. */
interface Count {
  main: number;
  all: number;
}

async function underCallgrind(name: string, args: string[], env: Record<string, string>, path: string) {
  const dir = mkdtempSync(join(tmpdir(), 'proc-instr-'));
  const port = await freePort();
  const child = spawn(
    'valgrind',
    [
      '--tool=callgrind',
      '--instr-atstart=no',
      `--callgrind-out-file=${join(dir, 'cg.%p')}`,
      `--vgdb-prefix=${join(dir, 'vgdb')}`,
      process.execPath,
      '--expose-gc',
      ...NODE_FLAGS,
      '-r',
      gcPreload(args[0]),
      ...args,
    ],
    {
      env: { ...process.env, PORT: String(port), HOST: SERVER_HOST, GC_DONE_FILE: join(dir, 'gc-done'), ...env },
      stdio: ['ignore', 'ignore', 'inherit'],
      cwd: join(__dirname, '..'),
    },
  );
  const url = `http://127.0.0.1:${port}`;
  const top = `${url}${path.startsWith('/minimal') ? '/minimal' : `/boards/${BOARD}`}/top`;
  // Under valgrind a boot takes minutes on a loaded machine: waitForHttp's bound is a service's.
  for (let attempt = 0; ; attempt++)
    try {
      await waitForHttp(top);
      break;
    } catch (error) {
      if (attempt === 9) throw error;
    }
  return { name, child, url, path, dir };
}

/**
 * callgrind_control on the server, through its own vgdb pipe; answers what it printed.
 */
function control(server: Counted, ...flags: string[]): string {
  const prefix = `--vgdb-prefix=${join(server.dir, 'vgdb')}`;
  // vgdb names its pipe after HOST too: the servers run with the service's HOST.
  const env = { ...process.env, HOST: SERVER_HOST };
  const done = spawnSync('callgrind_control', [prefix, ...flags, String(server.child.pid)], { encoding: 'utf8', env });
  if (done.status !== 0 || /error/i.test(done.stderr))
    throw new Error(`callgrind_control ${flags.join(' ')}: ${done.stderr}`);
  return done.stdout;
}

/** Answers other than 2xx (a Redis call timed out under valgrind's slowness): a count is void past 1 %. */
function increments(server: Counted, amount: number): Promise<number> {
  return new Promise((resolve, reject) => {
    autocannon(
      {
        url: `${server.url}${server.path}`,
        method: 'POST',
        body: '{"amount":1}',
        headers: { 'content-type': 'application/json' },
        requests: [
          {
            setupRequest: (request) => ({
              ...request,
              path: server.path.replace('[<item>]', `seed-${randomInt(ITEMS)}`),
            }),
          },
        ],
        connections: CONNECTIONS,
        amount,
        timeout: 60,
      },
      (error, result) => {
        if (error) return reject(error);
        if (result.non2xx > 0) console.log(`${server.name}: ${result.non2xx} answers not 2xx`);
        resolve(result['2xx']);
      },
    );
  });
}

/**
 * The instructions counted since the counters were last zeroed: `-e` shows one line a thread, thread 1
 * the main thread.
 */
function countedSinceZero(server: Counted): Count {
  const shown = control(server, '-e');
  const threads = new Map(
    [...shown.matchAll(/^\s*Th\s+(\d+)\s+([\d,]+)/gm)].map((line) => [line[1], Number(line[2].replaceAll(',', ''))]),
  );
  const main = threads.get('1');
  if (main === undefined) throw new Error(`callgrind_control -e showed no main thread's total: ${shown}`);
  return { main, all: [...threads.values()].reduce((sum, count) => sum + count, 0) };
}

/** A collection of GC_TYPE in the server (bench/gc-on-signal.ts), waited for. */
async function collected(server: Counted): Promise<void> {
  const done = join(server.dir, 'gc-done');
  rmSync(done, { force: true });
  server.child.kill('SIGUSR2');
  while (!existsSync(done)) await new Promise((resolve) => setTimeout(resolve, GC_POLL_MS));
}

/** bench/gc-on-signal.ts beside the build the server runs from. */
function gcPreload(script: string): string {
  return besideBuild(script, basename(GC_PRELOAD_FILE, '.ts'), (source) => source);
}

/**
 * bench/bare-server.ts as JavaScript beside the build, with the bench module it imports: ts-node
 * compiling it and its imports under valgrind took over ten minutes on a loaded machine.
 */
function bareServerScript(main: string): string {
  besideBuild(main, 'plain-boards', (source) => source);
  const lua = JSON.stringify(join(__dirname, 'minimal-increment.lua'));
  return besideBuild(main, 'bare-server', (source) => source.replace("join(__dirname, 'minimal-increment.lua')", lua));
}

/**
 * bench/<name>.ts as dist/bench-<name>.js: its imports of bench/ taken from their own such copies, of
 * src/ from the build.
 */
function besideBuild(main: string, name: string, adapt: (source: string) => string): string {
  const source = adapt(readFileSync(join(__dirname, `${name}.ts`), 'utf8'))
    .replaceAll("from './", "from './bench-")
    .replaceAll("'../src/", "'./");
  const script = join(dirname(main), `bench-${name}.js`);
  const { outputText } = ts.transpileModule(source, {
    compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true },
  });
  writeFileSync(script, outputText);
  return script;
}

async function counted(server: Counted): Promise<Count> {
  await collected(server);
  control(server, '-z');
  const ok = await increments(server, REQUESTS);
  const count = countedSinceZero(server);
  if (ok < REQUESTS * 0.99) throw new Error(`${server.name}: ${ok} of ${REQUESTS} answered 2xx`);
  return count;
}

/** The servers counted: this checkout's build, PROC_DISTS' builds, and the hand-rolled server, booted together. */
async function bootAll(redisUrl: string, env: Record<string, string>): Promise<Counted[]> {
  const incrementPath = `/boards/${BOARD}/items/[<item>]/increment`;
  const main = join(__dirname, '..', 'dist', 'main.js');
  const builds: Array<[string, string]> = [['service', main]];
  for (const named of OTHER_DISTS) {
    const [name, dir] = named.split('=');
    builds.push([name, join(dir, 'main.js')]);
  }
  const handRolledEnv = { REDIS_URL: redisUrl, KEY_PREFIX: PREFIX, BOARD, GC_TYPE };
  return Promise.all([
    ...builds.map(([name, script]) => underCallgrind(name, [script], { ...env, GC_TYPE }, incrementPath)),
    underCallgrind('hand-rolled', [bareServerScript(main)], handRolledEnv, '/minimal/[<item>]/increment'),
  ]);
}

/** Each server's instructions per increment (main thread, all threads), ROUNDS times, the servers taking turns. */
async function countRounds(servers: Counted[]): Promise<Map<string, Count[]>> {
  for (const server of servers) {
    control(server, '--instr=on');
    await increments(server, WARMUP);
  }
  const counts = new Map<string, Count[]>();
  for (let round = 0; round < ROUNDS; round++)
    for (const server of round % 2 === 0 ? servers : [...servers].reverse()) {
      const total = await counted(server);
      const perRequest = { main: total.main / REQUESTS, all: total.all / REQUESTS };
      counts.set(server.name, [...(counts.get(server.name) ?? []), perRequest]);
      console.log(
        `round ${round} ${server.name}: ${perRequest.main.toFixed(0)} main thread, ${perRequest.all.toFixed(0)} all threads per increment (load ${loadAverage()})`,
      );
    }
  return counts;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** Each round's ratios to the hand-rolled's same round, then their median and spread (min-max). */
function ratioCell(values: number[], base: number[]): string {
  const ratios = values.map((value, round) => value / base[round]);
  const shown = ratios.map((ratio) => ratio.toFixed(2)).join(', ');
  return `${shown}; median **${median(ratios).toFixed(2)}x** (${Math.min(...ratios).toFixed(2)}-${Math.max(...ratios).toFixed(2)})`;
}

function report(counts: Map<string, Count[]>): void {
  const base = counts.get('hand-rolled') ?? [];
  console.log(
    `\n${ROUNDS} rounds x ${REQUESTS} increments after ${WARMUP} of warm-up, each after a ${GC_TYPE} collection\n` +
      '| server | thread(s) | instructions per increment, median (min-max) | against the hand-rolled, each round |\n' +
      '| --- | --- | ---: | --- |',
  );
  for (const [name, values] of counts)
    for (const thread of ['main', 'all'] as const) {
      const mine = values.map((value) => value[thread]);
      const spread = `${Math.min(...mine).toFixed(0)}-${Math.max(...mine).toFixed(0)}`;
      const ratios = ratioCell(
        mine,
        base.map((value) => value[thread]),
      );
      console.log(`| ${name} | ${thread} | ${median(mine).toFixed(0)} (${spread}) | ${ratios} |`);
    }
}

/** The server's counts since the last zeroing (its last round) dumped beside it, for callgrind_annotate. */
function keepDump(server: Counted): void {
  try {
    control(server, '--dump=last-round');
    console.log(`${server.name}: callgrind dump of its last round in ${server.dir}`);
  } catch (error) {
    console.log(`${server.name}: no dump (${error instanceof Error ? error.message : String(error)})`);
  }
}

export async function processInstructionsBench(): Promise<void> {
  const redisServer = await startRedisServer();
  const redis = new Redis(redisServer.url);
  const servers: Counted[] = [];
  try {
    const env: Record<string, string> = {
      REDIS_URL: redisServer.url,
      ADMIN_TOKEN: BENCH_ADMIN_TOKEN,
      KEY_PREFIX: PREFIX,
    };
    const seeded = await seededService(env, redis, PREFIX);
    // Under valgrind a call's reply takes longer than the 500 ms default on a loaded machine: a 503 there is the bench's.
    env.REDIS_COMMAND_TIMEOUT_MS = '60000';
    await stopChild(seeded.child);
    servers.push(...(await bootAll(redisServer.url, env)));
    console.log(`booted under callgrind (load ${loadAverage()})`);
    report(await countRounds(servers));
  } finally {
    redis.disconnect();
    for (const server of servers) {
      // A server stopped under valgrind may not get to write its dump at exit: asked for it before.
      if (KEEP_DUMPS) keepDump(server);
      await stopChild(server.child);
      if (!KEEP_DUMPS) rmSync(server.dir, { recursive: true, force: true });
    }
    await stopChild(redisServer.child);
  }
}
