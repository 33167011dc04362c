/**
 * Issue #22's exactness items, measured inside Redis (SLOWLOG with its threshold at 0 µs, every call):
 * a decay view of 10 000 items crossing its rebase epoch (one call rewrote every member before: 67 ms),
 * and reads of a window whose expired slot of 10 000 items drains (each read call drains one chunk; none
 * lists expired data). In process, on a private redis-server, with a clock moved by hand. Verdicts read
 * counts the machine's load does not move (members each read moved or drained against its script calls'
 * chunks, commands one call ran); a call's wall time is printed beside them only (issue #45: at load ~23
 * it read 20-34 ms where a quiet machine reads ~3 ms).
 */
import { loadavg } from 'node:os';
import { FakeClock } from '../../harness/clock';
import { startRankingService } from '../../harness/ranking';
import { startTestRedis, TestRedis } from '../../harness/redis';
import { WRITE_CALL_COMMANDS } from '../../harness/worst-case/harness';
import { AppConfig } from '../../src/common/config';
import { WindowDrainingError } from '../../src/common/errors';
import { MAX_READ_DRAIN_CALLS } from '../../src/ranking/core/ranking.limits';
import { DECAY_REBASE_CHUNK, DECAY_REBASE_HALF_LIVES } from '../../src/ranking/options/views/views.limits';
import type { RankingService } from '../../src/ranking/ranking.service';
import type { AbusePart, AbuseRow } from './abuse-part';
import { isScriptCall } from '../script-calls';
import { batchesOf, type DeclaredBoard, entriesPerCall } from '../write-batches';

const ITEMS = 10_000;
const HALF_LIFE_SEC = 60;
const EPOCH_SEC = HALF_LIFE_SEC * DECAY_REBASE_HALF_LIVES;
const T0_SEC = Math.ceil(1_700_000_000 / EPOCH_SEC) * EPOCH_SEC + EPOCH_SEC - 600;
/** What the issue measured on main: one call rewriting the whole view. */
const BEFORE_MS = 67;
/** Expired-slot fields one call drains: the default, passed to the service so a stray env does not move it. */
const EXPIRE_CHUNK = new AppConfig().EXPIRE_CHUNK;
/** A script's own commands log with this client address (slowlog-reader.ts). */
const SCRIPT_CLIENT = '?:0';

type SlowlogEntry = [id: number, atSec: number, micros: number, args: string[], client: string];

/** What one read cost Redis: counts the load does not move, and the longest call's wall time. */
interface ReadCost {
  /** Script calls (FCALL, FCALL_RO) the read made. */
  calls: number;
  /** Members the read took off what was left (moved to the new scale, or drained). */
  rows: number;
  /** The most commands one of its calls ran inside Redis. */
  mostCommands: number;
  longestMs: number;
}

/** The read's cost from the SLOWLOG (oldest first: a script's commands log before the call that ran them). */
async function readCost(redis: TestRedis, left: () => Promise<number>, read: () => Promise<void>): Promise<ReadCost> {
  const before = await left();
  await redis.client.slowlog('RESET');
  await read();
  const entries = (await redis.client.slowlog('GET', 100_000)) as SlowlogEntry[];
  const cost: ReadCost = { calls: 0, rows: before - (await left()), mostCommands: 0, longestMs: 0 };
  let inCall = 0;
  for (const [, , micros, args, client] of entries.reverse()) {
    if (client === SCRIPT_CLIENT) {
      inCall++;
      continue;
    }
    if (isScriptCall(args[0])) {
      cost.calls++;
      cost.mostCommands = Math.max(cost.mostCommands, inCall);
      cost.longestMs = Math.max(cost.longestMs, micros / 1000);
    }
    inCall = 0;
  }
  return cost;
}

