/**
 * The ranking library's per-call cost against its own earlier build, in one run on one private
 * redis-server (`npm run bench -- --part functions-ranking`, about a minute):
 *   - before: tb_ranking as commit BENCH_BEFORE_REF assembled it (default b3607d8, the last before the
 *     Lua modules became tables with declared dependencies), built in a detached git worktree of that
 *     commit and loaded beside today's library;
 *   - now: today's tb_ranking.
 * Both get the same keys and args (today's `build`; a read_top from before its named contract gets
 * them in its positional layout, positionalTopArgs) on the same board (one window of 24 h in 1 h
 * slots, 10 000 items) at one fixed time, so both do the same work: a one-window item increment (`i<n>`, spread over the items) and a top-10 read. Figures as
 * bench/call-rounds.ts measures them (commandstats µs per call, Redis main-thread CPU per call),
 * BENCH_FN_ROUNDS interleaved rounds of BENCH_FN_CALLS calls; the ratio is now / before per round, its
 * median reported (issue #46's bound: ≤ 1.05). The two top reads must answer the same reply first, or
 * the run stops.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import Redis from 'ioredis';
import { UNLIMITED } from '../src/governance/growth-quota';
import { PreparedBoard } from '../src/ranking/core/board';
import { RankingKeys } from '../src/ranking/core/ranking.keys';
import { RANKING } from '../src/ranking/ranking.functions';
import { fcallArgs } from '../src/redis/redis-functions';
import type { ScriptArg } from '../src/redis/scripts';
import type { RedisFunctions } from '../src/redis/redis-functions';
import { stopChild } from '../harness/processes';
import { loadAverage, measure, median, Pipeline, variant, Variant } from './call-rounds';
import { benchFunctions } from './functions-client';
import { startRedisServer } from './process-stats';

const S = RANKING.functions;
const BEFORE_REF = process.env.BENCH_BEFORE_REF ?? 'b3607d8';
const CALLS = Number(process.env.BENCH_FN_CALLS ?? 6_000);
const ROUNDS = Number(process.env.BENCH_FN_ROUNDS ?? 5);
const PIPELINE = 100;
const ITEMS = 10_000;
/** EXPIRE_CHUNK as the service reads it (RankingSettings), set once the settings are built. */
let expireChunk = 0;

