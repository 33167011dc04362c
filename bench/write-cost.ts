/**
 * Redis time of one write call at several sizes (issue #45 rows 1 and 3), on one private redis-server
 * (`npm run bench -- --part write-cost`, a few minutes; BENCH_REDIS_REALTIME=1 runs the
 * server under SCHED_FIFO). Each case runs a few times through the service (RankingService, a fake
 * clock) and prints the Redis µs of its costliest FCALL (SLOWLOG, every call logged) and its write cost
 * (write-cost.ts callCost, the units WRITE_COST_PER_CALL bounds), so the µs per unit can be read off:
 *   - a `last` board of 8 windows × 1 000 slots, every slot holding an event: one late score, and a
 *     batch of 1 000 late scores (the oldest slots: every newer slot is live);
 *   - sum boards of 3 and 8 windows: batches of 1 000 plain pairs, of 1 000 entries with `at`, of 900
 *     items × 8 segments, of 1 000 entries with actors; and 1 000 pairs with 6 views, or ties first.
 * The service runs with WRITE_COST_PER_CALL at its maximum, so calls over the default bound are measured too.
 */
import Redis from 'ioredis';
import { validateConfig } from '../src/common/config';
import { composeRanking } from '../harness/compose-ranking';
import { RedisService } from '../src/redis/redis.service';
import { RedisSettings } from '../src/redis/redis.settings';
import { RedisFunctions } from '../src/redis/redis-functions';
import type { BatchInput } from '../src/ranking/writes/write-commands';
import { callCost, CostedBoard } from '../src/ranking/core/write-cost';
import { FakeClock } from '../harness/clock';
import { stopChild } from '../harness/processes';
import { startRedisServer } from './process-stats';

const ROUNDS = Number(process.env.BENCH_WRITE_COST_ROUNDS ?? 3);
const START_MS = 1_800_000_000_000;

type Ranking = Awaited<ReturnType<typeof composeRanking>>['ranking'];
type Run = (round: number) => Promise<unknown>;
/** Prints the call's longest FCALL and its cost (the entries of its first round on `board`). */
type Row = (label: string, cost: number, run: Run) => Promise<void>;
type Entry = (i: number) => Partial<BatchInput>;

const costOf = (board: CostedBoard, entries: BatchInput[]) => callCost(entries, board);

function rowOn(admin: Redis): Row {
  /** The longest FCALL (µs, SLOWLOG) of `run`, the best of ROUNDS runs. */
  const longestCall = async (run: Run): Promise<number> => {
    let best = Infinity;
    for (let round = 0; round < ROUNDS; round++) {
      await admin.slowlog('RESET');
      await run(round);
      const log = (await admin.slowlog('GET', 100_000)) as Array<[number, number, number, string[]]>;
      const calls = log.filter((entry) => /^fcall/i.test(String(entry[3][0])));
      best = Math.min(best, Math.max(...calls.map((entry) => entry[2])));
    }
    return best;
  };
  return async (label, cost, run) => {
    const micros = await longestCall(run);
    const perUnit = (micros / cost).toFixed(2);
    console.log(
      `${label.padEnd(64)} ${(micros / 1000).toFixed(2).padStart(9)} ${String(cost).padStart(8)} ${perUnit.padStart(8)}`,
    );
  };
}

/** Row 1: a `last` (or `max`) board of 8 windows × 1 000 one-second slots, every slot of every window holding an event. */
async function lateRows(bench: { ranking: Ranking; clock: FakeClock; row: Row; aggregate: 'last' | 'max' }) {
  const { ranking, clock, row, aggregate } = bench;
  const lastWindows = Array.from({ length: 8 }, (_, w) => ({ period: 1000 - w, interval: 1 }));
  const name = `late-${aggregate}`;
  await ranking.putBoard({ name, windows: lastWindows, aggregate });
  const nowSec = clock.nowMs() / 1000;
  for (let first = 0; first < 1000; first += 250) {
    const entries = Array.from({ length: 250 }, (_, i) => ({ item: 'seed', score: i, at: nowSec - 999 + first + i }));
    await ranking.incrementBatch(name, entries);
  }
  const lateAt = nowSec - 990;
  const shape: CostedBoard = { windows: lastWindows, views: [], aggregate };
  const lateBatch = (round: number) =>
    Array.from({ length: 1000 }, (_, i) => ({ item: `late${round}-${i}`, score: i, at: lateAt }));
  await row(`${aggregate}, 8 windows × 1 000 slots: one late score`, costOf(shape, [{ item: '' }]), (round) =>
    ranking.score(name, `one${round}`, 5, undefined, undefined, lateAt),
  );
  await row(`${aggregate}, 8 windows × 1 000 slots: 1 000 late scores`, costOf(shape, lateBatch(0)), (round) =>
    ranking.incrementBatch(name, lateBatch(round)),
  );
  // The most such scores one call may carry at the default WRITE_COST_PER_CALL (8 000 / 8 windows / 3.5).
  await row(
    `${aggregate}, 8 windows × 1 000 slots: 285 late scores`,
    costOf(shape, lateBatch(0).slice(0, 285)),
    (round) => ranking.incrementBatch(name, lateBatch(round + 10).slice(0, 285)),
  );
}

