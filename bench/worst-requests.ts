/**
 * The Redis cost of the worst request of each route on reference data (BENCH_SKIP=worst leaves it out),
 * for docs/security.md: Redis time per request from INFO commandstats (every command, scripts and
 * plain ones), through the services as the controllers call them. Reference data: one unsharded board
 * of three windows (1 h in minutes, 24 h in hours, 7 d in days) holding WORST_BENCH_ITEMS items, a
 * counter at every default precision with a full retention of samples, and 2 000 stats pairs.
 */
import Redis from 'ioredis';
import { SystemClock } from '../src/common/clock';
import { validateConfig } from '../src/common/config';
import { CountersService } from '../src/counters/counters.service';
import { CounterStore } from '../src/counters/counters.store';
import { composeRanking } from '../harness/compose-ranking';
import { RedisService } from '../src/redis/redis.service';
import { RedisSettings } from '../src/redis/redis.settings';
import { RedisFunctions } from '../src/redis/redis-functions';
import { StatsService } from '../src/stats/stats.service';
import { StatsStore } from '../src/stats/stats.store';
import { SNAPSHOT_KEEP, SNAPSHOT_TOP_ITEMS } from '../src/ranking/options/snapshots/snapshots.limits';
import { seedHistory } from './abuse/history-seed';
import { CountersSettings } from '../src/counters/counters.settings';
import { StatsSettings } from '../src/stats/stats.settings';
import { entriesPerCall } from './write-batches';

const ITEMS = Number(process.env.WORST_BENCH_ITEMS ?? 1_000_000);
const WINDOWS = [
  { period: '1h', interval: '1m' },
  { period: '24h', interval: '1h' },
  { period: '7d', interval: '1d' },
];
/** The largest batch of plain entries one write call on the board admits (the seed's, and the row's). */
const REF_BATCH = entriesPerCall({ windows: WINDOWS });

/** The services as the controllers call them, on a config with no cap on counters or stats pairs. */
async function worstServices(redisUrl: string) {
  const env = {
    REDIS_URL: redisUrl,
    KEY_PREFIX: 'bworst:',
    REDIS_COMMAND_TIMEOUT_MS: '60000',
    MAX_COUNTERS: '0',
    MAX_STATS_PAIRS: '0',
  };
  const config = validateConfig(env);
  const clock = new SystemClock();
  const redisService = new RedisService(RedisSettings.from(config), clock);
  await redisService.waitUntilReady(10_000);
  const functions = new RedisFunctions(redisService);
  const { ranking } = await composeRanking(redisService, functions, config, clock);
  const counters = new CountersService(new CounterStore(redisService, functions, CountersSettings.from(config)), clock);
  const stats = new StatsService(new StatsStore(redisService, functions, StatsSettings.from(config)), clock);
  return { redisService, ranking, counters, stats };
}

type Services = Awaited<ReturnType<typeof worstServices>>;
type Run = (i: number) => Promise<unknown>;
/** Measures `run` `times` times and keeps the route's row. */
type Row = (route: string, worst: string, run: Run, times?: number) => Promise<unknown>;

/** Redis µs per call of `run`, all commands counted. */
function redisMicrosOn(admin: Redis): (run: Run, times: number) => Promise<number> {
  return async (run, times) => {
    await admin.config('RESETSTAT');
    for (let i = 0; i < times; i++) await run(i);
    const info = await admin.info('commandstats');
    const micros = [...info.matchAll(/^cmdstat_(\w+):calls=\d+,usec=(\d+)/gm)]
      .filter((m) => m[1] !== 'config' && m[1] !== 'info')
      .reduce((sum, m) => sum + Number(m[2]), 0);
    return micros / times;
  };
}

/** The board "ref" of ITEMS items, in the largest batches its write call admits, 32 in flight. */
async function seedBoard(ranking: Services['ranking']): Promise<void> {
  await ranking.putBoard({ name: 'ref', windows: WINDOWS });
  const batchFrom = (first: number) =>
    Array.from({ length: Math.min(REF_BATCH, ITEMS - first) }, (_, k) => ({
      item: `i${first + k}`,
      amount: 1 + ((first + k) % 9973),
    }));
  const firsts = Array.from({ length: Math.ceil(ITEMS / REF_BATCH) }, (_, b) => b * REF_BATCH);
  for (let b = 0; b < firsts.length; b += 32)
    await Promise.all(firsts.slice(b, b + 32).map((first) => ranking.incrementBatch('ref', batchFrom(first))));
}

