/**
 * What actor caps and weights cost (issue #50; `npm run bench -- --part actor-caps`, under a
 * minute): on a private redis-server running this tree's tb_ranking, the increment's Redis time per call
 * for an event with an actor on a board with actors (two windows, 5 000 items, 2 000 actors), the same
 * on a board with `actors: { capPerItem }`, and with a weighed actor; rounds of 4 000 pipelined calls,
 * interleaved. Then one actor's re-weighting over 10 000 live events (one per item, both windows):
 * its steps' count, their median and slowest Redis time, the whole run's wall time and its CPU time
 * (redis-server's and this process's, which the re-weighting must keep within 1 s).
 */
import Redis from 'ioredis';
import { performance } from 'node:perf_hooks';
import { AppConfig } from '../src/common/config';
import { UNLIMITED } from '../src/governance/growth-quota';
import { PreparedBoard } from '../src/ranking/core/board';
import { RankingKeys } from '../src/ranking/core/ranking.keys';
import { RANKING } from '../src/ranking/ranking.functions';
import { adminStepUnits } from '../src/ranking/core/write-cost';
import { actorDigest } from '../src/ranking/actor-weights/actor-weights.store';
import { loadLibraries } from '../src/redis/functions';
import { callFunction, fcallArgs } from '../src/redis/redis-functions';
import { stopChild } from '../harness/processes';
import { loadAverage, measure, median, Pipeline, printVariants, usecPerCall, variant } from './call-rounds';
import { cpuSeconds, startRedisServer } from './process-stats';

const EXPIRE_CHUNK = new AppConfig().EXPIRE_CHUNK;
const STEP_UNITS = adminStepUnits(new AppConfig().WRITE_COST_PER_CALL);
const WINDOWS = [
  { name: 'hour', periodSec: 3600, intervalSec: 300 },
  { name: 'day', periodSec: 86_400, intervalSec: 3600 },
];
const REWEIGHED_EVENTS = 10_000;
const keys = new RankingKeys('tb:');

async function board(redis: Redis, name: string, nowMs: number, capPerItem: number): Promise<PreparedBoard> {
  const reply = await callFunction(redis, RANKING.functions.boardPut, {
    ...{ keys: keys.board(name), windows: WINDOWS, shards: 1, maxItems: undefined, views: [] },
    ...{ version: `v-${name}`, reset: false, nowMs, actors: true, capPerItem },
  });
  if (reply.status === 'conflict') throw new Error(reply.message);
  const config = { name, version: reply.version, shards: 1, maxItems: null, views: [], actors: true, capPerItem };
  return new PreparedBoard({ ...config, windows: JSON.parse(reply.windowsJson) }, () => keys.board(name));
}

function incrementArgs(b: PreparedBoard, nowMs: number, item: string, actor: string) {
  const call = { board: b, shard: b.shards[0], nowMs, budgetFields: EXPIRE_CHUNK, newItems: UNLIMITED };
  return fcallArgs(RANKING.functions.increment, RANKING.functions.increment.build({ ...call, item, amount: 1, actor }));
}

/** One actor's re-weighting to its end: steps, the median and slowest step's Redis µs, the run's wall and CPU ms. */
async function reweigh(redis: Redis, b: PreparedBoard, nowMs: number, redisPid: number | undefined) {
  const p = redis.pipeline();
  for (let n = 0; n < REWEIGHED_EVENTS; n++)
    p.fcall(RANKING.functions.increment.redisName, ...incrementArgs(b, nowMs, `i${n}`, 'heavy'));
  await p.exec();
  const record = b.shards[0].keys.reweight(actorDigest('heavy'));
  const step = { board: b, shard: b.shards[0], nowMs, budgetFields: EXPIRE_CHUNK, record, actor: 'heavy' };
  const stepUsec: number[] = [];
  let [steps, done] = [0, false];
  const started = performance.now();
  const [redisCpuBefore, cpuBefore] = [cpuSeconds(redisPid), process.cpuUsage()];
  while (!done) {
    await redis.config('RESETSTAT');
    const fresh = steps === 0;
    const reply = await callFunction(redis, RANKING.functions.reweightStep, {
      ...step,
      ...{ weight: 3, most: STEP_UNITS, ledgerWindow: 1, fresh, places: 0 },
    });
    stepUsec.push(await usecPerCall(redis, 'fcall'));
    [steps, done] = [steps + 1, reply.done];
  }
  const processCpu = process.cpuUsage(cpuBefore);
  return {
    steps,
    cpuMs: (cpuSeconds(redisPid) - redisCpuBefore) * 1000 + (processCpu.user + processCpu.system) / 1000,
    medianUsec: median(stepUsec),
    slowestUsec: Math.max(...stepUsec),
    wallMs: performance.now() - started,
  };
}

/** A capped board whose actor a0 weighs 2 (one re-weighting step, on a board with no events yet). */
async function weighedBoard(redis: Redis, nowMs: number): Promise<PreparedBoard> {
  const weighed = await board(redis, 'weighed', nowMs, 1_000_000);
  await callFunction(redis, RANKING.functions.reweightStep, {
    ...{ board: weighed, shard: weighed.shards[0], nowMs, budgetFields: EXPIRE_CHUNK, actor: 'a0', weight: 2 },
    ...{ record: weighed.shards[0].keys.reweight(actorDigest('a0')), most: 1, ledgerWindow: 1, fresh: true, places: 0 },
  });
  return weighed;
}

export async function actorCapsBench(): Promise<void> {
  const server = await startRedisServer();
  const redis = new Redis(server.url);
  await loadLibraries(redis, [RANKING.library]);
  const nowMs = Date.now();
  const plain = await board(redis, 'plain', nowMs, 0);
  const capped = await board(redis, 'capped', nowMs, 1_000_000);
  const weighed = await weighedBoard(redis, nowMs);
  const send = (b: PreparedBoard, actorOf: (n: number) => string) => (p: Pipeline, n: number) =>
    p.fcall(RANKING.functions.increment.redisName, ...incrementArgs(b, nowMs, `i${n % 5000}`, actorOf(n)));
  const variants = [
    variant(
      'actors: true, an actor',
      'fcall',
      send(plain, (n) => `a${n % 2000}`),
    ),
    variant(
      'capPerItem, an actor',
      'fcall',
      send(capped, (n) => `a${n % 2000}`),
    ),
    variant(
      'capPerItem, a weighed actor',
      'fcall',
      send(weighed, () => 'a0'),
    ),
  ];
  const before = loadAverage();
  for (let turn = 0; turn < 3; turn++) await measure(redis, variants, { rounds: 3, calls: 4000, pipelined: 100 });
  const run = await reweigh(redis, capped, nowMs, server.child.pid);
  console.log(`load ${before} / ${loadAverage()}`);
  printVariants(variants);
  console.log(
    `re-weighting ${REWEIGHED_EVENTS} events: ${run.steps} steps of ${(run.medianUsec / 1000).toFixed(2)} ms of Redis (median; slowest ${(run.slowestUsec / 1000).toFixed(2)} ms), ${run.wallMs.toFixed(0)} ms in all, ${run.cpuMs.toFixed(0)} ms of CPU (Redis and this process)`,
  );
  redis.disconnect();
  await stopChild(server.child);
}