/** Reads' costs added up; `withinChunks`: no read took more members than `chunk` for each of its calls. */
function summed(costs: ReadCost[], chunk: number) {
  return {
    calls: costs.reduce((sum, cost) => sum + cost.calls, 0),
    mostRowsPerCall: Math.max(0, ...costs.map((cost) => Math.ceil(cost.rows / Math.max(1, cost.calls)))),
    mostCallsPerRead: Math.max(0, ...costs.map((cost) => cost.calls)),
    mostCommands: Math.max(0, ...costs.map((cost) => cost.mostCommands)),
    longestMs: Math.max(0, ...costs.map((cost) => cost.longestMs)),
    withinChunks: costs.every((cost) => cost.rows <= chunk * cost.calls),
  };
}

/** Every command logged (threshold 0 µs) while `run` runs. */
async function loggingAll<T>(redis: TestRedis, run: () => Promise<T>): Promise<T> {
  await redis.client.config('SET', 'slowlog-log-slower-than', '0');
  await redis.client.config('SET', 'slowlog-max-len', '100000');
  try {
    return await run();
  } finally {
    await redis.client.config('SET', 'slowlog-log-slower-than', '10000');
  }
}

const load = () => `load ${loadavg()[0].toFixed(1)}`;

/** ITEMS items on `board`, in the largest batches one of its write calls admits. */
async function fill(ranking: RankingService, board: DeclaredBoard & { name: string }): Promise<void> {
  const entries = Array.from({ length: ITEMS }, (_, i) => ({ item: `i${i}`, amount: (i % 97) + 1 }));
  for (const batch of batchesOf(entries, entriesPerCall(board))) await ranking.incrementBatch(board.name, batch);
}

/** What a row uses: the private Redis, the fake clock and the service. */
interface Exactness {
  redis: TestRedis;
  clock: FakeClock;
  ranking: RankingService;
}

/** Reads the decay view until its rebase is done: each read's cost, and each answer (the clock stands still). */
async function readsWhileRebasing(redis: TestRedis, ranking: RankingService, left: () => Promise<number>) {
  const answers: string[] = [];
  const read = async () => void answers.push(JSON.stringify(await ranking.top('decay', 'fading', 0, 10)));
  const costs = await loggingAll(redis, async () => {
    const costs: ReadCost[] = [];
    do costs.push(await readCost(redis, left, read));
    while (costs.length < 100 && (await left()) > 0);
    return costs;
  });
  return { costs, answers };
}

/** A decay view crossing its rebase epoch: reads until the rebase is done, each call one chunk at most. */
async function rebaseRow({ redis, clock, ranking }: Exactness): Promise<AbuseRow> {
  const board = {
    name: 'decay',
    windows: [{ name: 'hour', period: '1h', interval: '1m' }],
    shards: 1,
    views: [{ name: 'fading', mode: 'decay', window: 'hour', halfLife: HALF_LIFE_SEC }] as never,
  };
  await ranking.putBoard(board);
  await fill(ranking, board);
  await ranking.top('decay', 'fading', 0, 10); // the scripts are loaded (compiled) before measuring
  const [meta, oldScale] = ['meta', 'top'].map((key) => `{${redis.prefix}board:decay}:fading:${key}`);
  const landmark = await redis.client.hget(meta, 'landmark');
  // Members still at the old scale: the whole view until the landmark moves, none once it has.
  const left = async () =>
    (await redis.client.hget(meta, 'landmark')) === landmark ? redis.client.zcard(oldScale) : 0;
  clock.setMs((T0_SEC + 600) * 1000); // the next epoch: the landmark moves
  const { costs, answers } = await readsWhileRebasing(redis, ranking, left);
  const rebased = JSON.stringify(await ranking.top('decay', 'fading', 0, 10));
  const differing = answers.filter((answer) => answer !== rebased).length;
  const cost = summed(costs, DECAY_REBASE_CHUNK);
  return {
    attack: `decay view of ${ITEMS} items crossing its rebase epoch`,
    measured:
      `${costs.length} reads, ${cost.calls} script calls, at most ${cost.mostRowsPerCall} members moved a call (DECAY_REBASE_CHUNK ${DECAY_REBASE_CHUNK}) ` +
      `and ${cost.mostCommands} commands in one (WRITE_CALL_COMMANDS ${WRITE_CALL_COMMANDS}); answers unlike the rebased view's: ${differing}; ` +
      `longest call ${cost.longestMs.toFixed(2)} ms wall at ${load()} (one call of ${BEFORE_MS} ms before)`,
    held: (await left()) === 0 && cost.withinChunks && cost.mostCommands <= WRITE_CALL_COMMANDS && differing === 0,
  };
}

