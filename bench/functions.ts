/**
 * Fixed cost of a call inside Redis (`npm run bench -- --part functions`, 10-20 s): a
 * call that does nothing but parse the common header (read_header of src/redis/functions/args.lua,
 * three windows) and answer 0, sent four ways to a private redis-server:
 *   - EVALSHA of the kind of script the ranking ran before it moved to functions (#23): its shared
 *     write modules (keys, idem, views, window, snapshot, board_write: ~930 lines) prepended;
 *   - EVALSHA of the same header parse with nothing prepended (the floor of a script);
 *   - FCALL_RO of a function in a small library (the test library of harness/functions);
 *   - FCALL_RO of the same function in a library that also holds those ~930 lines as shared code.
 * Each is measured as INFO commandstats usec_per_call after CONFIG RESETSTAT (time inside Redis, no
 * network), BENCH_FN_CALLS calls per round pipelined 500 at a time, median of BENCH_FN_ROUNDS rounds,
 * the variants interleaved; next to it the Redis main thread's CPU time per call (INFO cpu: reading
 * and answering included, but not inflated when other processes take the CPU, as wall time is on a
 * shared machine). Two floors (a script / a function answering 0) and read_header alone (parsed many
 * times inside one call) split a call's cost into the mechanism's and the header's.
 * A script re-runs its whole text on every call, so read_header's window cache (args.lua) only ever
 * hits in a function, whose top level lives from call to call.
 */
