/**
 * A leagues rollover (`npm run bench -- --part leagues`): LEAGUE_BENCH_PLAYERS
 * players (default 1 000 000) each with one event in a day, placed in cohorts of LEAGUE_BENCH_SIZE
 * (default 30) of the lowest of five tiers (promote 3, relegate 3), on a board of LEAGUE_BENCH_SHARDS
 * shards (default 1; each shard rolls its own cohorts, one shard after the other) and ties
 * LEAGUE_BENCH_TIES (default shared; first: cohorts in the strict order), on a private
 * redis-server; the clock moves past midnight and rollover steps (the scheduler's, one at a time) roll
 * every cohort. Each step is timed by Redis itself (SLOWLOG, 0 µs threshold: wall time, which on a
 * shared machine includes the time Redis waited for a core) and by the Redis main thread's CPU time
 * around it: the steps, the longest, the median, those over the 5 ms, the most commands a step's
 * script ran, and the whole rollover (also scaled to 10⁶ players when fewer are asked). Placing the
 * players (their writes, batches of 1 000) is not measured.
 */
import Redis from 'ioredis';
import { validateConfig } from '../src/common/config';
import { composeRanking } from '../harness/compose-ranking';
import { RedisService } from '../src/redis/redis.service';
import { RedisSettings } from '../src/redis/redis.settings';
import { RedisFunctions } from '../src/redis/redis-functions';
import { LeaguesStore } from '../src/ranking/leagues/leagues.store';
import { FakeClock } from '../harness/clock';
import { stopChild } from '../harness/processes';
import { loadAverage, mainThreadCpu, median } from './call-rounds';
import { startRedisServer } from './process-stats';

const PLAYERS = Number(process.env.LEAGUE_BENCH_PLAYERS ?? 1_000_000);
const SIZE = Number(process.env.LEAGUE_BENCH_SIZE ?? 30);
const SHARDS = Number(process.env.LEAGUE_BENCH_SHARDS ?? 1);
const TIES = process.env.LEAGUE_BENCH_TIES === 'first' ? 'first' : 'shared';
const NOON_MS = Date.parse('2026-11-21T12:00:00Z');
const NEXT_DAY_MS = Date.parse('2026-11-22T00:00:01Z');
const BATCH = 1000;
/** The bound for one Redis call (µs): the steps past it are counted. */
const SLOW_STEP_USEC = 5000;
/** The day the rollover happens in (UTC): the day before it closed. */
const DAY_START_SEC = Date.parse('2026-11-22T00:00:00Z') / 1000;

/** The commands each step's script ran (SLOWLOG newest first: a script's commands logged before its call). */
function stepCommands(entries: Array<[number, number, number, string[], string?]>): number[] {
  const counts: number[] = [];
  let inCall = 0;
  for (const [, , , args, client] of [...entries].reverse()) {
    if (client === '?:0') inCall += 1;
    else {
      if (String(args[1] ?? '').includes('league_roll')) counts.push(inCall);
      inCall = 0;
    }
  }
  return counts;
}

type Ranking = Awaited<ReturnType<typeof composeRanking>>['ranking'];

/** The league board (five tiers, a calendar day) with PLAYERS players placed, BATCH at a time. */
async function placePlayers(ranking: Ranking): Promise<void> {
  const tiers = ['t1', 't2', 't3', 't4', 't5'];
  const leagues = { window: 'day', size: SIZE, tiers, promote: 3, relegate: 3 };
  const windows = [{ name: 'day', calendar: 'day' } as const];
  await ranking.putBoard({ name: 'league', windows, shards: SHARDS, ties: TIES, leagues });
  for (let i = 0; i < PLAYERS; i += BATCH) {
    const entries = Array.from({ length: Math.min(BATCH, PLAYERS - i) }, (_, k) => ({
      item: `p${i + k}`,
      amount: (((i + k) * 7919) % 1000) + 1,
    }));
    await ranking.incrementBatch('league', entries);
  }
}

