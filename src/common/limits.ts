/**
 * Bounds shared by several features. Every numeric rule of the API is defined once, in this file or in
 * a feature's `*.limits.ts`, and the DTO decorators, their OpenAPI schema, the compiled checks and the
 * maths all read it from there. src/common/limits.spec.ts pins the values the API contract promises.
 */

/** An inclusive range. */
export interface Bounds {
  readonly min: number;
  readonly max: number;
}

/** Characters of a name that goes into Redis key names (board, window, counter, stats type). */
export const NAME_LENGTH_CHARS: Bounds = { min: 1, max: 64 };

/** Characters (code points) of an item or user id. */
export const ID_LENGTH_CHARS: Bounds = { min: 1, max: 128 };

/** Items one page may hold, and the default of the list routes (counters, stats pairs). */
export const PAGE_LIMIT_ITEMS: Bounds = { min: 1, max: 1000 };
export const DEFAULT_LIST_PAGE_ITEMS = 100;

/** Position a page may start at. */
export const PAGE_OFFSET_ITEMS: Bounds = { min: 0, max: 1_000_000 };

/** Unix seconds accepted anywhere: up to the year 2286, which keeps every time far inside 2^53 ms. */
export const UNIX_SEC: Bounds = { min: 0, max: 9_999_999_999 };

/**
 * Calls one function call may take by default to cross the snapshot boundaries it meets first, each
 * storing a page of 500 rows of a listing (snapshot_rows_lib's PAGED) or listings of about 1 000 rows in
 * all (snapshot_lib's ROWS_PER_CALL): a write naming 8 segments of 8 snapshotted windows meets at most 72
 * listings of 1 000 rows, 144 calls, and applies in one more. Past it the request is a 503
 * WINDOW_DRAINING, nothing applied. The setting CROSSING_CALLS_PER_REQUEST (common/config.ts) takes this default.
 */
export const CROSSING_CALLS_PER_REQUEST = 200;

/** How far ahead of our clock an event's or sample's `at` may be (clock skew between clients and us). */
export const MAX_FUTURE_SKEW_SEC = 5;

/** A duration: positive, and at most 400 days (far beyond any sensible window, well inside 2^53 ms). */
export const DURATION_SEC: Bounds = { min: 1, max: 400 * 86400 };

/**
 * How long a Cluster write's own idempotency key is kept: longer than ioredis can take to re-send a
 * command whose connection closed (16 redirections, each at most a 2 s connect and a 100 ms delay).
 */
export const RESEND_GUARD_MS = 60_000;
/**
 * The Idempotency-Retention header (seconds): how long a keyed write's answer must be kept when the
 * client needs less than IDEMPOTENCY_TTL_SEC (its own retries within a call's deadline). At most the
 * contract's 24 h; the stored answer is kept min(this, IDEMPOTENCY_TTL_SEC).
 */
export const IDEMPOTENCY_RETENTION_SEC = { min: 1, max: 86_400 };
