/**
 * What each extra segment an event names costs (issue #26), on one private redis-server
 * (`npm run bench -- --part segments`, about a minute): a board of two windows (1 h in
 * 5 m slots, 24 h in 1 h slots) with segments.max 10 000, fed BENCH_SEG_EVENTS increments of distinct
 * items (the costliest case: every event a new row in each window of each segment it names) naming
 * 0, 1, 2, 4 or 8 segments out of a pool of 50. Reported per count: Redis memory per event (INFO
 * used_memory, after a settle) and the increment's Redis time per call (commandstats µs per FCALL,
 * Redis main-thread CPU per call, median of BENCH_SEG_ROUNDS interleaved rounds of BENCH_SEG_CALLS
 * pipelined calls), and the cost of one extra segment against none. BENCH_SEG_VIEWS=1 gives the board
 * three views (decay and rising over the hour, hot over the day), which each segment keeps as its own,
 * and snapshots on both windows.
 */
import Redis from 'ioredis';
import { AppConfig } from '../src/common/config';
import { UNLIMITED } from '../src/governance/growth-quota';
import { PreparedBoard } from '../src/ranking/core/board';
import { RankingKeys } from '../src/ranking/core/ranking.keys';
import { resolveViews } from '../src/ranking/options/views/trending-math';
import { RANKING } from '../src/ranking/ranking.functions';
import { loadLibraries } from '../src/redis/functions';
import { callFunction, fcallArgs } from '../src/redis/redis-functions';
import { stopChild } from '../harness/processes';
import { loadAverage, measure, median, Pipeline, variant, Variant } from './call-rounds';
import { startRedisServer } from './process-stats';

const S = RANKING.functions;
const EVENTS = Number(process.env.BENCH_SEG_EVENTS ?? 20_000);
const CALLS = Number(process.env.BENCH_SEG_CALLS ?? 4_000);
const ROUNDS = Number(process.env.BENCH_SEG_ROUNDS ?? 5);
const COUNTS = [0, 1, 2, 4, 8];
const POOL = 50;
const PIPELINE = 100;
const EXPIRE_CHUNK = new AppConfig().EXPIRE_CHUNK;
const WITH_VIEWS = process.env.BENCH_SEG_VIEWS === '1';
const HISTORY = WITH_VIEWS ? { snapshots: { keep: 12, top: 100 } } : {};
const WINDOWS = [
  { name: 'hour', periodSec: 3600, intervalSec: 300, ...HISTORY },
  { name: 'day', periodSec: 86_400, intervalSec: 3600, ...HISTORY },
];
const VIEWS = WITH_VIEWS
  ? resolveViews(
      [
        { name: 'fade', mode: 'decay', window: 'hour', halfLife: '20m' },
        { name: 'hot', mode: 'hot', window: 'day', tau: '6h' },
        { name: 'rising', mode: 'rising', window: 'hour', baseline: 'day' },
      ],
      WINDOWS,
    )
  : [];

async function makeBoard(redis: Redis, name: string, nowMs: number): Promise<PreparedBoard> {
  const keys = new RankingKeys('tb:');
  const reply = await callFunction(redis, S.boardPut, {
    ...{ keys: keys.board(name), windows: WINDOWS, shards: 1, maxItems: undefined, views: VIEWS },
    ...{ version: `v-${name}`, reset: false, nowMs, segmentsMax: 10_000 },
  });
  if (reply.status === 'conflict') throw new Error(reply.message);
  const config = { name, version: reply.version, shards: 1, maxItems: null, views: VIEWS, segmentsMax: 10_000 };
  return new PreparedBoard({ ...config, windows: JSON.parse(reply.windowsJson) }, () => keys.board(name));
}

/** The increment of event `n` naming `count` segments of the pool. */
function incrementArgs(board: PreparedBoard, nowMs: number, n: number, count: number) {
  const segments = Array.from({ length: count }, (_, k) => `s${(n + k) % POOL}`);
  const call = { board, shard: board.shards[0], nowMs, budgetFields: EXPIRE_CHUNK, newItems: UNLIMITED };
  return fcallArgs(S.increment, S.increment.build({ ...call, item: `i${n}`, amount: 1, segments }));
}

async function usedMemory(redis: Redis): Promise<number> {
  await new Promise((resolve) => setTimeout(resolve, 200));
  return Number(/used_memory:(\d+)/.exec(await redis.info('memory'))?.[1]);
}

/** Bytes per event of a fresh board fed EVENTS distinct items naming `count` segments each. */
async function memoryPerEvent(redis: Redis, count: number, nowMs: number): Promise<number> {
  const board = await makeBoard(redis, `mem${count}`, nowMs);
  const before = await usedMemory(redis);
  for (let sent = 0; sent < EVENTS; sent += PIPELINE) {
    const pipeline = redis.pipeline();
    for (let n = sent; n < sent + PIPELINE; n++)
      pipeline.fcall(S.increment.redisName, ...incrementArgs(board, nowMs, n, count));
    await pipeline.exec();
  }
  return ((await usedMemory(redis)) - before) / EVENTS;
}

export async function segmentsBench(): Promise<void> {
  const server = await startRedisServer();
  const redis = new Redis(server.url);
  try {
    await loadLibraries(redis, [RANKING.library]);
    const nowMs = Date.now();
    const loadBefore = loadAverage();
    const memory = new Map<number, number>();
    for (const count of COUNTS) memory.set(count, await memoryPerEvent(redis, count, nowMs));
    const variants: Variant[] = [];
    for (const count of COUNTS) {
      const board = await makeBoard(redis, `time${count}`, nowMs);
      variants.push(
        variant(`${count} segments`, 'fcall', (p: Pipeline, n) =>
          p.fcall(S.increment.redisName, ...incrementArgs(board, nowMs, n, count)),
        ),
      );
    }
    await measure(redis, variants, { rounds: ROUNDS, calls: CALLS, pipelined: PIPELINE });
    report(memory, variants, [loadBefore, loadAverage()]);
  } finally {
    redis.disconnect();
    await stopChild(server.child);
  }
}

function report(memory: Map<number, number>, variants: Variant[], load: string[]): void {
  const views = WITH_VIEWS ? ', 3 views and snapshots' : '';
  console.log(`load average ${load[0]} before, ${load[1]} after; ${EVENTS} events per memory figure${views}`);
  console.log('| segments per event | bytes per event | µs per increment (commandstats) | CPU µs per increment |');
  console.log('| ---: | ---: | ---: | ---: |');
  variants.forEach((v, i) => {
    const count = COUNTS[i];
    console.log(
      `| ${count} | ${memory.get(count)!.toFixed(0)} | ${median(v.rounds).toFixed(1)} | ${median(v.cpu).toFixed(1)} |`,
    );
  });
  const base = variants[0];
  const most = variants[variants.length - 1];
  const perSegmentUs = (median(most.rounds) - median(base.rounds)) / COUNTS[COUNTS.length - 1];
  const perSegmentBytes = (memory.get(8)! - memory.get(0)!) / 8;
  console.log(
    `per extra segment: ${perSegmentBytes.toFixed(0)} bytes per event, ${perSegmentUs.toFixed(1)} µs per increment`,
  );
}
