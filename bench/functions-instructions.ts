/**
 * Issue #46 counted instead of timed (`npm run bench -- --part functions-instructions`,
 * a few minutes): the instructions Redis executes per one-window increment and per top-10 read, for
 * tb_ranking as each commit of INSTR_REFS assembled it (default 8b8f6c1 and main) and for today's, all
 * loaded side by side in one redis-server under callgrind (bench/redis-instructions.ts: the same count
 * for the same work whatever else the machine does). Every library gets the same keys and args on the
 * same plain board of 10 000 items at one fixed time (bench/functions-ranking.ts' calls), INSTR_CALLS
 * calls of each, one at a time; the top reads must answer alike first. The counters' and stats' hot
 * calls are counted the same way by bench/library-instructions.ts.
 */
import { isDeepStrictEqual } from 'node:util';
import { rmSync } from 'node:fs';
import Redis from 'ioredis';
import { RANKING } from '../src/ranking/ranking.functions';
import { fcallArgs } from '../src/redis/redis-functions';
import { stopChild } from '../harness/processes';
import { librarySourceAt, namedTopReply, positionalIncrementArgs, positionalTopArgs } from './functions-ranking';
import { benchFunctions } from './functions-client';
import { makePlainBoard, onPlainShard, PLAIN_BOARD_ITEMS } from './plain-boards';
import { median } from './call-rounds';
import { Callgrind, dumpCounts, startCallgrindRedis } from './redis-instructions';

const S = RANKING.functions;
const CALLS = Number(process.env.INSTR_CALLS ?? 500);
const ROUNDS = Number(process.env.INSTR_ROUNDS ?? 3);
/** INSTR_CONTROL=1: the first ref's library twice, so the table shows the run's noise. */
const CONTROL = process.env.INSTR_CONTROL === '1';
const REFS = (process.env.INSTR_REFS ?? '8b8f6c1,main').split(',').filter((ref) => ref !== '');

interface Library {
  label: string;
  fn: (handler: string) => string;
  named: boolean;
  /** Its increment on the named contract (else its args go in their positional layout). */
  namedIncrement: boolean;
}

/** Whether a library's source has its increment on the named contract. */
const namedIncrementIn = (source: string) => source.includes("increment = { name = 'increment'");

/**
 * Loads the library as `ref` assembled it beside today's (a source equal to today's is today's);
 * `copy`: under another name, a second library of the same code (the run's noise between two).
 */
async function loadAt(redis: Redis, ref: string, copy = false): Promise<Library> {
  let source = librarySourceAt(ref);
  let name = /^#!lua name=(\w+)/.exec(source)?.[1];
  if (name === undefined) throw new Error(`${ref}: no library name in its source`);
  if (copy) {
    source = source.split(name).join(`${name}_copy`);
    name = `${name}_copy`;
    await redis.function('LOAD', 'REPLACE', source);
    return {
      label: `${ref} (a copy)`,
      fn: (handler) => `${name}_${handler}`,
      named: source.includes('CALLS.read_top'),
      namedIncrement: namedIncrementIn(source),
    };
  }
  if (source !== RANKING.library.source) await redis.function('LOAD', 'REPLACE', source);
  return {
    label: ref,
    fn: (handler) => `${name}_${handler}`,
    named: source.includes('CALLS.read_top'),
    namedIncrement: namedIncrementIn(source),
  };
}

/**
 * A function running Lua's full collection: the libraries share one Lua state, whose collector steps as
 * calls allocate, so a count would take in a share of garbage the calls before it left (a full cycle
 * over every library loaded, millions of instructions, lands in one count or another). Each count
 * starts from none.
 */
export const COLLECT_LIBRARY =
  "#!lua name=tb_bench_collect\nredis.register_function('tb_bench_collect', function() collectgarbage('collect') return 1 end)";

/** Instructions per call of `send`, `calls` calls one after another, from a collected Lua state. */
export async function perCall(
  redis: Redis,
  server: Callgrind,
  send: (n: number) => Promise<unknown>,
  calls = CALLS,
): Promise<number> {
  await redis.fcall('tb_bench_collect', 0);
  dumpCounts(server);
  for (let n = 0; n < calls; n++) await send(n);
  return dumpCounts(server).counts.Ir / calls;
}

/** The collecting library, each ref's ranking library (and the control's), and this tree's. */
async function librariesToCompare(redis: Redis): Promise<Library[]> {
  const libraries: Library[] = [];
  await redis.function('LOAD', 'REPLACE', COLLECT_LIBRARY);
  for (const ref of REFS) libraries.push(await loadAt(redis, ref));
  if (CONTROL) libraries.push(await loadAt(redis, REFS[0], true));
  libraries.push({
    label: 'this tree',
    fn: (handler) => `${RANKING.library.name}_${handler}`,
    named: true,
    namedIncrement: true,
  });
  return libraries;
}

