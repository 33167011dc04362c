import { Declared, functionSet, typedFunction } from '../../redis/function-library';
import { NamedArgs } from '../../redis/function-args';
import { namedFunction } from '../../redis/named-function';
import { NamedReply, Reply } from '../../redis/replies';
import type { ScoredItem } from '../core/ranking.types';
import { BoardCall, boardHeader, namedWindowRead, rowsOf, WindowCall } from '../core/script-call';
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

/** The reply fields of a listing page (read_top, read_around: reader.answer writes them by these names). */
const LISTING_REPLY = [
  'draining',
  'first_position',
  'higher_than_first',
  'previous_ranks',
  'tie_marks',
  'rows',
] as const;

/** A single-window read answering a listing page; `args` names its own arguments after the header. */
function listingRead<Call extends WindowCall, const Args extends readonly string[]>(
  args: Args,
  values: (call: Call) => NamedArgs<Args>,
): Declared<Call, ListingReply> {
  return (id) => ({
    ...id,
    // Reads drain expired slots (writes that free memory): they run on a full Redis too.
    flags: ['allow-oom'],
    numberOfKeys: 3,
    contract: { args, reply: LISTING_REPLY },
    build: (call: Call) => namedWindowRead(call, args, values(call)),
    decode: (raw): ListingReply => {
      const reply = new NamedReply(id.name, LISTING_REPLY, raw);
      const rows = withTieMarks(rowsOf(reply.nested('rows')), reply.nested('tie_marks'));
      // Empty when the window keeps no snapshots: no row has a previous rank.
      const previous = reply.nested('previous_ranks');
      if (previous.length > 0) previous.expectLength(rows.length);
      return {
        draining: reply.flag('draining'),
        firstPosition: reply.int('first_position'),
        higherThanFirst: reply.int('higher_than_first'),
        rows,
        previousRanks: rows.map((_, i) => (previous.length > 0 && previous.int(i)) || null),
      };
    },
  });
}

const ITEM_ARGS = ['item'] as const;
const METRIC_COUNTS_ARGS = ['items'] as const;
const METRIC_COUNTS_REPLY = ['draining', 'counts'] as const;
const ITEM_REPLY = ['draining', 'score', 'rank', 'ranked', 'tie'] as const;
const NEIGHBOURS_ARGS = ['item', 'score', 'radius', 'tie'] as const;
const NEIGHBOURS_REPLY = ['draining', 'position', 'above', 'before', 'tie_marks', 'rows'] as const;

/** A shard's live segment, with the items each window of the board lists (in config order). */
export type SegmentRow = { name: string; windowItems: number[] };

/**
 * A page of a shard's live segments. `last`: the last name it looked at ("" none): every name up to it
 * is answered; `ended`: no name follows it; `draining`: it stopped before a segment still holding
 * expired data.
 */
export type SegmentPage = { draining: boolean; ended: boolean; last: string; rows: SegmentRow[] };

