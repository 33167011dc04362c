/**
 * Ranking calls before and after they moved to Redis Functions (issue #23), in one run on one private
 * redis-server (`npx ts-node --transpile-only bench/functions-ranking.ts`, about a minute):
 *   - before: the scripts as commit BENCH_OLD_REF (default ffb508b, the last before the move) built
 *     them, read with `git show`: each script's text with its shared libraries prepended, by EVALSHA;
 *   - now: the same calls as functions of the tb_ranking library, by FCALL.
 * Both get the same keys and args (the function's own `build`: the move kept them) on the same board
 * (one window of 24 h in 1 h slots, 10 000 items) at one fixed time, so both do the same work: a
 * one-window item increment (`i<n>`, spread over the items) and a top-10 read. Figures as
 * bench/call-rounds.ts measures them (commandstats µs per call, Redis main-thread CPU per call),
 * BENCH_FN_ROUNDS interleaved rounds of BENCH_FN_CALLS calls; the ratio is now / before per round,
 * its median reported (issue #23's target: ≤ 0.75). The two read_top variants must answer the same
 * reply first, or the run stops.
 */
import { execFileSync } from 'node:child_process';
import { isDeepStrictEqual } from 'node:util';
import Redis from 'ioredis';
import { UNLIMITED } from '../src/governance/growth-quota';
import { PreparedBoard } from '../src/ranking/core/board';
import { RankingKeys } from '../src/ranking/core/ranking.keys';
import { RANKING } from '../src/ranking/ranking.functions';
import { fcallArgs } from '../src/redis/functions';
import type { RedisFunctions } from '../src/redis/redis-functions';
import { stopChild } from '../harness/processes';
import { loadAverage, measure, median, Pipeline, variant, Variant } from './call-rounds';
import { benchFunctions } from './functions-client';
import { runWhenMain, startRedisServer } from './process-stats';

const S = RANKING.functions;
const OLD_REF = process.env.BENCH_OLD_REF ?? 'ffb508b';
const CALLS = Number(process.env.BENCH_FN_CALLS ?? 6_000);
const ROUNDS = Number(process.env.BENCH_FN_ROUNDS ?? 5);
const PIPELINE = 100;
const ITEMS = 10_000;
/** EXPIRE_CHUNK as the service reads it (RankingSettings), set once the settings are built. */
let expireChunk = 0;

/** The libraries the old scripts carried (src/ranking/core/script-call.ts at OLD_REF), in that order. */
const KEYS_LIB = 'src/redis/scripts/keys_lib.lua';
const CORE = 'src/ranking/core/lua';
const WINDOW_LIBRARIES = [KEYS_LIB, `${CORE}/views_lib.lua`, `${CORE}/window_lib.lua`, `${CORE}/snapshot_lib.lua`];
const BOARD_WRITE_LIBRARIES = [
  KEYS_LIB,
  'src/redis/scripts/idem_lib.lua',
  ...WINDOW_LIBRARIES.slice(1),
  `${CORE}/board_write_lib.lua`,
];

function oldFile(path: string): string {
  return execFileSync('git', ['show', `${OLD_REF}:${path}`], { encoding: 'utf8', cwd: __dirname });
}

