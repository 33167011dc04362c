import { Reply } from '../../redis/replies';
import { typedFunction } from '../../redis/function-library';
import type { ScoredItem } from '../core/ranking.types';
import { BoardCall, boardArgs, rowsOf, WindowCall, windowRead } from '../core/script-call';
import { sliceFunctions } from '../core/slice-functions';

/** A listing page: rows in board order, where the first sits and how many score above it. */
export interface ListingReply {
  draining: boolean;
  /** 0-based position of the first row in the whole listing; -1 when an around read found no item. */
  firstPosition: number;
  higherThanFirst: number;
  rows: ScoredItem[];
  /** Each row's rank in the shard's latest snapshot (null: absent). */
  previousRanks: Array<number | null>;
}

/** The rows with their tie marks when the reply holds them (a sharded `ties: first` board), else as they are. */
function withTieMarks(rows: ScoredItem[], marks: Reply): ScoredItem[] {
  if (marks.length === 0) return rows;
  marks.expectLength(rows.length, true);
  return rows.map((row, i) => ({ ...row, tie: marks.string(i) }));
}

/** A single-window read answering a listing page: `extraArgs` follow the common window arguments. */
function listingRead<Call extends WindowCall>(
  name: string,
  handler: string,
  extraArgs: (call: Call) => Array<string | number>,
) {
  return typedFunction({
    name,
    handler,
    // Reads drain expired slots (writes that free memory): they run on a full Redis too.
    flags: ['allow-oom'],
    numberOfKeys: 3,
    build: (call: Call) => windowRead(call, extraArgs(call)),
    decode: (raw): ListingReply => {
      const reply = new Reply(name, raw).expectLength(5, true);
      const rows = withTieMarks(rowsOf(reply, 5), reply.nested(4));
      // Empty when the window keeps no snapshots: no row has a previous rank.
      const previous = reply.nested(3);
      if (previous.length > 0) previous.expectLength(rows.length);
      return {
        draining: reply.flag(0),
        firstPosition: reply.int(1),
        higherThanFirst: reply.int(2),
        rows,
        previousRanks: rows.map((_, i) => (previous.length > 0 && previous.int(i)) || null),
      };
    },
  });
}

/** A shard's live segment, with the items each window of the board lists (in config order). */
export type SegmentRow = { name: string; windowItems: number[] };

/** A page of a shard's live segments; `draining`: it stopped before a segment still holding expired data. */
export type SegmentPage = { draining: boolean; rows: SegmentRow[] };

/** Window reads of one shard: a page, an item's standing, an item and its neighbours; its segments. */
export const READS_FUNCTIONS = {
  segmentPage: typedFunction({
    name: 'tbRankSegmentPage',
    handler: 'segment_page',
    // Drains the segments it lists (writes that free memory): it runs on a full Redis too.
    flags: ['allow-oom'],
    numberOfKeys: 'dynamic',
    build: (call: BoardCall & { after: string; limit: number }) => ({
      keys: call.shard.incrementKeys,
      args: [...boardArgs(call), call.after, call.limit],
    }),
    decode: (raw, call): SegmentPage => {
      const reply = new Reply('tbRankSegmentPage', raw);
      const width = 1 + call.board.config.windows.length;
      if ((reply.length - 1) % width !== 0) throw reply.unexpected(reply.length - 1, `rows of ${width} entries`);
      const rows = Array.from({ length: (reply.length - 1) / width }, (_, i) => ({
        name: reply.string(1 + width * i),
        windowItems: Array.from({ length: width - 1 }, (_, w) => reply.int(2 + width * i + w)),
      }));
      return { draining: reply.int(0) === 1, rows };
    },
  }),

  readTop: listingRead('tbRankReadTop', 'read_top', (call: WindowCall & { offset: number; limit: number }) => [
    call.offset,
    call.limit,
  ]),

  readItem: typedFunction({
    name: 'tbRankReadItem',
    handler: 'read_item',
    flags: ['allow-oom'],
    numberOfKeys: 3,
    build: (call: WindowCall & { item: string }) => windowRead(call, [call.item]),
    decode: (raw) => {
      const reply = new Reply('tbRankReadItem', raw).expectLength(5);
      return {
        draining: reply.flag(0),
        standing: { score: reply.int(1), rank: reply.int(2) || null },
        ranked: reply.int(3),
        /** The item's tie mark on a sharded `ties: first` board ("" otherwise, or when not listed). */
        tie: reply.string(4),
      };
    },
  }),

  readAround: listingRead('tbRankReadAround', 'read_around', (call: WindowCall & { item: string; radius: number }) => [
    call.item,
    call.radius,
  ]),

  readNeighbours: typedFunction({
    name: 'tbRankReadNeighbours',
    handler: 'read_neighbours',
    flags: ['allow-oom'],
    numberOfKeys: 3,
    build: (call: WindowCall & { item: string; score: number; radius: number; tie?: string }) =>
      windowRead(call, [call.item, call.score, call.radius, call.tie ?? '']),
    decode: (raw) => {
      const reply = new Reply('tbRankReadNeighbours', raw).expectLength(5, true);
      const rows = withTieMarks(rowsOf(reply, 5), reply.nested(4));
      const beforeCount = reply.int(3);
      return {
        draining: reply.flag(0),
        /** Items of this shard before the place the pair takes. */
        position: reply.int(1),
        above: reply.int(2),
        before: rows.slice(0, beforeCount),
        after: rows.slice(beforeCount),
      };
    },
  }),
};

/** The reads slice's part of tb_ranking, injected into its store (RankingCoreModule builds it). */
export class ReadsFunctions extends sliceFunctions(READS_FUNCTIONS) {}
