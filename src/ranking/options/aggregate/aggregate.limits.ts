/**
 * Slots of a rolling window of a max / min / last board: expiry recomputes an item from every live
 * slot (one HGET each, at least one item a call), so this bounds the longest expire call (about 1 000
 * reads, like EXPIRE_CHUNK's 100 fields with their hooks: docs/benchmarks.md).
 */
export const MAX_AGGREGATE_SLOTS = 1_000;

/**
 * Cost units a score adds to each results place of a write on a max / min / last board, beyond the
 * place's one unit (src/ranking/core/write-cost.ts): it reads what its slot holds, writes it when the
 * score replaces it, and reads the window's score before and after; on last it also reads and writes
 * the item's newest slot (8 and 11 units a place in all). Weighed in script commands at the harness's
 * 0.8 a unit (WRITE_CALL_COMMANDS), the costliest path, not the common one: a place of a new item ran
 * 6 commands on max and 8 on last (test/integration/parts/score-write-commands.int.ts), where
 * 2.5 and 3.5 units let 64 scores on 8 windows run 3 300 to 4 100 commands in one call, and late
 * scores 1 300 to 2 000 by where the clock fell in each window's slots.
 */
export const AGGREGATE_SCORE_WRITE_COST = { max: 7, min: 7, last: 10 } as const;

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