interface Calls {
  increment: (n: number) => Promise<unknown>;
  readTop: () => Promise<unknown>;
}

/** Each library's increment and top-10 read, in its own argument layout; each read checked against this tree's. */
async function callsOf(bench: {
  redis: Redis;
  libraries: Library[];
  increment: (n: number) => ReturnType<typeof fcallArgs>;
  top: ReturnType<typeof fcallArgs>;
  topCall: Parameters<typeof S.readTop.decode>[1];
}): Promise<Calls[]> {
  const { redis, libraries, increment, top, topCall } = bench;
  const expected = S.readTop.decode(await redis.fcall(S.readTop.redisName, ...top), topCall);
  const calls = libraries.map((lib) => {
    const topArgs = lib.named ? top : positionalTopArgs(top);
    return {
      increment: (n: number) =>
        redis.fcall(
          lib.fn(S.increment.handler),
          ...(lib.namedIncrement ? increment(n) : positionalIncrementArgs(increment(n))),
        ),
      readTop: () => redis.fcall(lib.fn(S.readTop.handler), ...topArgs),
    };
  });
  for (const [i, lib] of libraries.entries()) {
    const answer = S.readTop.decode(namedTopReply(await calls[i].readTop(), lib.named), topCall);
    if (!isDeepStrictEqual(answer, expected)) throw new Error(`${lib.label}: read_top answers otherwise`);
  }
  return calls;
}

/**
 * Interleaved rounds, in turn forwards and backwards, so that every library meets the board and
 * Lua's collector as the others do: each library's instructions per call, round by round.
 */
async function countRounds(redis: Redis, server: Callgrind, calls: Calls[]) {
  const counts = calls.map(() => ({ increment: [] as number[], read: [] as number[] }));
  for (let round = 0; round < ROUNDS; round++) {
    const order = [...calls.keys()];
    if (round % 2 === 1) order.reverse();
    for (const i of order) {
      counts[i].increment.push(await perCall(redis, server, (n) => calls[i].increment(round * CALLS + n)));
      counts[i].read.push(await perCall(redis, server, calls[i].readTop));
    }
  }
  return counts;
}

function printCounts(libraries: Library[], counts: Awaited<ReturnType<typeof countRounds>>): void {
  const first = counts[0];
  const cell = (values: number[], of: number[]) =>
    `${median(values).toFixed(0)} (${median(values.map((v, r) => v / of[r])).toFixed(3)})`;
  const rows = libraries.map(
    (lib, i) =>
      `| ${lib.label} | ${cell(counts[i].increment, first.increment)} | ${cell(counts[i].read, first.read)} |`,
  );
  console.log(
    `callgrind, ${ROUNDS} interleaved rounds of ${CALLS} calls each, one at a time: instructions Redis executed per call.\n`,
  );
  console.log(`Medians over the rounds (per round, to ${libraries[0].label}'s).\n`);
  console.log('| library | one-window increment | top-10 read |\n| ------- | ---: | ---: |');
  for (const row of rows) console.log(row);
}

export async function functionsInstructionsBench(): Promise<void> {
  // hz 1: serverCron's work goes with wall time, which valgrind and a loaded machine stretch.
  const server = await startCallgrindRedis(['--hz', '1']);
  const redis = new Redis(server.url, { enableAutoPipelining: false });
  try {
    const { functions, ranking, prefix } = await benchFunctions(server.url, redis, [RANKING.library], {
      REDIS_COMMAND_TIMEOUT_MS: '60000',
    });
    const nowMs = Date.now();
    const common = { functions, prefix, windowCount: 1, nowMs, expireChunk: ranking.expireChunk };
    const board = await makePlainBoard({ ...common, name: 'instr', amountOf: (i) => 1 + (i % 97) });
    const on = onPlainShard(board, nowMs, ranking.expireChunk);
    const increment = (n: number) =>
      fcallArgs(S.increment, S.increment.build({ ...on, item: `i${(n * 7919) % PLAIN_BOARD_ITEMS}`, amount: 1 }));
    const topCall = { ...on, window: board.config.windows[0], offset: 0, limit: 10 };
    const top = fcallArgs(S.readTop, S.readTop.build(topCall));
    const libraries = await librariesToCompare(redis);
    const calls = await callsOf({ redis, libraries, increment, top, topCall });
    printCounts(libraries, await countRounds(redis, server, calls));
  } finally {
    redis.disconnect();
    await stopChild(server.child);
    rmSync(server.dir, { recursive: true, force: true });
  }
}
