/**
 * Redis time of the fan-out reads of issue 45 (rows 4-6), per FCALL and per request, from SLOWLOG on a
 * private redis-server (every command logged): a lookup of 1 000 ids on a 64-shard board (ties shared and
 * first), `?span=` over 64 shards, and archives of 10 000-row periods. Run: npm run bench --
 * --part fanout-reads (FANOUT_ITEMS_PER_SHARD, default 2 000).
 */
import { execFileSync } from 'node:child_process';
import Redis from 'ioredis';
import { validateConfig } from '../src/common/config';
import { composeRanking } from '../harness/compose-ranking';
import { RedisService } from '../src/redis/redis.service';
import { RedisSettings } from '../src/redis/redis.settings';
import { RedisFunctions } from '../src/redis/redis-functions';
import { FakeClock } from '../harness/clock';
import { startPrivateRedis } from '../harness/private-redis';

const SHARDS = 64;
const PER_SHARD = Number(process.env.FANOUT_ITEMS_PER_SHARD ?? 2_000);
const DAY_MS = 86_400_000;
const T0 = 1_700_006_400_000 - (1_700_006_400_000 % DAY_MS) + 3_600_000;

/** Per-call figures of the commands SLOWLOG holds: most µs of one call, µs in all, calls. */
async function drained(admin: Redis): Promise<{ maxMs: number; totalMs: number; calls: number }> {
  const entries = (await admin.slowlog('GET', -1)) as Array<[number, number, number, string[]]>;
  await admin.slowlog('RESET');
  // Commands a function runs are logged too: only the top-level calls count.
  const own = entries.filter((e) => /^(fcall|fcall_ro|evalsha|eval)$/i.test(e[3][0]));
  const micros = own.map((e) => e[2]);
  return {
    maxMs: Math.max(0, ...micros) / 1000,
    totalMs: micros.reduce((a, b) => a + b, 0) / 1000,
    calls: own.length,
  };
}

type Composed = Awaited<ReturnType<typeof composeRanking>>;

/** What each case uses: the service parts, the fake clock, and its `measure` and `fill`. */
interface Session {
  ranking: Composed['ranking'];
  lookup: Composed['lookup'];
  clock: FakeClock;
  /** Runs the request `times` times and prints its calls' figures (or its refusal) each time. */
  measure: (label: string, run: () => Promise<unknown>, times?: number) => Promise<void>;
  /** `total` items <prefix>0.. (amounts shifted by `offset`), 16 batches of 1 000 in flight. */
  fill: (board: string, total: number, offset?: number, prefix?: string) => Promise<void>;
}

function measurer(admin: Redis): Session['measure'] {
  return async (label, run, times = 3) => {
    await admin.slowlog('RESET');
    for (let i = 0; i < times; i++) {
      try {
        await run();
        const f = await drained(admin);
        console.log(
          `${label}: ${f.calls} calls, max ${f.maxMs.toFixed(2)} ms per call, ${f.totalMs.toFixed(1)} ms per request`,
        );
      } catch (error) {
        await drained(admin);
        console.log(`${label}: refused ${(error as { code?: string }).code ?? (error as Error).message}`);
      }
    }
  };
}

function filler(ranking: Composed['ranking']): Session['fill'] {
  return async (board, total, offset = 0, prefix = 's') => {
    const entries = Array.from({ length: total }, (_, n) => ({
      item: `${prefix}${n}`,
      amount: 1 + ((n + offset) % 50_000),
    }));
    for (let first = 0; first < total; first += 16_000) {
      const batches = Array.from({ length: 16 }, (_, b) => entries.slice(first + b * 1000, first + (b + 1) * 1000));
      await Promise.all(
        batches.filter((batch) => batch.length > 0).map((batch) => ranking.incrementBatch(board, batch)),
      );
    }
  };
}

