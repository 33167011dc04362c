import type { Bounds } from '../../../common/limits';

/** `?perGroup=k` on top and POST .../query: at most k rows of one group. */
export const PER_GROUP_ITEMS: Bounds = { min: 1, max: 100 };

/** POST .../query: most excluded item ids and group ids. */
export const EXCLUDE_ITEMS_MAX = 1000;
export const EXCLUDE_GROUPS_MAX = 100;

/** A filtered read lists at most this deep (offset + limit) into its filtered listing. */
export const FILTERED_DEPTH_ITEMS = 1000;

/**
 * Most rows one group_page call scans on one shard: a full filtered page (FILTERED_DEPTH_ITEMS) past
 * every excluded item (EXCLUDE_ITEMS_MAX) fits one call; measured about 2 ms (harness/worst-case).
 */
export const GROUP_SCAN_ROWS = FILTERED_DEPTH_ITEMS + EXCLUDE_ITEMS_MAX;

/**
 * Most group_page calls one shard gets per filtered read: deeper than GROUP_SCAN_ROWS x this (one
 * group holding the whole head, excluded groups, or few items with minActors actors) the read answers the rows it found with
 * `truncated: true`.
 */
export const GROUP_PAGE_CALLS = 4;

/**
 * A filtered scan takes the rows of one call without minActors in this many calls, as many times more
 * of them, where each row costs more than a window's plain row: over a staged span (its sums and actor
 * counts read as a window's) and with minActors on a window or view (each row's actor count read beside
 * it). A call stays within the bound (~8 M Redis instructions, bench/span-filter-instructions.ts) and
 * the scan reaches exactly as deep (GROUP_SCAN_ROWS is 8 x 250).
 */
export const SPAN_SCAN_SPLIT = 8;

/** Rows one group_page call scans over a staged span, and the calls per shard (minActors or not). */
export function spanScan(): { scan: number; calls: number } {
  return { scan: GROUP_SCAN_ROWS / SPAN_SCAN_SPLIT, calls: GROUP_PAGE_CALLS * SPAN_SCAN_SPLIT };
}

/**
 * Rows one group_page (or a view's filter) call scans of a window's or view's listing, and the calls
 * per shard, for a filter: with minActors as many as over a span (a window's row with its actor count
 * weighs ~18 k instructions: 1 000 of them ~20 M).
 */
export function groupScan(minActors: number | undefined): { scan: number; calls: number } {
  return minActors ? spanScan() : { scan: GROUP_SCAN_ROWS, calls: GROUP_PAGE_CALLS };
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
