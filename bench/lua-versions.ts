/**
 * This checkout's tb_ranking against another checkout's (an older version of the library), in one
 * private redis-server, interleaved round by round: `BENCH_BASE_DIR=<checkout> npm run bench --
 * --part lua-versions` (the other checkout needs its node_modules; `git archive
 * <commit> | tar -x -C <dir>` and a node_modules symlink do). Both libraries load side by side (their
 * function names carry the version), run the same FCALLs on the same boards (boards and data made by
 * this checkout's; each library's arguments built by its own checkout's definitions, so a change of
 * the argument layout is measured too), so a Lua change is measured against its parent in the same
 * run: a one-window increment (as bench/functions-ranking.ts calls it), a coalesced call of 16 increments,
 * and batches of BENCH_BATCH_ENTRIES entries into a plain sum board of one and two windows (as
 * bench/batch-entries.ts sends them). Figures:
 * commandstats µs per call and main-thread CPU per call, medians of BENCH_LUA_ROUNDS rounds; the
 * ratio is this / base per round, its median. The increment runs twice: as the bench's other calls
 * send it (no quota on new items) and as the service does with quotas on (an allowance of one new
 * item), the batch of one window also with the client's allowance. BENCH_LUA_INCREMENTS_ONLY=1 leaves
 * the batches out.
 */
import { join } from 'node:path';
import Redis from 'ioredis';
import { PreparedBoard } from '../src/ranking/core/board';
import { RANKING } from '../src/ranking/ranking.functions';
import { fcallArgs } from '../src/redis/redis-functions';
import { stopChild } from '../harness/processes';
import { loadAverage, measure, median, Pipeline, variant, Variant } from './call-rounds';
import { benchFunctions } from './functions-client';
import { PLAIN_BOARD_ITEMS, makePlainBoard, onPlainShard } from './plain-boards';
import { startRedisServer } from './process-stats';

const S = RANKING.functions;
const ENTRIES = Number(process.env.BENCH_BATCH_ENTRIES ?? 1_000);
const ROUNDS = Number(process.env.BENCH_LUA_ROUNDS ?? 9);
const ITEMS = PLAIN_BOARD_ITEMS;
const INCREMENTS_ONLY = Boolean(process.env.BENCH_LUA_INCREMENTS_ONLY);
let expireChunk = 0;

/** The other checkout's library and function definitions (its own argument layout), as its own code assembles them. */
function baseRanking(): typeof RANKING {
  const dir = process.env.BENCH_BASE_DIR;
  if (!dir) throw new Error('BENCH_BASE_DIR names the checkout to compare with');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const base = require(join(dir, 'src/ranking/ranking.functions')) as { RANKING: typeof RANKING };
  if (base.RANKING.library.name === RANKING.library.name)
    throw new Error('both checkouts hold the same library version');
  return base.RANKING;
}

const on = (board: PreparedBoard, nowMs: number) => onPlainShard(board, nowMs, expireChunk);

/** Requests of one coalesced increment call: as WRITE_COALESCE_MS gathers them under load. */
const COALESCED = 16;

type PairArgs = (fns: typeof S, n: number) => ReturnType<typeof fcallArgs>;

/** One call kind as two variants: the base library's, then this tree's, each built by its own definitions. */
function bothLibraries(pair: { label: string; name: keyof typeof S; args: PairArgs; base: typeof RANKING }): Variant[] {
  const { label, name, args, base } = pair;
  return [
    variant(`${label}, ${base.library.name}`, 'fcall', (p: Pipeline, n) =>
      p.fcall(base.functions[name].redisName, ...args(base.functions, n)),
    ),
    variant(`${label}, ${RANKING.library.name}`, 'fcall', (p: Pipeline, n) =>
      p.fcall(S[name].redisName, ...args(S, n)),
    ),
  ];
}

/**
 * The same calls under each library's function names, each built by its own checkout's definitions
 * (an argument layout may differ between versions): [base, this] per call kind, increments first.
 */
