/**
 * The plain sum boards the Lua benches write to (batch-entries.ts, lua-versions.ts): one shard, one or
 * two rolling windows (a day of hours, an hour of minutes), no views, ties, actors, segments or item
 * cap, holding PLAIN_BOARD_ITEMS items `i0` … so that no write creates one.
 */
import { UNLIMITED } from '../src/governance/growth-quota';
import type Redis from 'ioredis';
import { windowsFromStored } from '../src/ranking/boards/stored-windows';
import { PreparedBoard } from '../src/ranking/core/board';
import { RankingKeys } from '../src/ranking/core/ranking.keys';
import { RANKING } from '../src/ranking/ranking.functions';
import type { RedisFunctions } from '../src/redis/redis-functions';

const S = RANKING.functions;
export const PLAIN_BOARD_ITEMS = 10_000;

/** A write's header on the board's one shard, as the service sends it (no quota on new items). */
export function onPlainShard(board: PreparedBoard, nowMs: number, expireChunk: number) {
  return { board, shard: board.shards[0], nowMs, budgetFields: expireChunk, newItems: UNLIMITED };
}

export interface PlainBoardRequest {
  functions: RedisFunctions;
  prefix: string;
  name: string;
  windowCount: number;
  nowMs: number;
  expireChunk: number;
  /** The seeded amount of item i. */
  amountOf: (i: number) => number;
}

/** A one-shard board without views as the service stored it (bench/bare-server.ts, bench/coalescing.ts). */
export async function storedBoard(redis: Redis, keys: RankingKeys, name: string): Promise<PreparedBoard> {
  const stored = await redis.hgetall(keys.board(name).cfg());
  return new PreparedBoard(
    { name, version: stored.version, shards: 1, maxItems: null, windows: windowsFromStored(stored.windows), views: [] },
    (shard) => keys.board(name, shard),
  );
}

/** Puts the board and seeds its items in batches of 1 000. */
export async function makePlainBoard(request: PlainBoardRequest): Promise<PreparedBoard> {
  const { functions, prefix, name, windowCount, nowMs, expireChunk, amountOf } = request;
  const keys = new RankingKeys(prefix);
  const windows = [
    { name: 'day', periodSec: 86_400, intervalSec: 3600 },
    { name: 'hour', periodSec: 3600, intervalSec: 60 },
  ].slice(0, windowCount);
  const reply = await functions.call(S.boardPut, {
    ...{ keys: keys.board(name), windows, shards: 1, maxItems: undefined, views: [] },
    ...{ version: 'v-bench', reset: false, nowMs },
  });
  if (reply.status === 'conflict') throw new Error(reply.message);
  const config = { name, version: reply.version, shards: 1, maxItems: null, views: [] };
  const board = new PreparedBoard({ ...config, windows: JSON.parse(reply.windowsJson) }, () => keys.board(name));
  for (let first = 0; first < PLAIN_BOARD_ITEMS; first += 1000) {
    const entries = Array.from({ length: 1000 }, (_, i) => ({ item: `i${first + i}`, amount: amountOf(first + i) }));
    await functions.call(S.incrementBatch, { ...onPlainShard(board, nowMs, expireChunk), entries });
  }
  return board;
}
