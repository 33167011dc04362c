/**
 * Max boards against sum boards (issue #25), in one run on one private redis-server
 * (`npm run bench -- --part aggregate`, about a minute):
 *   - writes: an item increment on a sum board and a score on a max board, each board one window of
 *     24 h in 1 h slots holding ITEMS items, measured in interleaved rounds as bench/call-rounds.ts
 *     does (commandstats µs per call, Redis main-thread CPU per call);
 *   - expiry: a max board of EXPIRY_ITEMS items that scored in each of 24 slots, best in the oldest,
 *     so when that slot expires every item is recomputed from the 23 live ones (the worst case); then
 *     the same over MAX_AGGREGATE_SLOTS slots (EXPIRY_WIDE_ITEMS items); the expire calls run at the
 *     default EXPIRE_CHUNK until nothing is left, each timed by SLOWLOG and by Redis CPU.
 */
import Redis from 'ioredis';
import { AppConfig } from '../src/common/config';
import { adminStepUnits } from '../src/ranking/core/write-cost';
import { UNLIMITED } from '../src/governance/growth-quota';
import type { Aggregate } from '../src/ranking/options/aggregate/aggregate';
import { PreparedBoard } from '../src/ranking/core/board';
import { MAX_AGGREGATE_SLOTS } from '../src/ranking/options/aggregate/aggregate.limits';
import { RankingKeys } from '../src/ranking/core/ranking.keys';
import { RANKING } from '../src/ranking/ranking.functions';
import { loadLibraries } from '../src/redis/functions';
import { callFunction, fcallArgs } from '../src/redis/redis-functions';
import { stopChild } from '../harness/processes';
import { loadAverage, mainThreadCpu, measure, median, Pipeline, variant, Variant } from './call-rounds';
import { startRedisServer } from './process-stats';

/** An expire call's units, as the app's ExpiryStore gives them at the default WRITE_COST_PER_CALL. */
const EXPIRE_UNITS = adminStepUnits(new AppConfig().WRITE_COST_PER_CALL);

const S = RANKING.functions;
const CALLS = Number(process.env.BENCH_AGG_CALLS ?? 6_000);
const ROUNDS = Number(process.env.BENCH_AGG_ROUNDS ?? 5);
const ITEMS = 10_000;
const EXPIRY_ITEMS = Number(process.env.BENCH_AGG_EXPIRY_ITEMS ?? 5_000);
/** Items of the widest window's expiry (each scored in all its MAX_AGGREGATE_SLOTS slots). */
const EXPIRY_WIDE_ITEMS = Number(process.env.BENCH_AGG_EXPIRY_WIDE_ITEMS ?? 200);
const HOUR_MS = 3_600_000;
const EXPIRE_CHUNK = new AppConfig().EXPIRE_CHUNK;
const keys = new RankingKeys('tb:');

async function makeBoard(
  redis: Redis,
  name: string,
  aggregate: Aggregate,
  nowMs: number,
  slots = 24,
): Promise<PreparedBoard> {
  const windows = [{ name: 'day', periodSec: slots * 3600, intervalSec: 3600 }];
  const reply = await callFunction(redis, S.boardPut, {
    ...{ keys: keys.board(name), windows, shards: 1, maxItems: undefined, views: [], aggregate },
    ...{ version: `v-${name}`, reset: false, nowMs },
  });
  if (reply.status === 'conflict') throw new Error(reply.message);
  const config = { name, version: reply.version, shards: 1, maxItems: null, views: [], aggregate };
  return new PreparedBoard({ ...config, windows: JSON.parse(reply.windowsJson) }, () => keys.board(name));
}

function on(board: PreparedBoard, nowMs: number) {
  return { board, shard: board.shards[0], nowMs, budgetFields: EXPIRE_CHUNK, newItems: UNLIMITED };
}

/** Sends `count` calls built by `args`, pipelined 1 000 at a time. */
async function pipelined(redis: Redis, count: number, send: (p: Pipeline, n: number) => void): Promise<void> {
  for (let first = 0; first < count; first += 1000) {
    const pipeline = redis.pipeline();
    for (let n = first; n < Math.min(count, first + 1000); n++) send(pipeline, n);
    const failed = ((await pipeline.exec()) ?? []).find(([error]) => error);
    if (failed) throw failed[0];
  }
}

async function writeVariants(redis: Redis, nowMs: number): Promise<Variant[]> {
  const sum = await makeBoard(redis, 'sum', 'sum', nowMs);
  const max = await makeBoard(redis, 'max', 'max', nowMs);
  const increment = (n: number) =>
    fcallArgs(S.increment, S.increment.build({ ...on(sum, nowMs), item: `i${(n * 7919) % ITEMS}`, amount: 1 }));
  const score = (n: number) =>
    fcallArgs(
      S.recordScore,
      S.recordScore.build({
        ...on(max, nowMs),
        item: `i${(n * 7919) % ITEMS}`,
        score: (n * 104_729) % 1_000_000,
        atMs: nowMs,
      }),
    );
  // Both boards hold every item before the rounds: the rounds measure writes to existing items.
  await pipelined(redis, ITEMS, (p, n) => p.fcall(S.increment.redisName, ...increment(n)));
  await pipelined(redis, ITEMS, (p, n) => p.fcall(S.recordScore.redisName, ...score(n)));
  return [
    variant('increment, sum board', 'fcall', (p: Pipeline, n) => p.fcall(S.increment.redisName, ...increment(n))),
    variant('score, max board', 'fcall', (p: Pipeline, n) => p.fcall(S.recordScore.redisName, ...score(n))),
  ];
}

