import { Bounds } from '../common/limits';

/** Largest |value| recorded: keeps sum and sum of squares far from overflowing a double. */
export const MAX_ABS_VALUE = 1e100;
export const VALUE_RANGE: Bounds = { min: -MAX_ABS_VALUE, max: MAX_ABS_VALUE };

/** Characters of a stats context (a route pattern such as `GET /boards/:board/top` must fit). */
export const CONTEXT_LENGTH_CHARS: Bounds = { min: 1, max: 200 };

/** Contexts the slowest list keeps; a read of it asks for at most that many. */
export const SLOWEST_KEPT_CONTEXTS = 100;
export const SLOWEST_LIMIT_ITEMS: Bounds = { min: 1, max: SLOWEST_KEPT_CONTEXTS };
export const DEFAULT_SLOWEST_ITEMS = 10;

/** Most pruning steps (each at most STATS_INDEX_PRUNE_BATCH entries) one pruner pass takes; the next pass goes on. */
export const MAX_PRUNE_STEPS_PER_PASS = 100;
