import type { Bounds } from '../../../common/limits';

/** `?perGroup=k` on top and POST .../query: at most k rows of one group. */
export const PER_GROUP_ITEMS: Bounds = { min: 1, max: 100 };

/** POST .../query: most excluded item ids and group ids. */
export const EXCLUDE_ITEMS_MAX = 1000;
export const EXCLUDE_GROUPS_MAX = 100;

/** A filtered read lists at most this deep (offset + limit) into its filtered listing. */
export const FILTERED_DEPTH_ITEMS = 1000;

/**
 * Rows of one shard a full filtered page (FILTERED_DEPTH_ITEMS) past every excluded item
 * (EXCLUDE_ITEMS_MAX) takes: a scan splits them over its calls (groupScan), over a window or a staged span alike.
 */
export const GROUP_SCAN_ROWS = FILTERED_DEPTH_ITEMS + EXCLUDE_ITEMS_MAX;

/**
 * How deep one shard is scanned per filtered read, in GROUP_SCAN_ROWS: a scan of SPAN_SCAN_SPLIT times
 * this many calls. Deeper (one group holding the whole head, excluded groups, or few items with
 * minActors actors in it) the read answers the rows it found with `truncated: true`.
 */
export const GROUP_PAGE_CALLS = 4;

/**
 * A filtered scan takes GROUP_SCAN_ROWS in this many calls, as many times GROUP_PAGE_CALLS of them, so
 * a call stays within the bound (~8 M Redis instructions, bench/span-filter-instructions.ts) and the
 * scan reaches exactly as deep (GROUP_SCAN_ROWS is 8 x 250). A window's or view's plain row weighs
 * ~16 k instructions (2 000 of them ~30 M in one call, 400 up to 9.3 M), with its actor count
 * (minActors) ~18 k; a staged span's row is read as a window's; and each call decodes the exclusions
 * again (~1.8 M for 1 000).
 */
export const SPAN_SCAN_SPLIT = 8;

/** Rows one group_page (or a view's filter) call scans of one shard, and the calls per shard, for any filter. */
export function groupScan(): { scan: number; calls: number } {
  return { scan: GROUP_SCAN_ROWS / SPAN_SCAN_SPLIT, calls: GROUP_PAGE_CALLS * SPAN_SCAN_SPLIT };
}

/** What a filtered read refuses (INVALID_INPUT, 400). */
export const GROUPS_MESSAGES = {
  noGroups: (board: string, field: string) =>
    `${field}: board "${board}" keeps no groups (PUT the board with "groups": true)`,
  perGroupNeedsGroups: (board: string) =>
    `perGroup: board "${board}" keeps no groups (PUT the board with "groups": true)`,
  tooDeep: (depth: number) =>
    `offset + limit is ${depth}: a filtered read (perGroup, minActors, exclude) lists at most ${FILTERED_DEPTH_ITEMS} deep`,
};
