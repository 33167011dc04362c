/**
 * A calendar window's reset (`npm run bench -- --part calendar-reset`, under a minute): a
 * day window in Europe/Berlin holding CALENDAR_BENCH_ITEMS items (default 100 000), archive top 10 000,
 * on a private redis-server; the clock moves past local midnight and expire calls (the scheduler's,
 * one at a time) reset it with nobody reading. Every call is timed twice: by Redis itself (SLOWLOG
 * with a 0 µs threshold: wall time, which on a shared machine includes the time Redis waited for a
 * core) and by the Redis main thread's CPU time around it (INFO cpu before and after, less the same
 * for no call): the longest call, the calls, and the whole reset. The archive (10 000 rows) is taken in
 * chunks as the closed period drains (archive_lib.lua), EXPIRE_CHUNK fields or rows a call. The same
 * reset of a window keeping no archive, in the same run, is the baseline; and the archive's memory
 * per row (MEMORY USAGE of its string).
 */
import Redis from 'ioredis';
import { validateConfig } from '../src/common/config';
import { composeRanking } from '../harness/compose-ranking';
import { RedisService } from '../src/redis/redis.service';
import { RedisSettings } from '../src/redis/redis.settings';
import { RedisFunctions } from '../src/redis/redis-functions';
import { FakeClock } from '../harness/clock';
import { stopChild } from '../harness/processes';
import { loadAverage, mainThreadCpu, median } from './call-rounds';
import { startRedisServer } from './process-stats';

const ITEMS = Number(process.env.CALENDAR_BENCH_ITEMS ?? 100_000);
/** Saturday 12:00 in Berlin; the day ends at 23:00 UTC. */
const NOON_MS = Date.parse('2026-11-21T11:00:00Z');
const MIDNIGHT_MS = Date.parse('2026-11-21T23:00:00Z');

/** Redis's own timing of each command since the last reset: [microseconds, command name]. */
async function slowlog(redis: Redis): Promise<Array<[number, string]>> {
  const entries = (await redis.call('SLOWLOG', 'GET', '-1')) as Array<[number, number, number, string[]]>;
  return entries.map((entry) => [entry[2], String(entry[3][0]).toUpperCase() + ' ' + String(entry[3][1] ?? '')]);
}

interface ResetFigures {
  calls: number;
  longest: [number, string];
  totalUsec: number;
  wallMs: number;
  cpuUsec: number[];
  bytesPerRow: number | null;
}

type Ranking = Awaited<ReturnType<typeof composeRanking>>['ranking'];

/** A board of one calendar day window (archived or not) holding ITEMS items, 1 000 per batch. */
async function fillDay(day: { ranking: Ranking; name: string; archive: boolean }): Promise<void> {
  const { ranking, name, archive } = day;
  await ranking.putBoard({
    name,
    windows: [
      {
        name: 'day',
        calendar: 'day',
        timeZone: 'Europe/Berlin',
        ...(archive ? { archive: { keep: 3, top: 10_000 } } : {}),
      },
    ],
  });
  for (let i = 0; i < ITEMS; i += 1000) {
    const entries = Array.from({ length: Math.min(1000, ITEMS - i) }, (_, k) => ({
      item: `item-${i + k}`,
      amount: i + k + 1,
    }));
    await ranking.incrementBatch(name, entries);
  }
}

/** The bytes per row of the day's archived snapshot (its 10 000 rows), once one was taken. */
async function archiveBytesPerRow(day: { ranking: Ranking; redis: Redis; name: string }): Promise<number> {
  const { ranking, redis, name } = day;
  const page = await ranking.archive(name, 'day', undefined, { offset: 0, limit: 1 });
  const [snap] = await redis.keys(`*${name}}:day:snap:*`);
  const bytesPerRow = Number(await redis.call('MEMORY', 'USAGE', snap)) / 10_000;
  if (page.items.length === 0) throw new Error('no archive was taken');
  return bytesPerRow;
}

/** Fills a day window of ITEMS items, crosses local midnight and lets due passes reset it. */
async function resetOnce(server: { url: string }, archive: boolean): Promise<ResetFigures> {
  const redis = new Redis(server.url);
  const clock = new FakeClock(NOON_MS);
  const config = validateConfig({ REDIS_URL: server.url, REDIS_COMMAND_TIMEOUT_MS: '60000' });
  const redisService = new RedisService(RedisSettings.from(config), clock);
  try {
    await redisService.waitUntilReady(10_000);
    const { ranking, cache, expiryStore } = await composeRanking(
      redisService,
      new RedisFunctions(redisService),
      config,
      clock,
    );
    const name = archive ? 'cal' : 'plain';
    await fillDay({ ranking, name, archive });
    clock.setMs(MIDNIGHT_MS + 1000);
    await redis.call('CONFIG', 'SET', 'slowlog-log-slower-than', '0', 'slowlog-max-len', '2000000');
    await redis.call('SLOWLOG', 'RESET');
    const started = process.hrtime.bigint();
    const board = await cache.get(name);
    const idleCpu = -((await mainThreadCpu(redis)) - (await mainThreadCpu(redis)));
    const cpuUsec: number[] = [];
    for (let draining = true; draining;) {
      const before = await mainThreadCpu(redis);
      draining = (await expiryStore.expire(board, clock.nowMs())).draining;
      cpuUsec.push(((await mainThreadCpu(redis)) - before - idleCpu) * 1e6);
    }
    const wallMs = Number(process.hrtime.bigint() - started) / 1e6;
    const calls = (await slowlog(redis)).filter(([, command]) => command.includes('_expire'));
    await redis.call('CONFIG', 'SET', 'slowlog-log-slower-than', '10000');
    const longest = calls.reduce((most, call) => (call[0] > most[0] ? call : most), [0, ''] as [number, string]);
    const bytesPerRow = archive ? await archiveBytesPerRow({ ranking, redis, name }) : null;
    const totalUsec = calls.reduce((sum, [usec]) => sum + usec, 0);
    return { calls: calls.length, longest, totalUsec, wallMs, cpuUsec, bytesPerRow };
  } finally {
    await redisService.onApplicationShutdown();
    redis.disconnect();
  }
}

export async function calendarResetBench(): Promise<void> {
  const server = await startRedisServer();
  try {
    const loadBefore = loadAverage();
    const plain = await resetOnce(server, false);
    const archived = await resetOnce(server, true);
    console.log(
      `## A calendar reset: ${ITEMS.toLocaleString('en')} items (load average ${loadBefore} before, ${loadAverage()} after)\n`,
    );
    console.log(
      '| window | expire calls | longest call (SLOWLOG) | longest call (CPU) | median call (CPU) | all calls (SLOWLOG) | reset, wall clock | archive bytes per row |',
    );
    console.log('|---|---|---|---|---|---|---|---|');
    for (const [label, run] of [
      ['no archive (baseline)', plain],
      ['archive top 10 000', archived],
    ] as const) {
      console.log(
        `| ${label} | ${run.calls} | ${(run.longest[0] / 1000).toFixed(2)} ms | ${(Math.max(...run.cpuUsec) / 1000).toFixed(2)} ms | ${(median(run.cpuUsec) / 1000).toFixed(2)} ms | ${(run.totalUsec / 1000).toFixed(1)} ms | ${run.wallMs.toFixed(0)} ms | ${run.bytesPerRow === null ? '-' : run.bytesPerRow.toFixed(1)} |`,
      );
    }
  } finally {
    await stopChild(server.child);
  }
}