/** Every shard rolled step by step: each step's Redis main-thread CPU (less an idle call's), and the wall time. */
async function rollAll(roll: { redis: Redis; store: LeaguesStore; at: Parameters<LeaguesStore['rollShard']>[0] }) {
  const { redis, store, at } = roll;
  const idleCpu = -((await mainThreadCpu(redis)) - (await mainThreadCpu(redis)));
  const cpuUsec: number[] = [];
  const started = process.hrtime.bigint();
  for (let shard = 0; shard < SHARDS; shard++) {
    for (let done = false; !done;) {
      const before = await mainThreadCpu(redis);
      done = await store.rollShard(at, shard);
      cpuUsec.push(((await mainThreadCpu(redis)) - before - idleCpu) * 1e6);
    }
  }
  return { cpuUsec, wallMs: Number(process.hrtime.bigint() - started) / 1e6 };
}

async function rollover(server: { url: string }) {
  const redis = new Redis(server.url);
  const clock = new FakeClock(NOON_MS);
  // Placing is not measured: batches of 1 000 on ties: first weigh past a default write call's bound.
  const config = validateConfig({
    REDIS_URL: server.url,
    REDIS_COMMAND_TIMEOUT_MS: '60000',
    WRITE_COST_PER_CALL: '100000',
  });
  const redisService = new RedisService(RedisSettings.from(config), clock);
  try {
    await redisService.waitUntilReady(10_000);
    const graph = await composeRanking(redisService, new RedisFunctions(redisService), config, clock);
    await placePlayers(graph.ranking);
    clock.setMs(NEXT_DAY_MS);
    const board = await graph.cache.get('league');
    const at = { board, nowMs: clock.nowMs(), currentSec: DAY_START_SEC };
    await redis.call('CONFIG', 'SET', 'slowlog-log-slower-than', '0', 'slowlog-max-len', '2000000');
    await redis.call('SLOWLOG', 'RESET');
    const { cpuUsec, wallMs } = await rollAll({ redis, store: graph.module.get(LeaguesStore), at });
    const entries = (await redis.call('SLOWLOG', 'GET', '-1')) as Array<[number, number, number, string[]]>;
    const steps = entries.filter((entry) => String(entry[3][1] ?? '').includes('league_roll')).map((entry) => entry[2]);
    const commands = stepCommands(entries);
    await redis.call('CONFIG', 'SET', 'slowlog-log-slower-than', '10000');
    return {
      steps: steps.length,
      slowSteps: steps.filter((usec) => usec > SLOW_STEP_USEC).length,
      slowCpuSteps: cpuUsec.filter((usec) => usec > SLOW_STEP_USEC).length,
      longestUsec: Math.max(...steps),
      mostCommands: Math.max(...commands),
      totalUsec: steps.reduce((a, b) => a + b, 0),
      cpuUsec,
      wallMs,
    };
  } finally {
    await redisService.onApplicationShutdown();
    redis.disconnect();
  }
}

export async function leagueRolloverBench(): Promise<void> {
  const server = await startRedisServer();
  try {
    const loadBefore = loadAverage();
    const run = await rollover(server);
    console.log(
      `## A leagues rollover: ${PLAYERS.toLocaleString('en')} players in cohorts of ${SIZE}, ${SHARDS} shard(s), ties ${TIES} (load average ${loadBefore} before, ${loadAverage()} after)\n`,
    );
    console.log(
      '| rollover steps | longest step (SLOWLOG) | longest step (CPU) | median step (CPU) | steps over 5 ms (SLOWLOG / CPU) | most commands a step | all steps (SLOWLOG) | per 10⁶ players | rollover, wall clock |',
    );
    console.log('|---|---|---|---|---|---|---|---|---|');
    const perMillion = (run.totalUsec / 1000) * (1e6 / PLAYERS);
    console.log(
      `| ${run.steps} | ${(run.longestUsec / 1000).toFixed(2)} ms | ${(Math.max(...run.cpuUsec) / 1000).toFixed(2)} ms | ${(median(run.cpuUsec) / 1000).toFixed(2)} ms | ${run.slowSteps} / ${run.slowCpuSteps} | ${run.mostCommands} | ${(run.totalUsec / 1000).toFixed(1)} ms | ${(perMillion / 1000).toFixed(1)} s | ${run.wallMs.toFixed(0)} ms |`,
    );
  } finally {
    await stopChild(server.child);
  }
}
