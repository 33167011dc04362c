import type { ItemData } from '../options/item-data/item-data';
import type { BoardOptionsConfig } from '../options/registry';
import type { ViewConfig } from '../options/views/trending-math';
import type { WindowSpec } from './window-math';

/**
 * The ranking feature's shared vocabulary: what the slices hand each other and answer. Pure types:
 * no persistence file declares a domain type, every slice reads them from here.
 */

export interface ScoredItem {
  item: string;
  score: number;
  /**
   * Its tie mark on a sharded `ties: first` board (order_lib.lua): among equal scores, the greater mark
   * reached its score first. Read across shards only, never answered.
   */
  tie?: string;
}

/** A listed item; `rank` is the competition rank (1, 2, 2, 4). */
export interface ListedItem extends ScoredItem {
  rank: number;
  /** On a board with a tiebreak: the tiebreak of the row's pair, beside its score. */
  tiebreak?: number;
}

/** Score and competition rank of an item in one window (rank null: not ranked). */
export interface Standing {
  score: number;
  rank: number | null;
  /** On a board with a tiebreak: the tiebreak of the pair held (absent where none is held). */
  tiebreak?: number;
}

/** A write's standing in one window, with the item's rank in the window's latest snapshot (null: absent). */
export interface WindowStanding extends Standing {
  previousRank: number | null;
}

/** A write's figures per window, in the order of the window names it was answered with. */
export interface StandingsReply {
  draining: boolean;
  standings: WindowStanding[];
  /** The item's order mark per window on a sharded board whose order keeps marks ("" where not ranked; order_lib.lua). */
  marks?: string[];
}

export interface BatchEntry {
  item: string;
  /** On a max / min / last board: the entry's score. */
  amount: number;
  /** The event's time (unix ms, not after now); absent: now. */
  atMs?: number;
  /** The item's creation time (unix ms), for a hot view's firstSeen; absent: none. */
  createdMs?: number;
  /** The segments the entry also counts in; absent: none. */
  segments?: string[];
  /** Who sent it (a board with actors); absent: no one. */
  actor?: string;
  /** The item's group from now on (a board with groups); absent: unchanged. */
  group?: string;
  /** Beside a score on a board with a tiebreak: the record's tiebreak. */
  tiebreak?: number;
  /**
   * Its place in the request when it is not the first of its shard's entries: a call of a shard's part
   * starting at it keeps its answer under the request's key and this (writes/batch-calls.ts).
   */
  callKey?: number;
}

/** A listed row and its rank in the window's latest snapshot (null: absent, or the window keeps none). */
export interface RankedRow extends ListedItem {
  previousRank: number | null;
}

/** A window's listing at one snapshot boundary, over every shard. */
export interface SnapshotListing {
  atSec: number;
  items: ListedItem[];
}

/** An item in one snapshot: null rank and score when it was not among the snapshot's rows. */
export interface HistoryPoint {
  at: number;
  rank: number | null;
  score: number | null;
  /** On a board with a tiebreak: the tiebreak of the item's pair there (absent where rank is null). */
  tiebreak?: number;
  /** On a board with metrics: every metric's count there as kept (history/metric-counts.ts). */
  metrics?: Record<string, number>;
}

/** A rising row's figures as stored: sums in its two windows, when it entered the view, its last two slots' counts. */
export interface RisingFigures {
  observed: number;
  baseline: number;
  sinceSec: number;
  currentSlot: number;
  previousSlot: number;
}

/** A view row: its rank score (decay: forward-decayed against the landmark) and a rising row's figures. */
export interface ViewRow extends ScoredItem {
  rising?: RisingFigures;
  /** A wilson or controversial view's row: the item's counts of its positive and negative metrics. */
  counts?: { positive: number; negative: number };
}

/** A view's rows ranked (by rank score), and the landmark a decay view's rank scores are relative to. */
export interface ViewListing {
  draining: boolean;
  landmarkSec: number;
  rows: Array<ViewRow & { rank: number }>;
}

/** What an item write did: its figures per window and the window names they go with (as they were, on a replay). */
export interface WriteOutcome {
  replayed: boolean;
  draining: boolean;
  windowNames: readonly string[];
  standings: WindowStanding[];
  /** New items this write created (0 on a replay, or when no limit applied: nothing to charge). */
  createdItems: number;
  /** New actor contributions and segment entries an increment created (0 likewise; see GROWTH in segment_growth_lib). */
  createdActorEntries?: number;
  createdSegmentEntries?: number;
}

export interface BatchOutcome {
  /** True when every shard's part was replayed from its stored answer. */
  replayed: boolean;
  draining: boolean;
  applied: number;
  /** New items the shards that applied created. */
  createdItems: number;
  /** New actor contributions and segment entries the shards that applied created. */
  createdActorEntries: number;
  createdSegmentEntries: number;
  /** Entries of the shards whose call failed, and those failures. */
  refused: BatchEntry[];
  errors: unknown[];
}

/** Items above a score and ranked items per window, over some shards; draining while expired data remains. */
export interface ShardCounts {
  draining: boolean;
  above: number[];
  ranked: number[];
}

/**
 * A board's PUT as the store applies it: `shards` and `maxItems` undefined keep the stored ones, and
 * an option's field absent keeps the stored setting (off for a new board).
 */
export interface PutBoardCommand extends BoardOptionsConfig {
  name: string;
  windows: WindowSpec[];
  shards: number | undefined;
  maxItems: number | undefined;
  views: ViewConfig[];
  reset: boolean;
  /** The new config's version (a fresh id per PUT). */
  version: string;
  nowMs: number;
}

/** One id of a lookup: its score and rank in the window (board-wide, or among the ids given). */
export interface LookupRow extends Standing {
  item: string;
  previousRank: number | null;
  /** true: the window holds the item but moderation leaves it out of every listing (rank null). */
  hidden?: true;
  data?: ItemData | null;
}