/** A script's text as the old loadScriptSource made it: its libraries, then its own text (neither has a #! line). */
function oldScript(path: string, libraries: string[]): string {
  return [...libraries.map(oldFile), oldFile(path)].join('\n');
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

/**
 * Since OLD_REF a window's arguments gained its slot origin (calendar windows) and an increment the
 * board's segments.max and each request's segments: the old scripts get the same call without them.
 * FCALL args are [numkeys, ...keys, ...args]; this is the one-window layout of the board above.
 */
type FcallArgs = ReturnType<typeof fcallArgs>;

function oldReadTopArgs(fcall: FcallArgs): FcallArgs {
  const [keyCount, ...rest] = fcall;
  const at = keyCount; // rest[at]: version, now, budget, period, interval, origin, offset, limit
  return [keyCount, ...rest.slice(0, at + 5), ...rest.slice(at + 6)];
}

function oldIncrementArgs(fcall: FcallArgs): FcallArgs {
  const [keyCount, ...rest] = fcall;
  const at = keyCount; // rest[at]: version, now, budget, W=1, period, interval, created, origin, context, segments.max, request
  return [keyCount, ...rest.slice(0, at + 7), rest[at + 8], ...rest.slice(at + 10, at + 18)];
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
  const incrementSha = (await redis.script(
    'LOAD',
    oldScript('src/ranking/writes/scripts/increment.lua', BOARD_WRITE_LIBRARIES),
  )) as string;
  const readTopSha = (await redis.script(
    'LOAD',
    oldScript('src/ranking/reads/scripts/read_top.lua', WINDOW_LIBRARIES),
  )) as string;
  const window = board.config.windows[0];
  const increment = (n: number) =>
    fcallArgs(S.increment, S.increment.build({ ...on(board, nowMs), item: `i${(n * 7919) % ITEMS}`, amount: 1 }));
  const top = fcallArgs(S.readTop, S.readTop.build({ ...on(board, nowMs), window, offset: 0, limit: 10 }));
  const oldTop = oldReadTopArgs(top);
  // Compared decoded: the reply may carry a score as a string and an empty previous-rank list now.
  const topCall = { ...on(board, nowMs), window, offset: 0, limit: 10 };
  // The old reply predates the tie marks list (entry 5, empty on this board): added so both decode alike.
  const oldReply = (await redis.evalsha(readTopSha, ...oldTop)) as unknown[];
  const before = S.readTop.decode([...oldReply.slice(0, 4), [], ...oldReply.slice(4)], topCall);
  const now = S.readTop.decode(await redis.fcall(S.readTop.redisName, ...top), topCall);
  if (!isDeepStrictEqual(before, now)) throw new Error(`read_top answers differ: ${JSON.stringify([before, now])}`);
  return [
    variant('one-window increment, before: EVALSHA', 'evalsha', (p: Pipeline, n) =>
      p.evalsha(incrementSha, ...oldIncrementArgs(increment(n))),
    ),
    variant('one-window increment, now: FCALL', 'fcall', (p: Pipeline, n) =>
      p.fcall(S.increment.redisName, ...increment(n)),
    ),
    variant('top-10 read, before: EVALSHA', 'evalsha', (p: Pipeline) => p.evalsha(readTopSha, ...oldTop)),
    variant('top-10 read, now: FCALL', 'fcall', (p: Pipeline) => p.fcall(S.readTop.redisName, ...top)),
    // What answering a read from memory would still ask Redis each time (issue #24): the board's config
    // and change versions, so a write by any instance is seen. Not a before / after pair.
    variant('change-version check alone: HMGET cfg version ver', 'hmget', (p: Pipeline) =>
      p.hmget(board.keys.cfg(), 'version', 'ver'),
    ),
  ];
}

function report(variants: Variant[], loads: string[]): void {
  console.log(`## Ranking calls: scripts (${OLD_REF}) against tb_ranking functions\n`);
  console.log(`${CALLS} calls x ${ROUNDS} rounds, pipelined ${PIPELINE}; load average ${loads.join(' → ')}.\n`);
  console.log(
    '| call | µs per call inside Redis, median (lowest / highest round) | CPU µs per call, median | now / before, median of rounds |',
  );
  console.log('| ---- | ---: | ---: | ---: |');
  variants.forEach((v, i) => {
    const wall = `${median(v.rounds).toFixed(2)} (${Math.min(...v.rounds).toFixed(2)} / ${Math.max(...v.rounds).toFixed(2)})`;
    // The first four are two before / now pairs; the rest stand alone.
    const before = i < 4 && i % 2 === 1 ? variants[i - 1] : undefined;
    const ratio = before ? median(v.rounds.map((micros, r) => micros / before.rounds[r])).toFixed(2) : '';
    console.log(`| ${v.name} | ${wall} | ${median(v.cpu).toFixed(2)} | ${ratio} |`);
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

/** The ranking calls before (the scripts of OLD_REF) and now, inside one private redis-server of its own (issue #23's ≤ 0.75 targets). */
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

// Run alone (npx ts-node --transpile-only bench/functions-ranking.ts) or as a part of npm run bench (bench/run.ts).
runWhenMain(module, functionsRankingBench);