import { execFileSync, execSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Redis from 'ioredis';
import { headerArgs } from '../src/redis/function-args';
import { ARGS_MODULE, defineLibrary, FunctionLibrary } from '../src/redis/function-library';
import { RANKING_MODULES } from '../src/ranking/core/script-call';
import { stopChild } from '../harness/processes';
import { testLibrary } from '../harness/functions';
import { loadAverage, mainThreadCpu, measure, median, Pipeline, usecPerCall, variant, Variant } from './call-rounds';
import { benchFunctions } from './functions-client';
import { startRedisServer } from './process-stats';

const CALLS = Number(process.env.BENCH_FN_CALLS ?? 6_000);
const ROUNDS = Number(process.env.BENCH_FN_ROUNDS ?? 5);
const PIPELINE = 500;
const LOOP = 50_000;

/** The test library's modules (harness/functions): its handlers need its shared module. */
const TEST_MODULES = ['shared.lua', 'calls.lua'].map((file) => join(__dirname, '..', 'harness', 'functions', file));

/** The argument reader as commit HEADER_REF had it (BENCH_HEADER_REF, default c382e1a: before a call's header table was shared). */
const HEADER_REF = process.env.BENCH_HEADER_REF ?? 'c382e1a';

/**
 * The small library with read_header as of HEADER_REF (`git show`), under another name: the same
 * header-only function before and now, side by side. Undefined when the file at that commit has no
 * read_header or is the same as now.
 */
async function oldHeaderLibrary(redis: Redis, small: FunctionLibrary): Promise<string | undefined> {
  const now = readFileSync(ARGS_MODULE, 'utf8');
  const old = execFileSync('git', ['show', `${HEADER_REF}:src/redis/functions/args.lua`], {
    encoding: 'utf8',
    cwd: __dirname,
  });
  if (old === now || !old.includes('local function read_header(args)') || !small.source.includes(now)) return undefined;
  const name = `${small.name}_old`;
  // The old file predates modules as tables: it gets the exports of the functions it defines.
  const exports = [...now.matchAll(/^reader\.(\w+) = \1$/gm)].filter(([, fn]) => old.includes(`local function ${fn}(`));
  const oldModule = `${old}\n${exports.map(([line]) => line).join('\n')}\n`;
  await redis.function('LOAD', 'REPLACE', small.source.replace(now, () => oldModule).replaceAll(small.name, name));
  return `${name}_header_only`;
}

const header = {
  version: 'v1',
  nowMs: 1_700_000_000_000,
  budget: 64,
  windows: [
    { periodSec: 3600, intervalSec: 60, createdAtMs: 1, originSec: 0 },
    { periodSec: 86_400, intervalSec: 3600, createdAtMs: 2, originSec: 0 },
    { periodSec: 604_800, intervalSec: 86_400, createdAtMs: 3, originSec: 0 },
  ],
};
const args = headerArgs(header);

const fcall = (fn: { redisName: string }) => (p: Pipeline) => p.fcall_ro(fn.redisName, 0, ...args);

/**
 * SCRIPT LOADs the header parse alone, the same with the ranking libraries' modules prepended (as a write
 * script carried them before #23) and a script answering 0; answers their SHAs and the prepended lines.
 */
async function loadScripts(redis: Redis, small: FunctionLibrary, big: FunctionLibrary) {
  // args.lua binds a window's fields by the names a library emits (RECORD_FIELDS): the script carries them too.
  const recordFields = small.source.split('\n').find((line) => line.startsWith('local RECORD_FIELDS = '));
  // The script's ARGV kept first: call_lib's block (prepended below) declares a per-call ARGV of its own.
  const body = `local reader = {}\n${recordFields}\n${readFileSync(ARGS_MODULE, 'utf8')}\nreader.read_header(SCRIPT_ARGV)\nreturn 0\n`;
  const prependedText = big.source
    .split('\n')
    .slice(1)
    .filter((line) => !line.startsWith('redis.register_function'))
    .join('\n');
  return {
    lines: prependedText.split('\n').length,
    bareSha: (await redis.script('LOAD', `local SCRIPT_ARGV = ARGV\n${body}`)) as string,
    prependedSha: (await redis.script('LOAD', `local SCRIPT_ARGV = ARGV\n${prependedText}\n${body}`)) as string,
    nothingSha: (await redis.script('LOAD', 'return 0')) as string,
  };
}

/** Loads both libraries as the service loads its own (answering how long that took) and the old header's. */
async function loadLibraries(url: string, redis: Redis, small: FunctionLibrary, big: FunctionLibrary) {
  const loadStarted = performance.now();
  await benchFunctions(url, redis, [big, small]);
  const loadMs = performance.now() - loadStarted;
  return { loadMs, oldHeader: await oldHeaderLibrary(redis, small) };
}

/**
 * Loads the scripts (SCRIPT LOAD) and the two libraries (RedisFunctions, as the service loads its own)
 * on `redis` and answers the variants to measure, in table order.
 */
async function prepare(url: string, redis: Redis): Promise<{ variants: Variant[]; lines: number; loadMs: number }> {
  const small = testLibrary();
  const big = defineLibrary({
    name: 'tb_fnbench_big',
    modules: [...RANKING_MODULES, ...TEST_MODULES],
    functions: { headerOnly: small.functions.headerOnly },
  });
  const { lines, bareSha, prependedSha, nothingSha } = await loadScripts(redis, small.library, big.library);
  const { loadMs, oldHeader } = await loadLibraries(url, redis, small.library, big.library);
  const variants = [
    variant(`EVALSHA, ${lines} lines of ranking libraries prepended (before #23)`, 'evalsha', (p) =>
      p.evalsha(prependedSha, 0, ...args),
    ),
    variant('EVALSHA, header parse only (nothing prepended)', 'evalsha', (p) => p.evalsha(bareSha, 0, ...args)),
    variant('FCALL_RO, header parse, small library', 'fcall_ro', fcall(small.functions.headerOnly)),
    ...(oldHeader
      ? [
          variant(`FCALL_RO, header parse as of ${HEADER_REF}, small library`, 'fcall_ro', (p: Pipeline) =>
            p.fcall_ro(oldHeader, 0, ...args),
          ),
        ]
      : []),
    variant(
      `FCALL_RO, header parse, library holding the same ${lines} lines`,
      'fcall_ro',
      fcall(big.functions.headerOnly),
    ),
    variant(`floor: EVALSHA of \`return 0\`, same ${args.length} args`, 'evalsha', (p) =>
      p.evalsha(nothingSha, 0, ...args),
    ),
    variant(
      `floor: FCALL_RO of a function answering 0, same ${args.length} args`,
      'fcall_ro',
      fcall(small.functions.nothing),
    ),
  ];
  return { variants, lines, loadMs };
}

/**
 * read_header alone: LOOP parses inside one call, so the call's own cost is spread over them (µs per
 * parse, wall inside Redis and the main thread's CPU).
 */
async function headerAlone(redis: Redis): Promise<{ loops: number[]; cpu: number[] }> {
  const loops: number[] = [];
  const cpu: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    await redis.config('RESETSTAT');
    const cpuBefore = await mainThreadCpu(redis);
    await redis.fcall_ro(testLibrary().functions.headerLoop.redisName, 0, LOOP, ...args);
    cpu.push((((await mainThreadCpu(redis)) - cpuBefore) * 1e6) / LOOP);
    loops.push((await usecPerCall(redis, 'fcall_ro')) / LOOP);
  }
  return { loops, cpu };
}

