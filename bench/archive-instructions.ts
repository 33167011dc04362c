/**
 * Archive reads at the worst-case harness's full shapes in Redis instructions (issue #45: the archive rows
 * of harness/worst-case/read-rows.ts and moderation-rows.ts over 5 ms a call at full size):
 * `npm run bench -- --part archive-instructions`. One calendar board, one of 8 metrics and one of 8
 * metrics on 64 shards, each with ARCHIVE_BENCH_PERIODS (3) closed periods of ARCHIVE_TOP_ITEMS.max rows
 * (an archives page answers at most ARCHIVE_ROWS_PER_READ rows: 2 such periods, the shape a page of the
 * harness's 100 periods reads), seeded on a plain redis-server and saved (ARCHIVE_BENCH_SEED: the
 * directory of a file saved before); then a redis-server under callgrind loads that file and each read
 * runs between dumps of the counters: each FCALL's own instructions. The instance runs without
 * auto-pipelining: perFcall sends FCALLs one at a time, which a pipeline would send behind themselves.
 * A tiebreak board of `ties: first` (harness wc-tb-cal) holds ARCHIVE_TOP_ITEMS.max items of one pair in
 * its last period, left closed and not drained: its read drains it (EXPIRE_CHUNK fields a call) and
 * writes its archive with marks and ranks. ARCHIVE_BENCH_BOARDS=tbcal,… seeds those boards alone.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import Redis from 'ioredis';
import { composeRanking, type RankingGraph } from '../harness/compose-ranking';
import { FakeClock } from '../harness/clock';
import { freePort, stopChild, waitForPing } from '../harness/processes';
import { validateConfig } from '../src/common/config';
import { RedisFunctions } from '../src/redis/redis-functions';
import { RedisService } from '../src/redis/redis.service';
import { RedisSettings } from '../src/redis/redis.settings';
import { ModerationService } from '../src/ranking/moderation/moderation.service';
import { MODERATED_ITEMS_PER_SHARD } from '../src/ranking/core/ranking.limits';
import { ARCHIVE_ROWS_PER_READ, ARCHIVE_TOP_ITEMS } from '../src/ranking/options/calendar/calendar.limits';
import { counting, startCallgrindRedis } from './redis-instructions';
import { perFcall } from './callgrind-ranking';

const PERIODS = Number(process.env.ARCHIVE_BENCH_PERIODS ?? 3);
const ROWS = ARCHIVE_TOP_ITEMS.max;
const ATTEMPTS = Number(process.env.ARCHIVE_BENCH_ATTEMPTS ?? 1);
const ROWS_RE = new RegExp(process.env.ARCHIVE_BENCH_ROWS ?? '.');
/** The deepest row a 64-shard archive page may end at (refuseDeepPage). */
const DEEPEST_64 = Math.floor(ARCHIVE_ROWS_PER_READ / 64);
const T0 = Date.UTC(2026, 2, 2, 12);
const DAY_MS = 86_400_000;
const METRICS = ['m1', 'm2', 'm3', 'm4', 'm5', 'm6', 'm7', 'm8'];
const LAST = METRICS[METRICS.length - 1];
const DAY = [{ name: 'day', calendar: 'day', timeZone: 'Europe/Berlin', archive: { keep: 1000, top: ROWS } }];
const ASKED_BOARDS = process.env.ARCHIVE_BENCH_BOARDS?.split(',');
const BOARDS = [
  { name: 'cal', windows: DAY },
  { name: 'modcal', windows: DAY },
  { name: 'metcal', windows: DAY, metrics: METRICS },
  { name: 'metcal64', windows: DAY, metrics: METRICS, shards: 64 },
].filter(({ name }) => !ASKED_BOARDS || ASKED_BOARDS.includes(name));
/** The harness's wc-tb-cal: a competition whose last period holds ROWS items of one pair, closed and not drained. */
const PAIR_BOARD = {
  name: 'tbcal',
  windows: DAY,
  aggregate: 'max',
  tiebreak: { order: 'asc' },
  ties: 'first',
} as const;
const PAIR_SEEDED = !ASKED_BOARDS || ASKED_BOARDS.includes(PAIR_BOARD.name);
/** The harness's spread of hidden items (moderation-rows.ts hideArchiveRows). */
const HIDDEN_STEP = Math.max(2, Math.floor(ROWS / (MODERATED_ITEMS_PER_SHARD - 1)));