/** tb_ranking's source as BEFORE_REF assembles it, from a detached worktree of that commit (removed after). */
export function librarySourceAt(ref: string): string {
  const root = execFileSync('git', ['rev-parse', '--show-toplevel'], { encoding: 'utf8', cwd: __dirname }).trim();
  const dir = mkdtempSync(join(tmpdir(), 'tb-bench-before-'));
  execFileSync('git', ['worktree', 'add', '--detach', '--quiet', dir, ref], { cwd: root });
  try {
    symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));
    const script = "process.stdout.write(require('./src/ranking/ranking.functions').RANKING.library.source)";
    return execFileSync(process.execPath, ['-r', 'ts-node/register/transpile-only', '-e', script], {
      encoding: 'utf8',
      cwd: dir,
      maxBuffer: 64 * 1024 * 1024,
    });
  } finally {
    execFileSync('git', ['worktree', 'remove', '--force', dir], { cwd: root });
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * A top read's args as read_top took them before its named contract (issue #46): the header's window
 * without its count and creation time, [version, now, budget, period, interval, origin, offset, limit].
 */
export function positionalTopArgs([numberOfKeys, ...rest]: [number, ...ScriptArg[]]): [number, ...ScriptArg[]] {
  const keys = rest.slice(0, numberOfKeys);
  const [version, nowMs, budget, , periodSec, intervalSec, , originSec, offset, limit] = rest.slice(numberOfKeys);
  return [numberOfKeys, ...keys, version, nowMs, budget, periodSec, intervalSec, originSec, offset, limit];
}

/**
 * An increment's args as increment.lua took them before its named contract (issue #46), for a call of
 * plain requests sharing their allowance (shape increment_pair): the header, context and segments.max,
 * then the stride 2 in the shape's place, the allowance, and the (item, amount) pairs without their count.
 */
export function positionalIncrementArgs([numberOfKeys, ...rest]: [number, ...ScriptArg[]]): [number, ...ScriptArg[]] {
  const keys = rest.slice(0, numberOfKeys);
  const args = rest.slice(numberOfKeys);
  const header = 4 + 4 * Number(args[3]);
  const [context, segmentsMax, shape, allowance, , ...pairs] = args.slice(header);
  if (shape !== 'increment_pair') throw new Error(`positionalIncrementArgs: a call of shape ${String(shape)}`);
  return [numberOfKeys, ...keys, ...args.slice(0, header), context, segmentsMax, 2, allowance, ...pairs];
}

/** A positional read_top reply ([draining, first, higher, previous, marks, item_1, score_1, ...]) with its rows nested, as the named one. */
export function namedTopReply(reply: unknown, named: boolean): unknown {
  if (named || !Array.isArray(reply)) return reply;
  return [...reply.slice(0, 5), reply.slice(5)];
}

/**
 * Loads the earlier build beside today's; its functions are `<its library name>_<handler>`, `named`
 * when its read_top has today's named contract, `namedIncrement` when its increment has.
 */
async function loadBefore(
  redis: Redis,
): Promise<((handler: string) => string) & { named: boolean; namedIncrement: boolean }> {
  const source = librarySourceAt(BEFORE_REF);
  const name = /^#!lua name=(\w+)/.exec(source)?.[1];
  if (name === undefined) throw new Error(`${BEFORE_REF}: no library name in its source`);
  // Two sources under one name would replace each other (versions set by hand could do that).
  if (name === RANKING.library.name && source !== RANKING.library.source) {
    throw new Error(`${BEFORE_REF} names another source ${name}, as today's library is named`);
  }
  await redis.function('LOAD', 'REPLACE', source);
  return Object.assign((handler: string) => `${name}_${handler}`, {
    named: source.includes('CALLS.read_top'),
    namedIncrement: source.includes("increment = { name = 'increment'"),
  });
}

async function makeBoard(functions: RedisFunctions, prefix: string, nowMs: number): Promise<PreparedBoard> {
  const keys = new RankingKeys(prefix);
  const windows = [{ name: 'day', periodSec: 86_400, intervalSec: 3600 }];
  const reply = await functions.call(S.boardPut, {
    ...{ keys: keys.board('bench'), windows, shards: 1, maxItems: undefined, views: [] },
    ...{ version: 'v-bench', reset: false, nowMs },
  });
  if (reply.status === 'conflict') throw new Error(reply.message);
  const config = { name: 'bench', version: reply.version, shards: 1, maxItems: null, views: [] };
  const board = new PreparedBoard({ ...config, windows: JSON.parse(reply.windowsJson) }, () => keys.board('bench'));
  for (let first = 0; first < ITEMS; first += 1000) {
    const entries = Array.from({ length: 1000 }, (_, i) => ({ item: `i${first + i}`, amount: 1 + ((first + i) % 97) }));
    await functions.call(S.incrementBatch, { ...on(board, nowMs), entries });
  }
  return board;
}

function on(board: PreparedBoard, nowMs: number) {
  return { board, shard: board.shards[0], nowMs, budgetFields: expireChunk, newItems: UNLIMITED };
}

/**
 * The floor under each call: a function running the same Redis commands as the call does now on the
 * same keys (the config HMGET of call_lib's fields, then the call's own commands) and no other Lua.
 */
const FLOOR_LIBRARY = `#!lua name=tb_bench_floor
local FIELDS = { 'version', 'aggregate', 'ties', 'views', 'snapshots', 'maxItems', 'shards', 'actors', 'blockedUntil', 'slotDueSec', 'indexedSec' }
redis.register_function('bare_top', function(keys, args)
  redis.call('HMGET', keys[1], unpack(FIELDS))
  return redis.call('ZREVRANGE', keys[3], 0, 9, 'WITHSCORES')
end)
redis.register_function('bare_inc', function(keys, args)
  redis.call('HMGET', keys[1], unpack(FIELDS))
  redis.call('HINCRBY', keys[4], args[2], 1)
  local score = redis.call('ZINCRBY', keys[3], 1, args[2])
  local above = redis.call('ZCOUNT', keys[3], '(' .. score, '+inf')
  redis.call('HINCRBY', keys[1], 'ver', 1)
  return { score, above + 1 }
end)
`;

/** The floor variants (FLOOR_LIBRARY): the same keys as the increment and the top read of `board` at `nowMs`. */
async function floorVariants(redis: Redis, board: PreparedBoard, nowMs: number): Promise<Variant[]> {
  await redis.function('LOAD', 'REPLACE', FLOOR_LIBRARY);
  const keys = board.shards[0].keys;
  const nowSec = Math.floor(nowMs / 1000);
  const start = nowSec - (nowSec % 3600);
  const windowKeys = [keys.cfg(), keys.slots('day'), keys.top('day')];
  return [
    variant('floor: the increment now, its 5 commands alone', 'fcall', (p: Pipeline, n) =>
      p.fcall('bare_inc', 4, ...windowKeys, keys.slot('day', start), start, `i${(n * 7919) % ITEMS}`),
    ),
    variant('floor: the top read now, its 2 commands alone', 'fcall', (p: Pipeline) =>
      p.fcall('bare_top', 3, ...windowKeys),
    ),
  ];
}

/** The four variants, before and now of each call, after checking the two top reads answer alike. */
async function prepare(redis: Redis, board: PreparedBoard, nowMs: number): Promise<Variant[]> {
  const before = await loadBefore(redis);
  const window = board.config.windows[0];
  const increment = (n: number) =>
    fcallArgs(S.increment, S.increment.build({ ...on(board, nowMs), item: `i${(n * 7919) % ITEMS}`, amount: 1 }));
  const topCall = { ...on(board, nowMs), window, offset: 0, limit: 10 };
  const top = fcallArgs(S.readTop, S.readTop.build(topCall));
  const topBeforeArgs = before.named ? top : positionalTopArgs(top);
  const topBefore = S.readTop.decode(
    namedTopReply(await redis.fcall(before(S.readTop.handler), ...topBeforeArgs), before.named),
    topCall,
  );
  const topNow = S.readTop.decode(await redis.fcall(S.readTop.redisName, ...top), topCall);
  if (!isDeepStrictEqual(topBefore, topNow)) {
    throw new Error(`read_top answers differ: ${JSON.stringify([topBefore, topNow])}`);
  }
  return [
    variant(`one-window increment, before (${BEFORE_REF})`, 'fcall', (p: Pipeline, n) =>
      p.fcall(
        before(S.increment.handler),
        ...(before.namedIncrement ? increment(n) : positionalIncrementArgs(increment(n))),
      ),
    ),
    variant('one-window increment, now', 'fcall', (p: Pipeline, n) => p.fcall(S.increment.redisName, ...increment(n))),
    variant(`top-10 read, before (${BEFORE_REF})`, 'fcall', (p: Pipeline) =>
      p.fcall(before(S.readTop.handler), ...topBeforeArgs),
    ),
    variant('top-10 read, now', 'fcall', (p: Pipeline) => p.fcall(S.readTop.redisName, ...top)),
    // What answering a read from memory would still ask Redis each time (issue #24): the board's config
    // and change versions, so a write by any instance is seen. Not a before / after pair.
    variant('change-version check alone: HMGET cfg version ver', 'hmget', (p: Pipeline) =>
      p.hmget(board.keys.cfg(), 'version', 'ver'),
    ),
  ];
}

function report(variants: Variant[], loads: string[]): void {
  console.log(`## Ranking calls: tb_ranking as ${BEFORE_REF} built it against today's\n`);
  console.log(`${CALLS} calls x ${ROUNDS} rounds, pipelined ${PIPELINE}; load average ${loads.join(' → ')}.\n`);
  console.log(
    '| call | µs per call inside Redis, median (lowest / highest round) | CPU µs per call, median | now / before, µs | now / before, CPU |',
  );
  console.log('| ---- | ---: | ---: | ---: | ---: |');
  variants.forEach((v, i) => {
    const wall = `${median(v.rounds).toFixed(2)} (${Math.min(...v.rounds).toFixed(2)} / ${Math.max(...v.rounds).toFixed(2)})`;
    // The first four are two before / now pairs; the rest stand alone.
    const before = i < 4 && i % 2 === 1 ? variants[i - 1] : undefined;
    const ratio = (of: (x: Variant) => number[]) =>
      before ? median(of(v).map((micros, r) => micros / of(before)[r])).toFixed(2) : '';
    const cells = [wall, median(v.cpu).toFixed(2), ratio((x) => x.rounds), ratio((x) => x.cpu)];
    console.log(`| ${v.name} | ${cells.join(' | ')} |`);
  });
}

/** The commands one call of each variant runs inside Redis (commandstats calls / variant calls): where its µs go. */
async function commandsPerCall(redis: Redis, variants: Variant[]): Promise<void> {
  console.log('\n| call | Redis commands per call |\n| ---- | ---- |');
  for (const v of variants) {
    await redis.config('RESETSTAT');
    const pipeline = redis.pipeline();
    for (let n = 0; n < PIPELINE; n++) v.send(pipeline, n);
    await pipeline.exec();
    const stats = await redis.info('commandstats');
    const counts = [...stats.matchAll(/cmdstat_([\w|]+):calls=(\d+)/g)]
      .filter(([, command]) => command !== v.command)
      .map(([, command, calls]) => `${command} ${(Number(calls) / PIPELINE).toFixed(2)}`);
    console.log(`| ${v.name} | ${counts.join(', ')} |`);
  }
}

/** The ranking calls as BEFORE_REF built them and now, inside one private redis-server of its own (issue #46's ≤ 1.05 bound). */
export async function functionsRankingBench(): Promise<void> {
  const server = await startRedisServer();
  const redis = new Redis(server.url);
  try {
    const { functions, ranking, prefix } = await benchFunctions(server.url, redis, [RANKING.library]);
    expireChunk = ranking.expireChunk;
    const nowMs = Date.now();
    const board = await makeBoard(functions, prefix, nowMs);
    const variants = [...(await prepare(redis, board, nowMs)), ...(await floorVariants(redis, board, nowMs))];
    const loadBefore = loadAverage();
    await measure(redis, variants, { rounds: ROUNDS, calls: CALLS, pipelined: PIPELINE });
    report(variants, [loadBefore, loadAverage()]);
    await commandsPerCall(redis, variants);
  } finally {
    redis.disconnect();
    await stopChild(server.child);
  }
}
