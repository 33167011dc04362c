import { functionSet } from '../../redis/function-library';
import { namedFunction } from '../../redis/named-function';
import { type Reply, ScriptReplyError } from '../../redis/replies';
import type { PreparedBoard, ShardKeys } from '../core/board';
import type { ScoredItem } from '../core/ranking.types';
import { acrossShardsCall, windowReadFunction, WindowCall } from '../core/script-call';
import type { WindowConfig } from '../core/window-math';
import { HISTORY_READ_BYTES_PER_CALL } from '../core/ranking.limits';
import { sliceFunctions } from '../core/slice-functions';

/** A snapshot as one shard stored it: its boundary (unix s) and rows, best first. */
export interface StoredSnapshot {
  atSec: number;
  rows: ScoredItem[];
  /** The items of those rows the window's listing leaves out now (moderation). */
  leftOut: string[];
}

/**
 * Where the next page of a snapshot's text starts (a byte), the text's length when its first page was
 * read, and the page's last row as stored (the next page is read only if that row still ends where it starts).
 */
export interface SnapshotPage {
  nextByte: number;
  bytes: number;
  seam: string;
}

/**
 * An item in one snapshot of one shard: its score (0: not listed), the rows above it (-1: not listed)
 * and how many of those the listing leaves out now (moderation); on a tiebreak board its mark there
 * (what the other shards count ahead of; '' elsewhere).
 */
export interface SnapshotPoint {
  atSec: number;
  score: number;
  above: number;
  leftOut: number;
  mark: string;
}

/** A point of an item's history the other shards count rows ahead of: its boundary, score and mark. */
export interface CountedPoint {
  atSec: number;
  score: number;
  mark: string;
}

/** History counts on the shards of a board one Redis node serves (at least one). */
export interface HistoryCountShardsCall {
  board: PreparedBoard;
  shards: ShardKeys[];
  nowMs: number;
  window: WindowConfig;
  points: CountedPoint[];
  /** The call's budget in snapshot rows (HISTORY_ROWS_PER_CALL): shards past it are left for another call. */
  rows: number;
}

/** One shard's asks of a listing_counts_shards call. */
export interface ShardAsked {
  shard: ShardKeys;
  asked: ListingAsk[];
}

/** listing_counts over the shards one node serves (listing_counts_shards.lua). */
export interface ListingCountsShardsCall {
  board: PreparedBoard;
  nowMs: number;
  window: WindowConfig;
  /** At most LISTING_UNITS_PER_CALL units of asks (listingUnits), but for a shard whose own asks weigh more. */
  shards: ShardAsked[];
}

/** Rows above a score in one shard's snapshot, and how many of them the listing leaves out now. */
export interface SnapshotCount {
  above: number;
  leftOut: number;
}

/**
 * Snapshot rows as stored: "\x1e<item>\x1f<score>\x1f<position>" each (older snapshots: no position),
 * on a tiebreak board "\x1e<item>\x1f<score>\x1f<mark>\x1f<position>" (the row's `tie`, as live rows
 * carry it: the merge and the ranks compare it after the score), best first (snapshot_lib.lua).
 */
export function parseSnapshotRows(packed: string): ScoredItem[] {
  if (packed === '') return [];
  return packed
    .slice(1)
    .split('\x1e')
    .map((row) => {
      const fields = row.split('\x1f');
      const parsed: ScoredItem = { item: fields[0], score: Number(fields[1]) };
      if (fields.length > 3) parsed.tie = fields[2];
      return parsed;
    });
}

/** One ask's answer of listing_counts.lua. */
const LISTING = ['found', 'recorded', 'rows', 'bytes', 'values', 'ahead'] as const;

/** An item's point through the snapshots (history_item.lua): the boundary, its score, the rows above it. */
const POINT = ['at', 'score', 'above'] as const;

/** What a metric's listing at one boundary is asked: its record's scores of `items`, the rows ahead of `rows`. */
export interface ListingAsk {
  atSec: number;
  items: string[];
  rows: ScoredItem[];
  /** Count the rows ahead of each item found (a sharded board's: its rank over the shards). */
  rankItems: boolean;
}

/** One shard's answer for a ListingAsk (listing_counts.lua). */
export interface ListingCount {
  /** A listing is kept at exactly that boundary. */
  found: boolean;
  /** Its archive's record exists (false for a snapshot, or an archive kept before records were). */
  recorded: boolean;
  rows: number;
  /**
   * Its text's length: with `rows`, the state pieces of one ask must all have read (a retraction or a
   * cut between two pieces changes them; listing-counts.ts joinedCounts).
   */
  bytes: number;
  /** Per item asked: its row as the record holds it (score, `tie` on a tiebreak board), or undefined. */
  values: Array<ScoredItem | undefined>;
  /** Per item found, then per row asked: the rows strictly ahead of it (-1: item not found). */
  ahead: number[];
}