async function report(redis: Redis, variants: Variant[], alone: { loops: number[]; cpu: number[] }): Promise<void> {
  const { loops } = alone;
  const cpu = execSync('lscpu | head -20', { encoding: 'utf8' });
  const model = /Model name:\s*(.+)/.exec(cpu)?.[1] ?? 'unknown CPU';
  const cores = /^CPU\(s\):\s*(\d+)/m.exec(cpu)?.[1] ?? '?';
  const redisVersion = /redis_version:(\S+)/.exec(await redis.info('server'))?.[1];
  console.log(`## Redis Functions: fixed cost per call\n`);
  console.log(`${model}, ${cores} CPUs (shared); Node ${process.version}; Redis ${redisVersion}.`);
  console.log(`Header: version, now, budget, 3 windows (16 args). ${CALLS} calls x ${ROUNDS} rounds, pipelined.\n`);
  console.log(
    '| call | µs per call inside Redis (commandstats), median of rounds | lowest round | highest round | Redis main-thread CPU µs per call, median |',
  );
  console.log('| ---- | ---: | ---: | ---: | ---: |');
  for (const { name, rounds, cpu } of variants) {
    const figures = [median(rounds), Math.min(...rounds), Math.max(...rounds), median(cpu)].map((v) => v.toFixed(2));
    console.log(`| ${name} | ${figures.join(' | ')} |`);
  }
  const loop = [median(loops), Math.min(...loops), Math.max(...loops)].map((v) => v.toFixed(2));
  console.log(
    `| read_header alone (${LOOP} parses inside one FCALL_RO, per parse) | ${loop.join(' | ')} | ${median(alone.cpu).toFixed(2)} |`,
  );
  const floor = variants[variants.length - 1];
  const less = (a: number[], b: number[]) => median(a.map((v, r) => v - b[r])).toFixed(2);
  console.log('');
  for (const v of variants.filter(
    ({ name }) => name.startsWith('FCALL_RO, header parse') && name.endsWith('small library'),
  )) {
    console.log(
      `${v.name}, minus the floor per round, median: ${less(v.rounds, floor.rounds)} µs (CPU ${less(v.cpu, floor.cpu)} µs).`,
    );
  }
}

/** A call's fixed cost inside Redis (issue #23's ≤ 1 µs target), on a private redis-server of its own. */
export async function functionsFixedCostBench(): Promise<void> {
  const server = await startRedisServer();
  const redis = new Redis(server.url);
  try {
    const { variants, lines, loadMs } = await prepare(server.url, redis);
    const loadBefore = loadAverage();
    await measure(redis, variants, { rounds: ROUNDS, calls: CALLS, pipelined: PIPELINE });
    await report(redis, variants, await headerAlone(redis));
    console.log(
      `\nFUNCTION LOAD of the ${lines}-line library and the small one: ${loadMs.toFixed(1)} ms (once per node and load).`,
    );
    console.log(`Load average: ${loadBefore} before the rounds, ${loadAverage()} after.`);
  } finally {
    redis.disconnect();
    await stopChild(server.child);
  }
}