/** Lookups of 1 000 ids and of the most one call takes, on a sharded board, ties shared and first. */
async function lookupCases({ ranking, lookup, measure, fill }: Session): Promise<void> {
  for (const ties of ['shared', 'first'] as const) {
    await ranking.putBoard({
      name: `l${ties}`,
      windows: [{ name: 'w', period: '7d', interval: '1h' }],
      shards: SHARDS,
      ties,
    });
    await fill(`l${ties}`, SHARDS * PER_SHARD);
    for (const ids of [1000, ties === 'first' ? 31 : 93]) {
      const items = Array.from({ length: ids }, (_, i) => `s${i * 97}`);
      await measure(`lookup ${ids} ids, ${SHARDS} shards, ties ${ties}`, () =>
        lookup.lookup({ name: `l${ties}`, items, relative: false, withData: false }),
      );
    }
  }
}

/** A top over a span of the whole week, new items every hour. */
async function spanCase({ ranking, clock, measure, fill }: Session): Promise<void> {
  await ranking.putBoard({ name: 'sp', windows: [{ name: 'w', period: '7d', interval: '1h' }], shards: SHARDS });
  // FANOUT_SPAN_ITEMS_PER_HOUR items in each hour: 1 480 is ~3 900 slot fields a shard (just under
  // the old per-shard bound of 4 000), 23 ~3 900 over all 64 shards (just under the bound now).
  const perHour = Number(process.env.FANOUT_SPAN_ITEMS_PER_HOUR ?? 23);
  for (let h = 0; h < 168; h++) {
    await fill('sp', perHour, h, `h${h}-`); // new items each hour: spread over the shards
    clock.advanceMs(3_600_000);
  }
  await measure(`top span=168h, ${SHARDS} shards, ${perHour} items an hour`, () =>
    ranking.top('sp', 'w', 0, 100, { span: '168h' }),
  );
}

/** Archive listings and a deep page of one archived period, after 12 archived days of 10 000 rows. */
async function archiveCases({ ranking, clock, measure, fill }: Session): Promise<void> {
  await ranking.putBoard({
    name: 'ar',
    windows: [{ name: 'd', calendar: 'day', archive: { keep: 30, top: 10_000 } }],
  });
  for (let d = 0; d < 12; d++) {
    await fill('ar', 10_000, d);
    clock.advanceMs(DAY_MS);
    for (let i = 0; i < 200; i++) {
      try {
        await ranking.archive('ar', 'd', undefined, { offset: 0, limit: 1 });
        break;
      } catch {
        /* still being taken */
      }
    }
  }
  await measure('archives limit=10 of 10 000-row periods', () => ranking.archives('ar', 'd', 10, undefined));
  await measure('archives limit=30 of 10 000-row periods', () => ranking.archives('ar', 'd', 30, undefined));
  await measure('archive offset=9900 limit=100 of a 10 000-row period', () =>
    ranking.archive('ar', 'd', undefined, { offset: 9900, limit: 100 }),
  );
}

export async function fanoutReadsBench(): Promise<void> {
  const server = await startPrivateRedis(['--slowlog-log-slower-than', '0', '--slowlog-max-len', '100000']);
  // Under SCHED_FIFO (root only) the host's other work cannot stall Redis inside a call: the figures are its own.
  const pid = /process_id:(\d+)/.exec(await server.client.info('server'))?.[1];
  if (process.env.FANOUT_FIFO === '1' && pid) execFileSync('chrt', ['-f', '-p', '50', pid]);
  const clock = new FakeClock(T0);
  const config = validateConfig({ ...server.env, REDIS_COMMAND_TIMEOUT_MS: '60000', ...readEnv() });
  const redisService = new RedisService(RedisSettings.from(config), clock);
  await redisService.waitUntilReady(10_000);
  const functions = new RedisFunctions(redisService);
  const { ranking, lookup } = await composeRanking(redisService, functions, config, clock);
  const session: Session = { ranking, lookup, clock, measure: measurer(server.client), fill: filler(ranking) };
  if (!process.env.FANOUT_SKIP?.includes('lookup')) await lookupCases(session);
  if (!process.env.FANOUT_SKIP?.includes('span')) await spanCase(session);
  if (!process.env.FANOUT_SKIP?.includes('archive')) await archiveCases(session);
  await redisService.onApplicationShutdown();
  await server.stop();
}

function readEnv(): Record<string, string> {
  const keep = Object.entries(process.env).filter(([k]) => k.startsWith('TB_BENCH_'));
  return Object.fromEntries(keep.map(([k, v]) => [k.slice('TB_BENCH_'.length), v ?? '']));
}
