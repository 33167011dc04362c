/**
 * Issue #22's exactness items, measured inside Redis (SLOWLOG, every call): the longest script call
 * while a decay view of 10 000 items rebases (one call rewrote every member before: 67 ms), and reads
 * of a window whose expired slot of 10 000 items drains (each read call drains one chunk; none lists
 * expired data). In process, on a private redis-server, with a clock moved by hand.
 */
import { FakeClock } from '../../harness/clock';
import { startRankingService } from '../../harness/ranking';
import { startTestRedis, TestRedis } from '../../harness/redis';
import { WindowDrainingError } from '../../src/common/errors';
import { DECAY_REBASE_HALF_LIVES } from '../../src/ranking/options/views/views.limits';
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

async function longestCallMs(redis: TestRedis, run: () => Promise<void>): Promise<number> {
  await redis.client.config('SET', 'slowlog-log-slower-than', '0');
  await redis.client.config('SET', 'slowlog-max-len', '100000');
  await redis.client.slowlog('RESET');
  await run();
  const entries = (await redis.client.slowlog('GET', 100_000)) as Array<[number, number, number, string[]]>;
  await redis.client.config('SET', 'slowlog-log-slower-than', '10000');
  const calls = entries.filter((e) => isScriptCall(e[3][0])).map((e) => e[2]);
  if (process.env.ABUSE_DEBUG) console.error(calls.sort((a, b) => b - a).slice(0, 8), calls.length);
  return Math.max(0, ...calls) / 1000;
}

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

/** A decay view crossing its rebase epoch: reads until the rebase is done, each call short. */
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
  clock.setMs((T0_SEC + 600) * 1000); // the next epoch: the landmark moves
  let calls = 0;
  const rebaseMs = await longestCallMs(redis, async () => {
    while (calls < 100) {
      calls++;
      await ranking.top('decay', 'fading', 0, 10);
      if ((await redis.client.exists(`{${redis.prefix}board:decay}:fading:next`)) === 0) break;
    }
  });
  return {
    attack: `decay view of ${ITEMS} items crossing its rebase epoch`,
    measured: `longest script call ${rebaseMs.toFixed(2)} ms over ${calls} reads (one call of ${BEFORE_MS} ms before); every read exact`,
    held: rebaseMs < 5,
  };
}

/** Reads of a window whose expired slot drains with no scheduler: refused until drained, never listing it. */
async function drainRow({ redis, clock, ranking }: Exactness): Promise<AbuseRow> {
  const board = { name: 'drain', windows: [{ name: 'm', period: '3m', interval: '1m' }] };
  await ranking.putBoard(board);
  await fill(ranking, board);
  await ranking.top('drain', 'm', 0, 10);
  clock.advanceSec(180);
  let refused = 0;
  let listedExpired = 0;
  const drainMs = await longestCallMs(redis, async () => {
    for (let read = 0; read < 200; read++) {
      try {
        listedExpired += (await ranking.top('drain', 'm', 0, 10)).items.length;
        break;
      } catch (error) {
        if (!(error instanceof WindowDrainingError)) throw error;
        refused++;
      }
    }
  });
  return {
    attack: `reads of a window whose expired slot of ${ITEMS} items drains (no scheduler)`,
    measured: `${refused} reads answered 503 WINDOW_DRAINING, then exact; rows listed from the expired slot: ${listedExpired}; longest call ${drainMs.toFixed(2)} ms`,
    held: listedExpired === 0 && drainMs < 5,
  };
}

export const exactnessAbuse: AbusePart = async () => {
  const redis = await startTestRedis('single');
  const clock = new FakeClock(T0_SEC * 1000);
  const { ranking, redisService } = await startRankingService(redis, clock, { REDIS_COMMAND_TIMEOUT_MS: '5000' });
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
