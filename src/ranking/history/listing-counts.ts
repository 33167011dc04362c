import type { PreparedBoard } from '../core/board';
import { isRedisWrongNodeError } from '../../common/redis-errors';
import { LISTING_BOUNDARY_UNITS, LISTING_UNITS_PER_CALL } from '../core/ranking.limits';
import type { WindowConfig } from '../core/window-math';
import type { ListingAsk, ListingCount, ShardAsked } from './history.functions';
import type { HistoryStore } from './history.store';

/** A metric's listings read through `store`: its board, window and the read's time. */
export interface ListingsOf {
  store: HistoryStore;
  board: PreparedBoard;
  window: WindowConfig;
  nowMs: number;
}

/**
 * listingCounts of several shards' asks, each shard's counts in `asks`' order (draining: an archive of
 * one of them is still being taken; nothing else answered). On a sharded board the shards one node
 * serves are asked in listing_counts_shards calls of at most LISTING_UNITS_PER_CALL units each (in
 * parallel: each call is bounded, and Redis runs them one after the other), then shard by shard
 * (listing_counts, which drains first) where such a call could not (a period to drain first, or a node
 * that no longer serves a shard).
 */
export async function listingCountsOf(
  of: ListingsOf,
  asks: ShardAsked[],
): Promise<{ draining: boolean; counts: ListingCount[][] }> {
  const { store, board, window, nowMs } = of;
  const nodes = board.sharded ? store.shardsByNode(asks.map(({ shard }) => shard)) : [];
  const onNodes = await Promise.all(
    nodes.map((node) =>
      onNode(
        of,
        node.map((i) => asks[i]),
      ),
    ),
  );
  const answered = new Map(onNodes.flat().map((read) => [read.shard, read.counts] as const));
  const single = async ({ shard, asked }: ShardAsked) => ({
    shard,
    ...(await store.listingCounts(board, window, nowMs, shard, asked)),
  });
  const singles = await Promise.all(asks.filter(({ shard }) => !answered.has(shard)).map(single));
  if (singles.some((reply) => reply.draining)) return { draining: true, counts: [] };
  for (const reply of singles) answered.set(reply.shard, reply.counts);
  return { draining: false, counts: asks.map(({ shard }) => answered.get(shard)!) };
}

/** The shards of one node asked in listing_counts_shards calls; none read on a node that no longer serves them. */
async function onNode({ store, board, window, nowMs }: ListingsOf, asks: ShardAsked[]) {
  const calls = packedByUnits(asks, (ask) => listingUnits(ask.asked));
  try {
    return (await Promise.all(calls.map((shards) => store.listingCountsShards(board, window, nowMs, shards)))).flat();
  } catch (error) {
    if (!isRedisWrongNodeError(error)) throw error;
    return [];
  }
}

/** What asks weigh in LISTING_UNITS_PER_CALL's units: a listing read at a boundary, each item or row searched in it. */
export function listingUnits(asked: ListingAsk[]): number {
  return asked.reduce((sum, ask) => sum + LISTING_BOUNDARY_UNITS + ask.items.length + ask.rows.length, 0);
}

/** `parts` in order, in groups of at most LISTING_UNITS_PER_CALL units (a part that weighs more: a group of its own). */
export function packedByUnits<T>(parts: T[], weight: (part: T) => number): T[][] {
  const groups: T[][] = [];
  let units = Infinity;
  for (const part of parts) {
    const partUnits = weight(part);
    if (units + partUnits > LISTING_UNITS_PER_CALL) {
      groups.push([]);
      units = 0;
    }
    groups[groups.length - 1].push(part);
    units += partUnits;
  }
  return groups;
}