function pairs(
  boards: PreparedBoard[],
  nowMs: number,
  base: typeof RANKING,
): { increments: Variant[]; batches: Variant[] } {
  const item = (n: number) => `i${(n * 7919) % ITEMS}`;
  const increment = (fns: typeof S, n: number, newItems = on(boards[0], nowMs).newItems) =>
    fcallArgs(fns.increment, fns.increment.build({ ...on(boards[0], nowMs), newItems, item: item(n), amount: 1 }));
  const coalesced = (fns: typeof S, n: number) => {
    const requests = Array.from({ length: COALESCED }, (_, k) => ({
      item: item(n * COALESCED + k),
      amount: 1,
      newItems: 1,
    }));
    return fcallArgs(fns.increments, fns.increments.build({ ...on(boards[0], nowMs), requests }));
  };
  const batch = (fns: typeof S, board: PreparedBoard, n: number, newItems = on(board, nowMs).newItems) => {
    const entries = Array.from({ length: ENTRIES }, (_, i) => ({ item: item(n * ENTRIES + i), amount: 1 }));
    return fcallArgs(fns.incrementBatch, fns.incrementBatch.build({ ...on(board, nowMs), newItems, entries }));
  };
  const both = (label: string, name: keyof typeof S, args: PairArgs) => bothLibraries({ label, name, args, base });
  return {
    increments: [
      ...both('one-window increment', 'increment', (fns, n) => increment(fns, n)),
      // As the service sends it with quotas on (QUOTA_NEW_ITEMS, the default): one new item allowed.
      ...both('one-window increment, quota on', 'increment', (fns, n) => increment(fns, n, 1)),
      ...both(`${COALESCED} coalesced increments, quota on`, 'increments', coalesced),
    ],
    batches: INCREMENTS_ONLY
      ? []
      : [
          ...both(`batch of ${ENTRIES}, 1 window`, 'incrementBatch', (fns, n) => batch(fns, boards[0], n)),
          ...both(`batch of ${ENTRIES}, 1 window, quota on`, 'incrementBatch', (fns, n) =>
            batch(fns, boards[0], n, ENTRIES),
          ),
          ...both(`batch of ${ENTRIES}, 2 windows`, 'incrementBatch', (fns, n) => batch(fns, boards[1], n)),
        ],
  };
}

async function measurePairs(redis: Redis, variants: { increments: Variant[]; batches: Variant[] }): Promise<void> {
  // Increments: 2 000 calls a round, pipelined 100; batches: 40 a round, pipelined 10.
  await measure(redis, variants.increments, { rounds: ROUNDS, calls: 2_000, pipelined: 100 });
  if (variants.batches.length > 0) await measure(redis, variants.batches, { rounds: ROUNDS, calls: 40, pipelined: 10 });
}

function report(variants: Variant[], loads: string[]): void {
  console.log(`${ROUNDS} rounds, interleaved; load average ${loads.join(' → ')}.\n`);
  console.log('| call | µs per call, median (lowest / highest) | CPU µs per call, median | this / base, median |');
  console.log('| ---- | ---: | ---: | ---: |');
  variants.forEach((v, i) => {
    const base = i % 2 === 1 ? variants[i - 1] : undefined;
    const ratio = base ? median(v.rounds.map((micros, r) => micros / base.rounds[r])).toFixed(2) : '';
    const wall = `${median(v.rounds).toFixed(2)} (${Math.min(...v.rounds).toFixed(2)} / ${Math.max(...v.rounds).toFixed(2)})`;
    console.log(`| ${v.name} | ${wall} | ${median(v.cpu).toFixed(2)} | ${ratio} |`);
  });
}

export async function luaVersionsBench(): Promise<void> {
  const base = baseRanking();
  const server = await startRedisServer();
  const redis = new Redis(server.url);
  try {
    const { functions, ranking, prefix } = await benchFunctions(server.url, redis, [RANKING.library]);
    await redis.function('LOAD', 'REPLACE', base.library.source);
    expireChunk = ranking.expireChunk;
    const nowMs = Date.now();
    const boards = [
      await makePlainBoard({
        functions,
        prefix,
        name: 'one',
        windowCount: 1,
        nowMs,
        expireChunk,
        amountOf: (i) => 1 + (i % 97),
      }),
      await makePlainBoard({
        functions,
        prefix,
        name: 'two',
        windowCount: 2,
        nowMs,
        expireChunk,
        amountOf: (i) => 1 + (i % 97),
      }),
    ];
    const variants = pairs(boards, nowMs, base);
    const loadBefore = loadAverage();
    await measurePairs(redis, variants);
    report([...variants.increments, ...variants.batches], [loadBefore, loadAverage()]);
  } finally {
    redis.disconnect();
    await stopChild(server.child);
  }
}