/** Snapshot reads: a window's snapshot at a time, an item through the snapshots, rows above scores in them. */
/** Points as history_count takes them: [boundary, score, mark]. */
const pointsArg = (points: CountedPoint[]) =>
  JSON.stringify(points.map((point) => [point.atSec, point.score, point.mark]));

export const HISTORY_FUNCTIONS = functionSet('tbRank', {
  historyRead: windowReadFunction({
    args: ['at_sec', 'from_byte', 'text_bytes', 'seam', 'page_bytes'],
    reply: ['keeps', 'found', 'boundary', 'rows', 'next_byte', 'bytes', 'seam', 'left_out', 'pending'],
    values: (call: WindowCall & { atSec: number | undefined; page?: SnapshotPage }) => ({
      at_sec: call.atSec,
      from_byte: call.page?.nextByte ?? 0,
      text_bytes: call.page?.bytes ?? 0,
      seam: call.page?.seam ?? '',
      page_bytes: HISTORY_READ_BYTES_PER_CALL,
    }),
    /**
     * keeps: the window keeps snapshots; snapshot: the page of the one found (undefined: none, or with
     * `page`, changed since the page before); page: where its text's next page starts (undefined: none
     * left); pendingSec: the oldest period whose archive the shard is still writing out (null: none;
     * older ones are written)
     */
    decode: (reply): { keeps: boolean; snapshot?: StoredSnapshot; page?: SnapshotPage; pendingSec: number | null } => {
      const pendingSec = reply.int('pending') || null;
      if (!reply.flag('found')) return { keeps: reply.flag('keeps'), pendingSec };
      const snapshot = {
        atSec: reply.int('boundary'),
        rows: parseSnapshotRows(reply.string('rows')),
        leftOut: reply.nested('left_out').strings(),
      };
      const nextByte = reply.int('next_byte');
      const page = nextByte > 0 ? { nextByte, bytes: reply.int('bytes'), seam: reply.string('seam') } : undefined;
      return { keeps: true, snapshot, page, pendingSec };
    },
  }),

  historyItem: windowReadFunction({
    args: ['item', 'from_sec', 'to_sec', 'most_snapshots'],
    reply: ['keeps', 'next_sec', 'points', 'hidden', 'left_out', 'marks'],
    values: (call: WindowCall & { item: string; fromSec: number; toSec: number; mostSnapshots: number }) => ({
      item: call.item,
      from_sec: call.fromSec,
      to_sec: call.toSec,
      most_snapshots: call.mostSnapshots,
    }),
    /** nextSec: the boundary the next page starts at (null: the range is answered); hidden: left out now */
    decode: (reply): { keeps: boolean; nextSec: number | null; hidden: boolean; points: SnapshotPoint[] } => {
      const points = reply.nested('points').records(POINT);
      const leftOut = reply.nested('left_out').expectLength(points.length).intsFrom(0);
      const marks = reply.nested('marks').expectLength(points.length).strings();
      return {
        keeps: reply.flag('keeps'),
        nextSec: reply.int('next_sec') || null,
        hidden: reply.flag('hidden'),
        points: points.map((point, i) => ({
          atSec: point.int('at'),
          score: point.number('score'),
          above: point.int('above'),
          leftOut: leftOut[i],
          mark: marks[i],
        })),
      };
    },
  }),

  snapshotCut: windowReadFunction({
    args: ['at_sec', 'last_score', 'last_item', 'last_mark'],
    reply: ['cut'],
    values: (call: WindowCall & { atSec: number; last: ScoredItem }) => ({
      at_sec: call.atSec,
      last_score: call.last.score,
      last_item: call.last.item,
      last_mark: call.last.tie ?? '',
    }),
    /** the rows cut */
    decode: (reply) => reply.int('cut'),
  }),

  historyCount: windowReadFunction({
    args: ['points'],
    reply: ['draining', 'counts', 'left_out'],
    values: (call: WindowCall & { points: CountedPoint[] }) => ({
      points: pointsArg(call.points),
    }),
    /**
     * rows above each point's score (pair: score and mark) in this shard's snapshot at or before its
     * time (a calendar window's archive of its period); draining: this shard's archive of a point's
     * period is still being taken (the counts are short: read again)
     */
    decode: (reply, call): { draining: boolean; counts: SnapshotCount[] } => {
      const [counts, leftOut] = [reply.nested('counts'), reply.nested('left_out')];
      counts.expectLength(call.points.length);
      leftOut.expectLength(call.points.length);
      const counted = call.points.map((_, i) => ({ above: counts.int(i), leftOut: leftOut.int(i) }));
      return { draining: reply.flag('draining'), counts: counted };
    },
  }),

  historyCountShards: namedFunction({
    flags: ['no-writes', 'allow-cross-slot-keys'],
    numberOfKeys: 1,
    args: ['window_key', 'shards', 'points', 'rows'],
    reply: ['pending', 'rest', 'counts', 'left_out'],
    build: (call: HistoryCountShardsCall) =>
      acrossShardsCall(call, {
        points: pointsArg(call.points),
        rows: call.rows,
      }),
    /** the shards not counted (a boundary to cross or archive to drain first), those left for another call, the counts */
    decode: (reply, call): { pending: ShardKeys[]; rest: ShardKeys[]; counts: SnapshotCount[] } => {
      const [counts, leftOut] = [reply.nested('counts'), reply.nested('left_out')];
      counts.expectLength(call.points.length);
      leftOut.expectLength(call.points.length);
      return {
        pending: reply
          .nested('pending')
          .intsFrom(0)
          .map((position) => call.shards[position - 1]),
        rest: reply.int('rest') === 0 ? [] : call.shards.slice(reply.int('rest') - 1),
        counts: call.points.map((_, i) => ({ above: counts.int(i), leftOut: leftOut.int(i) })),
      };
    },
  }),

  listingCounts: windowReadFunction({
    args: ['asked'],
    reply: ['draining', 'listings'],
    values: (call: WindowCall & { asked: ListingAsk[] }) => ({ asked: JSON.stringify(askedArg(call.asked)) }),
    /** draining: an archive of this shard is still being taken (nothing answered); else one count per ask */
    decode: (reply, call): { draining: boolean; counts: ListingCount[] } => {
      if (reply.flag('draining')) return { draining: true, counts: [] };
      return { draining: false, counts: listingCountsOf(reply.nested('listings'), call.asked) };
    },
  }),

  listingCountsShards: namedFunction({
    flags: ['no-writes', 'allow-cross-slot-keys'],
    numberOfKeys: 1,
    args: ['window_key', 'shards', 'asked'],
    reply: ['pending', 'listings'],
    build: (call: ListingCountsShardsCall) =>
      acrossShardsCall(
        { ...call, shards: call.shards.map(({ shard }) => shard) },
        { asked: JSON.stringify(call.shards.map(({ asked }) => askedArg(asked))) },
      ),
    /** each shard read with its counts, in `shards`' order (a shard with a period to drain first is not read) */
    decode: (reply, call) => {
      const pending = new Set(reply.nested('pending').intsFrom(0));
      const read = call.shards.filter((_, i) => !pending.has(i + 1));
      const asked = read.flatMap((shard) => shard.asked);
      const counts = listingCountsOf(reply.nested('listings'), asked);
      let at = 0;
      return read.map((shard) => {
        const first = at;
        at += shard.asked.length;
        return { ...shard, counts: counts.slice(first, at) };
      });
    },
  }),
});