type Graph = { graph: RankingGraph; stop: () => Promise<void> };

async function graphOn(url: string, clock: FakeClock, settings: Record<string, string>): Promise<Graph> {
  const config = { ...validateConfig({ ...settings, REDIS_URL: url }), REDIS_COMMAND_TIMEOUT_MS: 600_000 };
  const service = new RedisService(RedisSettings.from(config), clock);
  await service.waitUntilReady(60_000);
  const graph = await composeRanking(service, new RedisFunctions(service), config, clock);
  return { graph, stop: () => service.onApplicationShutdown() };
}

async function drained(read: () => Promise<unknown>): Promise<void> {
  for (let attempt = 0; attempt < 500; attempt++) {
    const done = await read().then(
      () => true,
      (error: { code?: string }) => {
        if (error.code !== 'WINDOW_DRAINING') throw error;
        return false;
      },
    );
    if (done) return;
  }
  throw new Error('never drained');
}

/** The pair board's last period: ROWS items of the score 7 and the tiebreak 0 (seed.ts's wc-tb-cal). */
async function seedPair(graph: RankingGraph): Promise<void> {
  if (!PAIR_SEEDED) return;
  await graph.ranking.putBoard(PAIR_BOARD);
  for (let first = 0; first < ROWS; first += 1000) {
    const entries = Array.from({ length: 1000 }, (_, k) => ({ item: `c${first + k}`, score: 7, tiebreak: 0 }));
    await graph.ranking.incrementBatch(PAIR_BOARD.name, entries);
  }
}

async function seed(graph: RankingGraph, clock: FakeClock): Promise<void> {
  for (const board of BOARDS) await graph.ranking.putBoard(board);
  for (let period = 0; period < PERIODS; period++) {
    if (period === PERIODS - 1) await seedPair(graph);
    for (const board of BOARDS)
      for (const metric of board.metrics ?? [undefined])
        for (let first = 0; first < ROWS; first += 1000) {
          const entries = Array.from({ length: 1000 }, (_, k) => ({
            item: `c${first + k}`,
            amount: ROWS - first - k,
            ...(metric ? { metric } : {}),
          }));
          await graph.ranking.incrementBatch(board.name, entries);
        }
    clock.advanceMs(DAY_MS);
    for (const board of BOARDS)
      for (const metric of board.metrics ?? [undefined])
        await drained(() => graph.ranking.archives(board.name, 'day', 1, undefined, {}, { metric }));
    console.log(`seeded period ${period}`);
  }
  const moderation = graph.module.get(ModerationService);
  const hiding = BOARDS.some(({ name }) => name === 'modcal') ? MODERATED_ITEMS_PER_SHARD - 1 : 0;
  for (let n = 0; n < hiding; n++)
    await moderation.setState({ name: 'modcal', item: `c${n * HIDDEN_STEP + 1}`, state: 'hidden' });
}