/**
 * The worst expiry of a max board of `slots` hourly slots, draining its oldest: each expire call's
 * wall µs (SLOWLOG) and Redis main-thread CPU µs (INFO cpu around it, less the same for no call).
 */
async function worstExpiry(redis: Redis, startMs: number, slots: number, items: number): Promise<Expiry> {
  const board = await makeBoard(redis, `expiry${slots}`, 'max', startMs, slots);
  for (let slot = 0; slot < slots; slot++) {
    const nowMs = startMs + slot * HOUR_MS;
    await pipelined(redis, items, (p, n) =>
      p.fcall(
        S.recordScore.redisName,
        ...fcallArgs(
          S.recordScore,
          S.recordScore.build({ ...on(board, nowMs), item: `e${n}`, score: 100_000 - slot, atMs: nowMs }),
        ),
      ),
    );
  }
  await redis.config('SET', 'slowlog-log-slower-than', '0');
  await redis.config('SET', 'slowlog-max-len', '100000');
  await redis.slowlog('RESET');
  const expireMs = startMs + slots * HOUR_MS;
  const idleCpu = -((await mainThreadCpu(redis)) - (await mainThreadCpu(redis)));
  const cpu: number[] = [];
  for (let draining = true; draining;) {
    const before = await mainThreadCpu(redis);
    draining = (await callFunction(redis, S.expire, { ...on(board, expireMs), units: EXPIRE_UNITS })).draining;
    cpu.push(((await mainThreadCpu(redis)) - before - idleCpu) * 1e6);
  }
  const entries = (await redis.slowlog('GET', 100_000)) as Array<[number, number, number, string[]]>;
  const wall = entries.filter((entry) => entry[3][0].toLowerCase() === 'fcall').map((entry) => entry[2]);
  await redis.config('SET', 'slowlog-log-slower-than', '10000');
  return { slots, items, wall, cpu };
}

interface Expiry {
  slots: number;
  items: number;
  wall: number[];
  cpu: number[];
}

function report(variants: Variant[], loads: string[], expiries: Expiry[]): void {
  console.log(`## Max boards: score writes against increments, and the worst expiry\n`);
  console.log(`${CALLS} calls x ${ROUNDS} rounds, pipelined 100; load average ${loads.join(' → ')}.\n`);
  console.log('| call | µs per call inside Redis, median (lowest / highest round) | CPU µs per call, median |');
  console.log('| ---- | ---: | ---: |');
  for (const v of variants) {
    const wall = `${median(v.rounds).toFixed(2)} (${Math.min(...v.rounds).toFixed(2)} / ${Math.max(...v.rounds).toFixed(2)})`;
    console.log(`| ${v.name} | ${wall} | ${median(v.cpu).toFixed(2)} |`);
  }
  for (const { slots, items, wall, cpu } of expiries) {
    const sorted = [...wall].sort((a, b) => a - b);
    const p99 = sorted[Math.floor(sorted.length * 0.99)];
    const total = (wall.reduce((a, b) => a + b, 0) / 1000).toFixed(1);
    console.log(
      `\nExpiry of a max board's oldest slot, ${items} items each recomputed from ${slots - 1} live slots, EXPIRE_CHUNK ${EXPIRE_CHUNK}: ${wall.length} calls of median ${median(wall)} µs, p99 ${p99} µs, longest ${sorted[sorted.length - 1]} µs (SLOWLOG); CPU median ${median(cpu).toFixed(0)} µs, longest ${Math.max(...cpu).toFixed(0)} µs; ${total} ms in all (load average ${loadAverage()}).`,
    );
  }
}

export async function aggregateBench(): Promise<void> {
  const server = await startRedisServer();
  const redis = new Redis(server.url);
  try {
    await loadLibraries(redis, [RANKING.library]);
    const nowMs = Date.now();
    const variants = await writeVariants(redis, nowMs);
    const loadBefore = loadAverage();
    await measure(redis, variants, { rounds: ROUNDS, calls: CALLS, pipelined: 100 });
    const loadAfter = loadAverage();
    const hourMs = nowMs - (nowMs % HOUR_MS);
    // 24 slots (a day in hours) and MAX_AGGREGATE_SLOTS: each drained item is recomputed from every live slot.
    const expiries = [
      await worstExpiry(redis, hourMs, 24, EXPIRY_ITEMS),
      await worstExpiry(redis, hourMs, MAX_AGGREGATE_SLOTS, EXPIRY_WIDE_ITEMS),
    ];
    report(variants, [loadBefore, loadAfter], expiries);
  } finally {
    redis.disconnect();
    await stopChild(server.child);
  }
}