/** Reads of the drained window until one answers: each read's cost, the 503s, the rows listed. */
async function readsWhileDraining(redis: TestRedis, ranking: RankingService, left: () => Promise<number>) {
  const reads = { costs: [] as ReadCost[], refused: 0, listedExpired: 0, answered: false };
  const read = async () => {
    try {
      reads.listedExpired += (await ranking.top('drain', 'm', 0, 10)).items.length;
      reads.answered = true;
    } catch (error) {
      if (!(error instanceof WindowDrainingError)) throw error;
      reads.refused++;
    }
  };
  await loggingAll(redis, async () => {
    while (!reads.answered && reads.costs.length < 200) reads.costs.push(await readCost(redis, left, read));
  });
  return reads;
}

/** Reads of a window whose expired slot drains with no scheduler: refused until drained, never listing it. */
async function drainRow({ redis, clock, ranking }: Exactness): Promise<AbuseRow> {
  const board = { name: 'drain', windows: [{ name: 'm', period: '3m', interval: '1m' }] };
  await ranking.putBoard(board);
  await fill(ranking, board);
  await ranking.top('drain', 'm', 0, 10);
  // Every item sits in the one slot that expires: the window's zset empties as the slot drains.
  const left = () => redis.client.zcard(`{${redis.prefix}board:drain}:m:top`);
  clock.advanceSec(180);
  const { costs, refused, listedExpired, answered } = await readsWhileDraining(redis, ranking, left);
  const cost = summed(costs, EXPIRE_CHUNK);
  return {
    attack: `reads of a window whose expired slot of ${ITEMS} items drains (no scheduler)`,
    measured:
      `${refused} reads answered 503 WINDOW_DRAINING, then exact; rows listed from the expired slot: ${listedExpired}; ` +
      `${cost.calls} script calls, at most ${cost.mostCallsPerRead} a read (MAX_READ_DRAIN_CALLS ${MAX_READ_DRAIN_CALLS}), ` +
      `${cost.mostRowsPerCall} items drained a call (EXPIRE_CHUNK ${EXPIRE_CHUNK}), ${cost.mostCommands} commands in one (WRITE_CALL_COMMANDS ${WRITE_CALL_COMMANDS}); ` +
      `longest call ${cost.longestMs.toFixed(2)} ms wall at ${load()}`,
    held:
      answered &&
      listedExpired === 0 &&
      (await left()) === 0 &&
      cost.withinChunks &&
      cost.mostCallsPerRead <= MAX_READ_DRAIN_CALLS &&
      cost.mostCommands <= WRITE_CALL_COMMANDS,
  };
}

export const exactnessAbuse: AbusePart = async () => {
  const redis = await startTestRedis('single');
  const clock = new FakeClock(T0_SEC * 1000);
  const { ranking, redisService } = await startRankingService(redis, clock, {
    REDIS_COMMAND_TIMEOUT_MS: '5000',
    EXPIRE_CHUNK: String(EXPIRE_CHUNK),
  });
  const rows: AbuseRow[] = [];
  try {
    rows.push(await rebaseRow({ redis, clock, ranking }));
    rows.push(await drainRow({ redis, clock, ranking }));
  } finally {
    await redisService.onApplicationShutdown();
    await redis.stop();
  }
  return rows;
};
