import type { Bounds } from '../../../common/limits';

/**
 * Largest |tiebreak| a record carries (the same exact-integer bound as a score). A mark
 * (tiebreak_lib.lua) shifts it into [0, 2 x 10^15]: 16 decimal digits, exact in a double.
 */
export const TIEBREAK_BOUND = 1_000_000_000_000_000;
export const TIEBREAK_BOUNDS: Bounds = { min: -TIEBREAK_BOUND, max: TIEBREAK_BOUND };
