import { Bounds } from '../common/limits';

/** Largest |amount| of one increment or batch entry; an amount is also never zero. */
export const MAX_ABS_AMOUNT = 1_000_000;
export const AMOUNT_RANGE: Bounds = { min: -MAX_ABS_AMOUNT, max: MAX_ABS_AMOUNT };
export const DEFAULT_AMOUNT = 1;

/** Entries of one batch of increments. */
export const BATCH_ENTRIES: Bounds = { min: 1, max: 1000 };

/** Most item increments one coalesced script call applies (WRITE_COALESCE_MS): about 1 ms of Redis at most. */
export const MAX_COALESCED_INCREMENTS = 100;

/** Neighbours on each side of an item that `around` answers. */
export const RADIUS_ITEMS: Bounds = { min: 1, max: 100 };
export const DEFAULT_RADIUS_ITEMS = 5;

/** Rows of a top read when no limit is given (the bounds are the shared page limit's). */
export const DEFAULT_TOP_ITEMS = 10;

/** Windows of one board, and slots (period / interval) of one window. */
export const WINDOWS_PER_BOARD: Bounds = { min: 1, max: 8 };
export const MAX_SLOTS_PER_WINDOW = 10_000;

/** Key groups a board's items spread over. */
export const SHARDS_PER_BOARD: Bounds = { min: 1, max: 64 };

/**
 * Deepest position (offset + limit) a top read of a sharded board reaches. The read is progressive
 * (shard-math mergeShardHeads): about this many rows plus a margin per shard in all, never more than
 * maxRowsRead (153 000 rows at 64 shards; docs/benchmarks.md has its Redis time).
 */
export const MAX_SHARDED_DEPTH_ITEMS = 10_000;

/** A board's maxItems: most items its windows may hold (per shard: ceil(maxItems / shards)). */
export const BOARD_MAX_ITEMS: Bounds = { min: 1, max: 100_000_000 };

/** A window's snapshots: how many boundaries of history it keeps, and how many rows each holds. */
export const SNAPSHOT_KEEP: Bounds = { min: 1, max: 1000 };
export const SNAPSHOT_TOP_ITEMS: Bounds = { min: 1, max: 1000 };

/** Sharded boards' merged latest snapshots an instance keeps in memory (one per board window read). */
export const MAX_CACHED_PREVIOUS_LISTINGS = 1000;
