import { Bounds } from '../common/limits';

/** Rows a stream watches (`limit` of GET /boards/:board/stream). */
export const STREAM_ROWS: Bounds = { min: 1, max: 100 };
export const DEFAULT_STREAM_ROWS = 10;

/**
 * The rows one poll reads for a watched window: a client's `limit` rounded up to the next of these.
 * Clients of every `limit` in a bucket share one read (each still gets its own row count), so a board
 * costs at most (windows + views) x 4 top reads per tick whatever the `limit`s its clients ask for.
 */
export const STREAM_READ_ROWS = [10, 25, 50, 100] as const;

/** A comment line every this long keeps idle streams open through proxies that drop silent connections. */
export const STREAM_HEARTBEAT_MS = 15_000;

/** What a browser waits before reconnecting a dropped stream (the SSE `retry` field). */
export const STREAM_RETRY_MS = 1000;

/**
 * Bytes Node may hold for one stream client beyond what its socket took (the kernel's send buffer is
 * full: the client reads nothing or too slowly). Past it the client is dropped: a stream frame is at
 * most about 60 KB (100 rows of 128-character ids of 4-byte characters), so this is about four frames
 * behind, and 2 000 stalled streams hold at most 0.5 GB of Node memory instead of growing for ever.
 */
export const STREAM_MAX_BUFFERED_BYTES = 256 * 1024;

/**
 * Redis commands one poll tick may plan (shards x (1 + watched groups) per board); the boards past it
 * wait for the next ticks, in turn (round-robin). 256 per 250 ms tick is about 1 000 cheap commands
 * a second: the poller can never take Redis from client requests, while 5 000 watched boards are
 * each still polled every few seconds.
 */
export const STREAM_POLL_COMMANDS_PER_TICK = 256;

/** Boards one tick polls at once: the poller's own commands in flight stay a small share of the shed bound. */
export const STREAM_POLL_CONCURRENCY = 8;

/**
 * The poller skips its tick (and stops a tick under way) while this share of REDIS_MAX_PENDING_COMMANDS
 * is unanswered: requests are shed at the full bound, so the poller yields to them well before.
 */
export const STREAM_POLL_SHED_SHARE = 0.25;

/**
 * Reads a stream costs from its client's read budget (READ_RATE_LIMIT_PER_SEC) when it opens, per shard
 * of its board: its snapshot and the polls it adds. At most the read burst (a stream must be able to open).
 */
export const STREAM_READ_COST_PER_SHARD = 10;

/** One warning line per kind of stream incident (polls failing, ticks shed, clients dropped) at most this often. */
export const STREAM_INCIDENT_LOG_INTERVAL_MS = 60_000;
