/**
 * Slots of a rolling window of a max / min / last board: expiry recomputes an item from every live
 * slot (one HGET each, at least one item a call), so this bounds the longest expire call (about 1 000
 * reads, like EXPIRE_CHUNK's 100 fields with their hooks: docs/benchmarks.md).
 */
export const MAX_AGGREGATE_SLOTS = 1_000;

/**
 * Cost units a score adds to each results place of a write on a max / min / last board, beyond the
 * place's one unit (src/ranking/core/write-cost.ts): it reads what its slot holds first, and on last
 * the window's newest slot of the item (2.5 and 3.5 units a place in all, bench/write-cost.ts).
 */
export const AGGREGATE_SCORE_WRITE_COST = { max: 1.5, min: 1.5, last: 2.5 } as const;

/** Why a board may not take its aggregate, or a write does not apply to it. */
export const AGGREGATE_MESSAGES = {
  viewsNeedSum: (board: string, aggregate: string) =>
    `views (decay, hot, rising) weigh sums of events: board "${board}" would aggregate by ${aggregate}; drop the views or use aggregate sum`,
  aggregateTooManySlots: (board: string, aggregate: string, window: string, max: number) =>
    `windows.${window}: board "${board}" aggregates by ${aggregate}, whose rolling windows hold at most ${max} slots (period / interval): expiry recomputes an item from every live slot; use a longer interval`,
  aggregateMismatch: (board: string, aggregate: string, write: string) =>
    aggregate === 'sum'
      ? `board "${board}" sums its events: ${write} takes no score (use increment, or a board with aggregate max, min or last)`
      : `board "${board}" keeps the ${aggregate} score of each item: ${write} does not apply (POST /boards/${board}/items/:item/score records one)`,
};
