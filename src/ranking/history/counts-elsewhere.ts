import { isRedisWrongNodeError } from '../../common/redis-errors';
import type { RedisFunctions } from '../../redis/redis-functions';
import type { RedisService } from '../../redis/redis.service';
import type { PreparedBoard, ShardKeys } from '../core/board';
import { guard } from '../core/ranking.errors';
import { HISTORY_ROWS_PER_CALL } from '../core/ranking.limits';
import { boardCall } from '../core/script-call';
import type { WindowConfig } from '../core/window-math';
import type { HistoryFunctions, SnapshotCount, SnapshotPoint } from './history.functions';

/** A page of an item's history: from `fromSec` to `toSec` (unix s, boundaries of kept snapshots). */
export interface ItemHistoryRead {
  board: PreparedBoard;
  window: WindowConfig;
  nowMs: number;
  item: string;
  fromSec: number;
  toSec: number;
  /** Charges the caller the calls past the item's shard's (throws when its budget lacks them). */
  admit?: (reads: number) => void;
}

/** What the counts call through: the history store's connection, its functions and its expiry budget. */
export interface CountingStore {
  readonly redis: RedisService;
  readonly functions: RedisFunctions;
  readonly fns: HistoryFunctions['functions'];
  readonly budgetFields: number;
}

/** The other shards' share of an item's points on a sharded board, by boundary. */
export interface CountedElsewhere {
  /** A shard's archive of a point's period is still being taken (its count is short: read again). */
  draining: boolean;
  /** Per listed point's boundary: the rows ahead of it on the other shards, and those left out now. */
  above: Map<number, SnapshotCount>;
}

/**
 * Rows above each listed point's score (and those left out) on the shards other than the item's own
 * (`home`), by boundary; draining: a shard's archive of a point's period is still being taken (on a
 * calendar window archiving runs shard by shard, in chunks: archive_lib).
 */
export async function aboveElsewhere(
  store: CountingStore,
  read: ItemHistoryRead,
  home: ShardKeys,
  points: SnapshotPoint[],
): Promise<CountedElsewhere> {
  const { board } = read;
  const listed = points.filter((point) => point.above >= 0);
  // Each other shard's count is a call of the item's shard's size: one read of the caller's budget.
  if (listed.length > 0) read.admit?.(board.shards.length - 1);
  const others = board.shards.filter((shard) => shard !== home && listed.length > 0);
  const nodes = store.redis.groupByNode(others.map((shard) => shard.keys.cfg()));
  const counted = await Promise.all(
    nodes.map((node) =>
      countOnNode(
        store,
        read,
        node.map((i) => others[i]),
        listed,
      ),
    ),
  );
  const counts = counted.flatMap((node) => node.counts);
  const sum = (i: number, field: keyof SnapshotCount) => counts.reduce((total, count) => total + count[i][field], 0);
  return {
    draining: counted.some((node) => node.draining),
    above: new Map(listed.map((point, i) => [point.atSec, { above: sum(i, 'above'), leftOut: sum(i, 'leftOut') }])),
  };
}

/**
 * The rows ahead of each point on the shards one node serves: history_count_shards calls of at most
 * HISTORY_ROWS_PER_CALL rows' work each, one after the other until every shard is counted, then shard
 * by shard (history_count) where such a call could not (a boundary to cross or an archive to drain
 * first, or a node that no longer serves a shard). One list of counts per call answered; draining:
 * a shard's archive of a point's period is still being taken (history_count drained a chunk of it).
 */
async function countOnNode(
  store: CountingStore,
  read: ItemHistoryRead,
  shards: ShardKeys[],
  points: SnapshotPoint[],
): Promise<{ draining: boolean; counts: SnapshotCount[][] }> {
  const { board, window, nowMs } = read;
  const counts: SnapshotCount[][] = [];
  const uncounted: ShardKeys[] = [];
  let rest = shards;
  try {
    while (rest.length > 0) {
      const call = { board, shards: rest, nowMs, window, points, rows: HISTORY_ROWS_PER_CALL };
      const reply = await guard(store.functions.call(store.fns.historyCountShards, call));
      counts.push(reply.counts);
      uncounted.push(...reply.pending);
      rest = reply.rest;
    }
  } catch (error) {
    if (!isRedisWrongNodeError(error)) throw error;
    uncounted.push(...rest);
  }
  const single = (shard: ShardKeys) =>
    guard(
      store.functions.call(store.fns.historyCount, {
        ...boardCall(board, shard, nowMs, store.budgetFields),
        window,
        points,
      }),
    );
  const singles = await Promise.all(uncounted.map(single));
  return {
    draining: singles.some((reply) => reply.draining),
    counts: [...counts, ...singles.map((reply) => reply.counts)],
  };
}
