import { Bounds } from '../common/limits';

/** Largest |count| of one increment; a count is also never zero. */
export const MAX_ABS_COUNT = 1_000_000;
export const COUNT_RANGE: Bounds = { min: -MAX_ABS_COUNT, max: MAX_ABS_COUNT };
export const DEFAULT_COUNT = 1;

export { MAX_FUTURE_SKEW_SEC } from '../common/limits';

/** Largest precision accepted in config: one year. */
export const MAX_PRECISION_SEC = 365 * 86400;

/** Characters of a requested precision (seconds or a duration such as 5s): longer is never a valid one. */
export const MAX_PRECISION_CHARS = 16;

/**
 * How long a count hash outlives its newest slice's retention before Redis expires it. The expiry is
 * garbage collection: reads and the cleaner apply the retention by the caller's clock, while Redis
 * counts the TTL by its own, so an instance whose clock lags the writer's by less than this still
 * reads every slice live by its clock.
 */
export const COUNTER_EXPIRY_GRACE_MS = 60_000;
