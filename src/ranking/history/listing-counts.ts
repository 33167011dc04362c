import type { PreparedBoard, ShardKeys } from '../core/board';
import { isRedisWrongNodeError } from '../../common/redis-errors';
import { LISTING_BOUNDARY_UNITS, LISTING_SHARDS_PER_CALL, LISTING_UNITS_PER_CALL } from '../core/ranking.limits';
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

/** Indexes of `shards` grouped by the Redis node serving each (HistoryStore.shardsByNode). */
export type NodesOf = (shards: ShardKeys[]) => number[][];

/**
 * listingCounts of several shards' asks, each shard's counts in `asks`' order (draining: an archive of
 * one of them is still being taken; nothing else answered). Each shard's asks go in pieces of at most
 * LISTING_UNITS_PER_CALL units (askPieces: a boundary's items and rows split over pieces where they weigh
 * more), so no call's work grows with a page's rows. On a sharded board the pieces of the shards one node
 * serves are asked in listing_counts_shards calls of at most LISTING_UNITS_PER_CALL units each (in
 * parallel: each call is bounded, and Redis runs them one after the other), then piece by piece
 * (listing_counts, which drains first) where such a call could not (a period to drain first, or a node
 * that no longer serves a shard).
 */
export async function listingCountsOf(
  of: ListingsOf,
  asks: ShardAsked[],
): Promise<{ draining: boolean; counts: ListingCount[][] }> {
  const { store, board, window, nowMs } = of;
  const pieces = shardPieces(asks);
  const flat = pieces.flat();
  const nodes = board.sharded ? store.shardsByNode(flat.map(({ shard }) => shard)) : [];
  const onNodes = await Promise.all(
    nodes.map((node) =>
      onNode(
        of,
        node.map((i) => flat[i]),
      ),
    ),
  );
  const answered = new Map<ListingAsk[], ListingCount[]>(onNodes.flat().map((read) => [read.asked, read.counts]));
  const single = async ({ shard, asked }: ShardAsked) => ({
    asked,
    ...(await store.listingCounts(board, window, nowMs, shard, asked)),
  });
  const singles = await Promise.all(flat.filter(({ asked }) => !answered.has(asked)).map(single));
  if (singles.some((reply) => reply.draining)) return { draining: true, counts: [] };
  for (const reply of singles) answered.set(reply.asked, reply.counts);
  const counts = pieces.map((parts) => joinedCounts(parts.map(({ asked }) => [asked, answered.get(asked)!])));
  // Pieces of a boundary that read different states of it met a change in between: sent again.
  if (counts.some((shardCounts) => shardCounts === undefined)) return { draining: true, counts: [] };
  return { draining: false, counts: counts as ListingCount[][] };
}

/**
 * The calls listingCountsOf sends for `asks` when every answer comes back: on a sharded board each node's
 * pieces (`nodesOf`) in listing_counts_shards calls as onNode packs them, else a listing_counts call a piece.
 */
export function listingCalls(sharded: boolean, asks: ShardAsked[], nodesOf: NodesOf): number {
  const flat = shardPieces(asks).flat();
  if (!sharded) return flat.length;
  const nodes = nodesOf(flat.map(({ shard }) => shard));
  return nodes.reduce((calls, node) => calls + nodeCalls(node.map((i) => flat[i])).length, 0);
}

/** Each shard's asks in pieces (askPieces), each piece with its shard. */
function shardPieces(asks: ShardAsked[]): Array<Array<{ shard: ShardKeys; asked: AskPiece[] }>> {
  return asks.map(({ shard, asked }) => askPieces(asked).map((part) => ({ shard, asked: part })));
}

/** A piece of a boundary's ask: `of` is the ask's index among the shard's asks. */
type AskPiece = ListingAsk & { of: number };

/**
 * A shard's asks in pieces of at most LISTING_UNITS_PER_CALL units each (listingUnits), in order: an ask
 * weighing more is split into asks of the same boundary, its items first, then its rows.
 */
function askPieces(asked: ListingAsk[]): AskPiece[][] {
  const room = Math.max(1, LISTING_UNITS_PER_CALL - LISTING_BOUNDARY_UNITS);
  const pieces: AskPiece[][] = [[]];
  let units = 0;
  asked.forEach((ask, of) => {
    const items = ask.items.length;
    for (let from = 0; from === 0 || from < items + ask.rows.length; from += room) {
      const rows = ask.rows.slice(Math.max(0, from - items), Math.max(0, from + room - items));
      const piece = { ...ask, of, items: ask.items.slice(from, from + room), rows };
      const weight = listingUnits([piece]);
      if (units + weight > LISTING_UNITS_PER_CALL && pieces[pieces.length - 1].length > 0) {
        pieces.push([]);
        units = 0;
      }
      pieces[pieces.length - 1].push(piece);
      units += weight;
    }
  });
  return pieces;
}

/**
 * A shard's counts, one per ask, from its pieces' (askPieces): each ask's items' then rows' answers in
 * order; undefined when pieces of one ask read different states of its listing (whether it is kept, its
 * rows and bytes: a retraction, a cut or an archive written between two pieces), counts of two states
 * being off by a row: the caller asks again.
 */
function joinedCounts(parts: Array<[AskPiece[], ListingCount[]]>): ListingCount[] | undefined {
  let agree = true;
  const joined: Array<ListingCount & { rowsAhead: number[] }> = [];
  for (const [asked, counts] of parts) {
    asked.forEach((piece, i) => {
      const count = counts[i];
      const itemsAhead = count.ahead.slice(0, piece.items.length);
      const rowsAhead = count.ahead.slice(piece.items.length);
      const into = joined[piece.of];
      if (!into) joined[piece.of] = { ...count, values: [...count.values], ahead: itemsAhead, rowsAhead };
      else {
        agree = agree && into.found === count.found && into.rows === count.rows && into.bytes === count.bytes;
        into.values.push(...count.values);
        into.ahead.push(...itemsAhead);
        into.rowsAhead.push(...rowsAhead);
      }
    });
  }
  if (!agree) return undefined;
  return joined.map(({ rowsAhead, ...count }) => ({ ...count, ahead: [...count.ahead, ...rowsAhead] }));
}

/** One node's pieces in listing_counts_shards calls: LISTING_UNITS_PER_CALL units and LISTING_SHARDS_PER_CALL pieces a call. */
function nodeCalls(asks: ShardAsked[]): ShardAsked[][] {
  return packedByUnits(asks, (ask) => listingUnits(ask.asked), LISTING_SHARDS_PER_CALL);
}

/** The shards of one node asked in listing_counts_shards calls; none read on a node that no longer serves them. */
async function onNode({ store, board, window, nowMs }: ListingsOf, asks: ShardAsked[]) {
  const calls = nodeCalls(asks);
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

/**
 * `parts` in order, in groups of at most LISTING_UNITS_PER_CALL units (a part that weighs more: a group of
 * its own) and at most `most` parts.
 */
function packedByUnits<T>(parts: T[], weight: (part: T) => number, most = Infinity): T[][] {
  const groups: T[][] = [];
  let units = Infinity;
  for (const part of parts) {
    const partUnits = weight(part);
    if (units + partUnits > LISTING_UNITS_PER_CALL || groups[groups.length - 1].length >= most) {
      groups.push([]);
      units = 0;
    }
    groups[groups.length - 1].push(part);
    units += partUnits;
  }
  return groups;
}