interface SumBoard {
  name: string;
  windowCount: number;
  views: number;
  ties: 'first' | undefined;
}

/** A sum board of `windowCount` windows (each longer than the one before) and `views` views of the three modes. */
async function putSumBoard(
  ranking: Ranking,
  { name, windowCount, views: viewCount, ties }: SumBoard,
): Promise<CostedBoard> {
  const windows = Array.from({ length: windowCount }, (_, w) => ({
    name: `w${w}`,
    period: 3600 * (w + 1),
    interval: 60 * (w + 1),
  }));
  const modes = [
    { mode: 'decay', window: 'w0', halfLife: '10m' },
    { mode: 'hot', window: 'w1' },
    { mode: 'rising', window: 'w0', baseline: 'w2' },
  ];
  const views = Array.from({ length: viewCount }, (_, v) => ({ name: `v${v}`, ...modes[v % modes.length] }));
  await ranking.putBoard({ name, windows, views, ties, segmentsMax: 10_000, actors: viewCount === 0 });
  return { windows, views, ties };
}

/** A sum board's rows: 1 000 pairs; without views or ties also `at`, segments and new actors. */
async function sumRows(bench: { ranking: Ranking; clock: FakeClock; row: Row; board: SumBoard }): Promise<void> {
  const { ranking, clock, row, board } = bench;
  const { name, windowCount, views: viewCount, ties } = board;
  const shape = await putSumBoard(ranking, board);
  const entriesOf = (size: number, entry: Entry) =>
    Array.from({ length: size }, (_, i) => ({ item: `i${i}`, amount: 1, ...entry(i) }));
  const batch = (size: number, entry: Entry) => ranking.incrementBatch(name, entriesOf(size, entry));
  const sized = (size: number, entry: Entry) => costOf(shape, entriesOf(size, entry));
  await batch(1000, () => ({}));
  const nowSec = clock.nowMs() / 1000;
  const label = `sum, ${windowCount} windows${viewCount ? `, ${viewCount} views` : ''}${ties ? ', ties first' : ''}`;
  await row(
    `${label}: 1 000 pairs`,
    sized(1000, () => ({})),
    () => batch(1000, () => ({})),
  );
  if (viewCount > 0 || ties) return;
  const at = () => ({ at: nowSec - 30 });
  await row(`${label}: 1 000 entries with at`, sized(1000, at), () => batch(1000, at));
  const segments = () => ({ segments: Array.from({ length: 8 }, (_, s) => `s${s}`) });
  await row(`${label}: 900 entries × 8 segments`, sized(900, segments), () => batch(900, segments));
  await row(`${label}: 100 entries × 8 segments`, sized(100, segments), () => batch(100, segments));
  await row(`${label}: 106 entries × 8 segments`, sized(106, segments), () => batch(106, segments));
  const one = () => ({ segments: ['s0'] });
  await row(`${label}: 1 000 entries × 1 segment`, sized(1000, one), () => batch(1000, one));
  await row(
    `${label}: 1 000 entries with a new actor`,
    sized(1000, () => ({ actor: 'a' })),
    (round) => batch(1000, (i) => ({ actor: `a${round}-${i}` })),
  );
}

export async function writeCostBench(): Promise<void> {
  const server = await startRedisServer();
  const admin = new Redis(server.url);
  const clock = new FakeClock(START_MS);
  // The cost bound is lifted here: the bench measures what a call over it would cost.
  const config = validateConfig({
    ...{ REDIS_URL: server.url, KEY_PREFIX: 'bcost:', REDIS_COMMAND_TIMEOUT_MS: '60000', EXPIRE_CHUNK: '100' },
    ...{ WRITE_COST_PER_CALL: process.env.WRITE_COST_PER_CALL ?? '1000000' },
  });
  const redisService = new RedisService(RedisSettings.from(config), clock);
  await redisService.waitUntilReady(10_000);
  const { ranking } = await composeRanking(redisService, new RedisFunctions(redisService), config, clock);
  await admin.config('SET', 'slowlog-log-slower-than', '0');
  await admin.config('SET', 'slowlog-max-len', '100000');
  const row = rowOn(admin);
  console.log(`${'call'.padEnd(64)} ${'Redis ms'.padStart(9)} ${'cost'.padStart(8)} ${'µs/unit'.padStart(8)}`);
  for (const aggregate of ['last', 'max'] as const) await lateRows({ ranking, clock, row, aggregate });
  // Sum boards (1 000 items written once before, so every batch writes existing items).
  const sumBoards: SumBoard[] = [
    { name: 'sum3', windowCount: 3, views: 0, ties: undefined },
    { name: 'sum8', windowCount: 8, views: 0, ties: undefined },
    { name: 'views3', windowCount: 3, views: 6, ties: undefined },
    { name: 'ties3', windowCount: 3, views: 0, ties: 'first' },
  ];
  for (const board of sumBoards) await sumRows({ ranking, clock, row, board });
  await redisService.onApplicationShutdown();
  await admin.quit();
  await stopChild(server.child);
}