/** The reference data: the board of ITEMS items, an item liked by 1 000 users, 2 000 stats pairs and 2 000 counters. */
async function seedReference({ ranking, counters, stats }: Services): Promise<void> {
  await seedBoard(ranking);
  for (let u = 0; u < 1000; u++) await ranking.like('ref', 'i1', `u${u}`, false);
  for (let p = 0; p < 2000; p++) await stats.record(`GET /page/${p}`, 'Load', 0.1);
  for (let s = 0; s < 120; s++) await counters.increment('hits', 1, Math.floor(Date.now() / 1000) - s);
  for (let c = 0; c < 2000; c++) await counters.increment(`c${c}`, 1);
}

async function boardRows({ ranking }: Services, row: Row): Promise<void> {
  await row('POST /boards/:board/items/:item/increment', 'a new item, 3 windows', (i) =>
    ranking.increment('ref', `new${i}`, 1),
  );
  await row(
    'POST /boards/:board/increments',
    `${REF_BATCH} new items (the most one call admits), 3 windows`,
    (i) =>
      ranking.incrementBatch(
        'ref',
        Array.from({ length: REF_BATCH }, (_, j) => ({ item: `nb${i}-${j}`, amount: 1 })),
      ),
    5,
  );
  await row('POST /boards/:board/items/:item/likes', 'a new user, 3 windows', (i) =>
    ranking.like('ref', 'i2', `nu${i}`, false),
  );
  await row('DELETE /boards/:board/items/:item/likes/:userId', 'a like held in every window', (i) =>
    ranking.like('ref', 'i2', `nu${i}`, true),
  );
  await row(
    'GET /boards/:board/top',
    'limit 1000 at offset 999 000',
    () => ranking.top('ref', '24h', 999_000, 1000),
    10,
  );
  await row('GET /boards/:board/top', 'limit 1000 at offset 0', () => ranking.top('ref', '24h', 0, 1000), 10);
  await row('GET /boards/:board/items/:item', 'rank and percentile', (i) => ranking.item('ref', '24h', `i${i * 7919}`));
  await row(
    'GET /boards/:board/items/:item/around',
    'radius 100',
    (i) => ranking.around('ref', '24h', `i${i * 7919}`, 100),
    10,
  );
}

/** Counters and stats, then the board listing. */
async function otherRows({ ranking, counters, stats }: Services, row: Row): Promise<void> {
  await row('POST /counters/:name/increment', 'a new counter, 7 precisions', (i) => counters.increment(`nc${i}`, 1));
  await row('GET /counters/:name', 'precision 1 s, 120 samples, fill', () =>
    counters.read('hits', '1', { fill: true }),
  );
  await row(
    'GET /counters',
    'the last page of 100 of 2 000 counters (offset 1 900)',
    () => counters.list({ offset: 1900, limit: 100 }),
    5,
  );
  await row('POST /stats/:context/:type', 'a new pair', (i) => stats.record(`GET /new/${i}`, 'Load', 0.2));
  await row('GET /stats/:context/:type', 'an hour with a histogram', () => stats.read('GET /page/1', 'Load'));
  await row('GET /admin/stats', 'a page of 100 of 2 000 pairs', () => stats.list(0, 100), 5);
  await row('GET /boards', 'a page of 100 (1 board here)', () => ranking.listBoards({ limit: 100, offset: 0 }), 5);
}

export async function worstRequestsBench(redisUrl: string): Promise<void> {
  const services = await worstServices(redisUrl);
  const { redisService, ranking } = services;
  const admin = new Redis(redisUrl);
  const redisMicros = redisMicrosOn(admin);
  await seedReference(services);
  const rows: Array<[string, string, number]> = [];
  const row: Row = async (route, worst, run, times = 20) => rows.push([route, worst, await redisMicros(run, times)]);
  await boardRows(services, row);
  await otherRows(services, row);
  // A window keeping the most snapshots of the most rows: its lowest item is scanned to the end of each.
  const { lowestItem } = await seedHistory(admin, 'bworst:', 'hist', SNAPSHOT_KEEP.max, SNAPSHOT_TOP_ITEMS.max);
  await row(
    'GET /boards/:board/items/:item/history',
    'the lowest item of 1 000 snapshots of 1 000 rows (a page)',
    () => ranking.itemHistory('hist', 'w', lowestItem, undefined, undefined),
    10,
  );
  console.log(`## Worst request of each route (one board of ${ITEMS.toLocaleString('en')} items, 3 windows)\n`);
  console.log('| route | worst request | Redis µs |');
  console.log('|---|---|---|');
  for (const [route, worst, micros] of rows) console.log(`| \`${route}\` | ${worst} | ${Math.round(micros)} |`);
  console.log();
  await ranking.deleteBoard('ref');
  await ranking.deleteBoard('hist');
  admin.disconnect();
  await redisService.onApplicationShutdown();
}