/** Asks as listing_counts takes them: [boundary, items, rows ([score, mark, item]), rank_items]. */
function askedArg(asked: ListingAsk[]) {
  return asked.map((ask) => [
    ask.atSec,
    ask.items,
    ask.rows.map((row) => [row.score, row.tie ?? '', row.item]),
    ask.rankItems,
  ]);
}

/** The counts of `asked` from a listings reply: one LISTING record an ask, in order. */
function listingCountsOf(reply: Reply, asked: ListingAsk[]): ListingCount[] {
  const listings = reply.records(LISTING);
  if (listings.length !== asked.length) {
    throw new ScriptReplyError(reply.script, `expected ${asked.length} listings, got ${listings.length}`);
  }
  return asked.map((ask, i): ListingCount => {
    const listing = listings[i];
    const values = listing.nested('values').expectLength(ask.items.length);
    const ahead = listing.nested('ahead').expectLength(ask.items.length + ask.rows.length);
    return {
      found: listing.flag('found'),
      recorded: listing.flag('recorded'),
      rows: listing.int('rows'),
      bytes: listing.int('bytes'),
      values: ask.items.map((item, j) => recordedRow(item, values.string(j))),
      ahead: ahead.intsFrom(0),
    };
  });
}

/** A value of an archive's record ("<score>" or "<score>\x1f<mark>") as the item's row; '' none. */
function recordedRow(item: string, value: string): ScoredItem | undefined {
  if (value === '') return undefined;
  const [score, mark] = value.split('\x1f');
  return mark === undefined ? { item, score: Number(score) } : { item, score: Number(score), tie: mark };
}

/** The history slice's part of tb_ranking, injected into its store (RankingCoreModule builds it). */
export class HistoryFunctions extends sliceFunctions(HISTORY_FUNCTIONS) {}