/** Window reads of one shard: a page, an item's standing, an item and its neighbours; its segments. */
export const READS_FUNCTIONS = functionSet('tbRank', {
  segmentPage: namedFunction({
    // Drains the segments it lists (writes that free memory): it runs on a full Redis too.
    flags: ['allow-oom'],
    numberOfKeys: 'dynamic',
    args: ['after', 'limit', 'units'],
    reply: ['draining', 'ended', 'last', 'rows'],
    build: (call: BoardCall & { after: string; limit: number; units: number }) => ({
      keys: call.shard.incrementKeys,
      header: boardHeader(call),
      args: { after: call.after, limit: call.limit, units: call.units },
    }),
    decode: (reply, call): SegmentPage => {
      // A segment's row: its name, then its items in each of the board's windows.
      const rows = reply
        .nested('rows')
        .rows(1 + call.board.config.windows.length)
        .map((row) => {
          const { head, rest } = row.headed(['name'], 'window_items');
          return { name: head.string('name'), windowItems: rest.intsFrom(0) };
        });
      return { draining: reply.flag('draining'), ended: reply.flag('ended'), last: reply.string('last'), rows };
    },
  }),

  /**
   * `previousRanks` false: the rows' previous ranks are not read (a sharded board's page: the board-wide
   * ones are read apart, HistoryStore.previousRanks); absent: read when the window keeps snapshots.
   */
  readTop: listingRead(
    ['offset', 'limit', 'previous_ranks'],
    (call: WindowCall & { offset: number; limit: number; previousRanks?: boolean }) => ({
      ...call,
      previous_ranks: call.previousRanks === false ? 0 : 1,
    }),
  ),

  readItem: typedFunction({
    flags: ['allow-oom'],
    numberOfKeys: 3,
    contract: { args: ITEM_ARGS, reply: ITEM_REPLY },
    build: (call: WindowCall & { item: string }) => namedWindowRead(call, ITEM_ARGS, call),
    decode: (raw) => {
      const reply = new NamedReply('tbRankReadItem', ITEM_REPLY, raw);
      const rank = reply.int('rank');
      return {
        draining: reply.flag('draining'),
        standing: { score: reply.number('score'), rank: rank > 0 ? rank : null },
        /** Held at a score the window lists, and left out (moderation): a max / min / last board's 0 too. */
        hidden: rank < 0,
        ranked: reply.int('ranked'),
        /** The item's tie mark on a sharded `ties: first` board ("" otherwise, or when not listed). */
        tie: reply.string('tie'),
      };
    },
  }),

  metricCounts: typedFunction({
    flags: ['allow-oom'],
    numberOfKeys: 'dynamic',
    contract: { args: METRIC_COUNTS_ARGS, reply: METRIC_COUNTS_REPLY },
    // `metricKeys`: each metric's (slots, top) of the window on this shard, the board's order.
    build: (call: WindowCall & { metricKeys: string[]; items: string[] }) => {
      const read = namedWindowRead(call, METRIC_COUNTS_ARGS, { items: call.items.join('\u001f') });
      return { keys: [read.keys[0], ...call.metricKeys], args: read.args };
    },
    decode: (raw, call) => {
      const reply = new NamedReply('tbRankMetricCounts', METRIC_COUNTS_REPLY, raw);
      const metrics = call.metricKeys.length / 2;
      // Each item's counts, one per metric.
      const counts = reply.nested('counts').expectLength(call.items.length * metrics);
      return { draining: reply.flag('draining'), counts: counts.rows(metrics).map((row) => row.numbers()) };
    },
  }),

  readAround: listingRead(['item', 'radius'], (call: WindowCall & { item: string; radius: number }) => call),

  readNeighbours: typedFunction({
    flags: ['allow-oom'],
    numberOfKeys: 3,
    contract: { args: NEIGHBOURS_ARGS, reply: NEIGHBOURS_REPLY },
    build: (call: WindowCall & { item: string; score: number; radius: number; tie?: string }) =>
      namedWindowRead(call, NEIGHBOURS_ARGS, { ...call, tie: call.tie ?? '' }),
    decode: (raw) => {
      const reply = new NamedReply('tbRankReadNeighbours', NEIGHBOURS_REPLY, raw);
      const rows = withTieMarks(rowsOf(reply.nested('rows')), reply.nested('tie_marks'));
      const beforeCount = reply.int('before');
      return {
        draining: reply.flag('draining'),
        /** Items of this shard before the place the pair takes. */
        position: reply.int('position'),
        above: reply.int('above'),
        before: rows.slice(0, beforeCount),
        after: rows.slice(beforeCount),
      };
    },
  }),
});

/** The reads slice's part of tb_ranking, injected into its store (RankingCoreModule builds it). */
export class ReadsFunctions extends sliceFunctions(READS_FUNCTIONS) {}
