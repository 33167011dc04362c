/**
 * A board whose window keeps `keep` snapshots of `top` rows, made in Redis directly so no one waits
 * `keep` slots: the board is created `keep` minutes in the past (1-minute slots, a period of `keep`
 * minutes), `top` items get distinct scores then, and each minute since is crossed by one history
 * read, which takes that boundary's snapshot. A service on the same Redis then finds every snapshot
 * still kept. The lowest item (`lowestItem`) is the costliest one to trace through them.
 */
import Redis from 'ioredis';
import { PreparedBoard } from '../../src/ranking/core/board';
import { RankingKeys } from '../../src/ranking/core/ranking.keys';
import { RANKING } from '../../src/ranking/ranking.functions';
import { UNLIMITED } from '../../src/governance/growth-quota';
import { loadLibraries } from '../../src/redis/functions';
import { callFunction } from '../../src/redis/redis-functions';

const S = RANKING.functions;

const item = (i: number) => `item-${String(i).padStart(11, '0')}`;

/** The board as it was `keep` minutes ago: one window of 1-minute slots keeping `keep` snapshots of `top` rows. */
async function putHistoryBoard(history: {
  redis: Redis;
  keys: RankingKeys;
  board: string;
  keep: number;
  top: number;
  startMs: number;
}): Promise<PreparedBoard> {
  const { redis, keys, board, keep, top, startMs } = history;
  const windows = [{ name: 'w', periodSec: (keep + 1) * 60, intervalSec: 60, snapshots: { keep, top } }];
  const put = await callFunction(redis, S.boardPut, {
    keys: keys.board(board),
    windows,
    shards: 1,
    maxItems: undefined,
    views: [],
    version: `v-${board}`,
    reset: false,
    nowMs: startMs,
  });
  if (put.status === 'conflict') throw new Error(put.message);
  await redis.zadd(keys.boardRegistry(), 0, board);
  return new PreparedBoard(
    { name: board, version: put.version, shards: 1, views: [], windows: JSON.parse(put.windowsJson), maxItems: null },
    (shard) => keys.board(board, shard),
  );
}

export async function seedHistory(
  redis: Redis,
  prefix: string,
  board: string,
  keep: number,
  top: number,
): Promise<{ window: string; lowestItem: string }> {
  await loadLibraries(redis, [RANKING.library]);
  const keys = new RankingKeys(prefix);
  const startMs = (Math.floor(Date.now() / 60_000) - keep) * 60_000;
  const prepared = await putHistoryBoard({ redis, keys, board, keep, top, startMs });
  const call = (atMs: number) => ({ board: prepared, shard: prepared.shards[0], nowMs: atMs, budgetFields: 1000 });
  for (let first = 0; first < top; first += 1000) {
    const entries = Array.from({ length: Math.min(1000, top - first) }, (_, i) => ({
      item: item(first + i),
      amount: 100_000 + top - first - i,
    }));
    await callFunction(redis, S.incrementBatch, { ...call(startMs), entries, newItems: UNLIMITED });
  }
  const window = prepared.config.windows[0];
  for (let minute = 1; minute <= keep; minute++) {
    await callFunction(redis, S.historyRead, { ...call(startMs + minute * 60_000), window, atSec: undefined });
  }
  return { window: window.name, lowestItem: item(top - 1) };
}
