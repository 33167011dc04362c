import { Bounds } from '../../../common/limits';

/** Views (decay, hot, rising) of one board. */
export const VIEWS_PER_BOARD: Bounds = { min: 0, max: 8 };

/** hot: the default τ (seconds of age worth a factor 10 of score: Reddit's 45 000 s) and the epoch its time term counts from (Reddit's). */
export const DEFAULT_HOT_TAU_SEC = 45_000;
export const HOT_EPOCH_SEC = 1_134_028_003;

/** rising: least observed count of a listed item (below it, a ratio on tiny counts is noise). */
export const RISING_MIN_COUNT: Bounds = { min: 1, max: 1_000_000_000 };
export const DEFAULT_RISING_MIN_COUNT = 5;

/**
 * decay: the landmark of forward decay moves every DECAY_REBASE_HALF_LIVES half-lives (an exact power-of-two
 * rescale of the view); a window may span at most DECAY_MAX_HALF_LIVES_PER_WINDOW half-lives, so the oldest
 * live slot weighs at least 2^-512 of the newest and every weight stays a normal double (2^±1022).
 */
export const DECAY_REBASE_HALF_LIVES = 256;
/**
 * Members one script call moves to the new landmark while a decay view rebases (a chunk, like expiry's:
 * about 0.5 ms); reads merge the two scales meanwhile, so the rebase never blocks Redis for a whole view.
 */
export const DECAY_REBASE_CHUNK = 256;
export const DECAY_MAX_HALF_LIVES_PER_WINDOW = 512;
/** What an item's decayed sum may hold once its last slot is taken out, relative to that slot's share: rounding only. */
export const DECAY_ZERO_TOLERANCE = 1e-9;