function reads(graph: RankingGraph): Array<[string, () => Promise<unknown>]> {
  const r = graph.ranking;
  const moderation = graph.module.get(ModerationService);
  const last = { offset: ROWS - 1000, limit: 1000 };
  return [
    [
      'archives tbcal: its period of one pair drained and written',
      () => drained(() => r.archives('tbcal', 'day', 1, undefined)),
    ],
    ['archives metcal by the last metric', () => r.archives('metcal', 'day', 100, undefined, {}, { metric: LAST })],
    ['archive metcal last page', () => r.archive('metcal', 'day', undefined, last, { metric: LAST })],
    ['archives cal', () => r.archives('cal', 'day', 100, undefined)],
    ['archive cal last page', () => r.archive('cal', 'day', undefined, last)],
    ['archives modcal (kept positions)', () => r.archives('modcal', 'day', 100, undefined)],
    [
      'archive modcal last page after a change',
      async () => {
        await moderation.setState({ name: 'modcal', item: 'c0', state: 'hidden' });
        await moderation.setState({ name: 'modcal', item: 'c0', state: null });
        return r.archive('modcal', 'day', undefined, { offset: ROWS - 1200, limit: 1000 });
      },
    ],
    [
      'archive modcal last page (kept)',
      () => r.archive('modcal', 'day', undefined, { offset: ROWS - 1200, limit: 1000 }),
    ],
    [
      'archive metcal64 rows 213-312',
      () => r.archive('metcal64', 'day', undefined, { offset: 212, limit: 100 }, { metric: LAST }),
    ],
    ['archives metcal64', () => r.archives('metcal64', 'day', 100, undefined, {}, { metric: LAST })],
    [
      'archive metcal64 deepest 2 rows a read admits',
      () => r.archive('metcal64', 'day', undefined, { offset: DEEPEST_64 - 2, limit: 2 }, { metric: LAST }),
    ],
  ];
}

async function seededFile(): Promise<{ dir: string; nowMs: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'tb-archive-seed-'));
  const port = await freePort();
  const child = spawn('redis-server', ['--port', String(port), '--dir', dir, '--save', '', '--appendonly', 'no'], {
    stdio: 'ignore',
  });
  if (!(await waitForPing(port, child))) throw new Error('redis-server did not start');
  const clock = new FakeClock(T0);
  const { graph, stop } = await graphOn(`redis://127.0.0.1:${port}`, clock, {
    EXPIRE_CHUNK: '1000',
    WRITE_COST_PER_CALL: '1000000',
  });
  try {
    await seed(graph, clock);
    const redis = new Redis(port);
    await redis.save();
    redis.disconnect();
  } finally {
    await stop();
    await stopChild(child);
  }
  return { dir, nowMs: clock.nowMs() };
}

const millions = (n: number) => (n / 1e6).toFixed(2);

export async function archiveInstructionsBench(): Promise<void> {
  const { dir, nowMs } = process.env.ARCHIVE_BENCH_SEED
    ? { dir: process.env.ARCHIVE_BENCH_SEED, nowMs: T0 + PERIODS * DAY_MS }
    : await seededFile();
  console.log(`seed: ${dir}`);
  const server = await startCallgrindRedis(['--dir', dir, '--dbfilename', 'dump.rdb'], ['--instr-atstart=no']);
  const clock = new FakeClock(nowMs);
  const { graph, stop } = await graphOn(server.url, clock, {
    WRITE_COST_PER_CALL: '1000000',
    REDIS_AUTO_PIPELINING: 'false',
  });
  try {
    // The connection opened and the library loaded before the counting.
    if (BOARDS.some(({ name }) => name === 'cal'))
      await graph.ranking.archives('cal', 'day', 1, undefined, { perPeriod: 1 });
    if (PAIR_SEEDED) await graph.ranking.changeVersion(PAIR_BOARD.name);
    counting(server, true);
    console.log('| read | calls | M instructions | costliest call (M) | calls (name: M) |');
    console.log('| --- | ---: | ---: | ---: | --- |');
    for (const [label, read] of reads(graph).filter(([name]) => ROWS_RE.test(name)))
      for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
        let status = 'ok';
        const calls = await perFcall(server, () =>
          read().catch((error: { code?: string }) => {
            status = String(error.code ?? error);
          }),
        );
        const total = calls.reduce((sum, call) => sum + call.own, 0);
        const most = Math.max(0, ...calls.map((call) => call.own));
        const named = calls.map((call) => `${call.name.replace(/^tb_[^_]*_/, '')}: ${millions(call.own)}`).join(', ');
        console.log(
          `| ${label} (${attempt}, ${status}) | ${calls.length} | ${millions(total)} | ${millions(most)} | ${named} |`,
        );
      }
  } finally {
    await stop();
    await stopChild(server.child);
  }
}
