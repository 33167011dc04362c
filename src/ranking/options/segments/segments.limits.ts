import type { Bounds } from '../../../common/limits';

/**
 * Segments: how many a board may declare as live at once (`segments.max`, per shard: see docs/api.md),
 * and how many one event may name (each costs one slot hash field and one zset entry per window).
 */
export const SEGMENTS_MAX: Bounds = { min: 1, max: 10_000 };
export const SEGMENTS_PER_EVENT: Bounds = { min: 1, max: 8 };
/**
 * Segments due one scheduled expiry call drains at most (their fields within EXPIRE_CHUNK, each segment
 * weighed within the call's units: expire.lua): a bound on the segments it visits even when reads
 * already drained them (each visit is a few commands per window).
 */
export const SEGMENTS_EXPIRED_PER_CALL = 64;

/**
 * Take-back calls (each an unlike's, within WRITE_COST_PER_CALL) one scheduler visit of a board sends
 * to finish the take-backs a stopped instance left recorded (LikeTakeBacks.sweep): a take-back of a
 * like in 8 segments is at most 8 calls, so a visit finishes about 6 of them; the rest, the next visit.
 */
export const TAKE_BACK_CALLS_PER_VISIT = 50;

/**
 * Work of one segments page on one shard (segment_page: a name looked at weighs 1, a segment listed 1
 * per window, 5 per window when drained first): about 5 ms of Redis at most.
 */
export const SEGMENT_PAGE_UNITS_PER_CALL = 2_000;

/**
 * Work of one segments page over all its shards (about 20 ms of Redis): each shard's call gets its
 * share (at least one drained segment's), so a page of a 64-shard board lists fewer names.
 */
export const SEGMENT_PAGE_UNITS_PER_REQUEST = 6_000;

/** Units of a segments page that spend one read of its client's read rate budget (READ_RATE_LIMIT_*). */
export const SEGMENT_PAGE_UNITS_PER_READ = 200;
