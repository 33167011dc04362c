/**
 * A calendar window's reset (`npx ts-node --transpile-only bench/calendar-reset.ts`, under a minute): a
 * day window in Europe/Berlin holding CALENDAR_BENCH_ITEMS items (default 100 000), archive top 10 000,
 * on a private redis-server; the clock moves past local midnight and the scheduler's due pass resets it
 * with nobody reading. Every Redis call of the reset is timed by Redis itself (SLOWLOG with a 0 µs
 * threshold): the longest call, the calls, and the whole reset. The archive (10 000 rows) is taken in
 * the first call (shown apart); the drain follows in EXPIRE_CHUNK fields a call.
 */
import Redis from 'ioredis';
import { validateConfig } from '../src/common/config';
import { createRankingGraph } from '../src/ranking/ranking.factory';
import { RedisService } from '../src/redis/redis.service';
import { RedisSettings } from '../src/redis/redis.settings';
import { RedisFunctions } from '../src/redis/redis-functions';
import { FakeClock } from '../test/support/clock';
import { stopChild } from '../test/support/processes';
import { loadAverage } from './call-rounds';
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

export async function calendarResetBench(): Promise<void> {
  const server = await startRedisServer();
  const redis = new Redis(server.url);
  const clock = new FakeClock(NOON_MS);
  const config = validateConfig({ REDIS_URL: server.url, REDIS_COMMAND_TIMEOUT_MS: '60000' });
  const redisService = new RedisService(RedisSettings.from(config), clock);
  try {
    await redisService.waitUntilReady(10_000);
    const { ranking } = createRankingGraph(redisService, new RedisFunctions(redisService), config, clock);
    await ranking.putBoard('cal', [
      { name: 'day', calendar: 'day', timeZone: 'Europe/Berlin', archive: { keep: 3, top: 10_000 } },
    ]);
    for (let i = 0; i < ITEMS; i += 1000) {
      const entries = Array.from({ length: Math.min(1000, ITEMS - i) }, (_, k) => ({
        item: `item-${i + k}`,
        amount: i + k + 1,
      }));
      await ranking.incrementBatch('cal', entries);
    }
    clock.setMs(MIDNIGHT_MS + 1000);
    await redis.call('CONFIG', 'SET', 'slowlog-log-slower-than', '0', 'slowlog-max-len', '2000000');
    await redis.call('SLOWLOG', 'RESET');
    const started = process.hrtime.bigint();
    let visits = 0;
    // A pass makes at most MAX_EXPIRE_CALLS_PER_PASS calls per board; the scheduler's next pass, a
    // second later, goes on.
    for (let draining = true; draining; clock.advanceMs(1000)) {
      const pass = await ranking.expireDue({ leaseMs: 60_000, claimBatch: 10 });
      visits += pass.visited;
      draining = pass.stillDraining > 0;
    }
    const wallMs = Number(process.hrtime.bigint() - started) / 1e6;
    // SLOWLOG answers newest first: the first expire call of the reset is the one that took the archive.
    const calls = (await slowlog(redis)).filter(([, command]) => command.includes('_expire')).reverse();
    const longest = calls
      .slice(1)
      .reduce((most, call) => (call[0] > most[0] ? call : most), [0, ''] as [number, string]);
    const archive = await ranking.archive('cal', 'day', undefined, { offset: 0, limit: 1 });
    console.log(
      `## A calendar reset: ${ITEMS.toLocaleString('en')} items, archive top 10 000 (load average ${loadAverage()})\n`,
    );
    console.log(
      '| function calls | the archiving call | longest drain call | all calls (Redis time) | reset, wall clock | scheduler visits | archived rows |',
    );
    console.log('|---|---|---|---|---|---|---|');
    const total = calls.reduce((sum, [usec]) => sum + usec, 0);
    console.log(
      `| ${calls.length} | ${(calls[0][0] / 1000).toFixed(2)} ms | ${(longest[0] / 1000).toFixed(2)} ms (${longest[1].trim()}) | ${(total / 1000).toFixed(1)} ms | ${wallMs.toFixed(0)} ms | ${visits} | ${archive.items.length > 0 ? 'yes' : 'none'} |`,
    );
  } finally {
    await redisService.onApplicationShutdown();
    redis.disconnect();
    await stopChild(server.child);
  }
}

if (require.main === module) void calendarResetBench();
