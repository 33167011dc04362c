/** Bounds of stream ingest: declarations, batches, dead letters. */

/** Most sources declared at once (each holds a connection and a loop on the instance that leads it). */
export const MAX_INGEST_SOURCES = 64;
/** Most events one batch holds (a script call per board shard applies its part). */
export const INGEST_BATCH_MESSAGES = { min: 1, max: 1000, default: 1000 };
/**
 * Most event-window writes one apply call makes: a board shard's part of a batch goes in calls of at
 * most this many events x the board's windows, one after another. A call holds Redis for about 1-2.5
 * µs per write (benchmarks.md), so about 1.5 ms at this bound: no call of a 1 000-event batch passes
 * the 5 ms a Redis call may take (issue #24), and an HTTP request queued behind one waits no longer.
 */
export const INGEST_APPLY_WRITES = 600;
/** Most sources applying a batch at once on one instance: the rest wait, so HTTP keeps its share of Redis. */
export const INGEST_IN_FLIGHT = { min: 1, max: 64, default: 4 };
/** How often an instance reads the declarations (starts and stops sources), ms. */
export const INGEST_REFRESH_MS = { min: 100, max: 60_000, default: 2000 };
/** How long a source's lease lasts without renewal, ms; renewed every third of it (a JetStream pull may wait 1 s). */
export const INGEST_LEASE_MS = { min: 3000, max: 120_000, default: 10_000 };
/** Longest wait for new messages in one read, ms (JetStream fetches take at least 1 s). */
export const INGEST_WAIT_MS = { min: 10, max: 10_000, default: 1000 };
/** Wait after a failed batch (Redis or the source away) before it is tried again, ms. */
export const INGEST_RETRY_MS = 250;
/**
 * Most bytes a Redis dead-letter stream holds: its entries are bounded (payload and reason cut, the
 * source name and message id short) and the stream is trimmed to the entries that fit, so a source
 * fed nothing but bad messages keeps about 16 MiB, not 10^6 x 64 KB. An operator keeps more by
 * reading the dead letters out (they are for inspection, not replay).
 */
export const DEAD_LETTER_STREAM_BYTES = 16 * 1024 * 1024;
/** Longest original payload kept in a dead letter, bytes (a longer one is cut to this). */
export const DEAD_LETTER_PAYLOAD_BYTES = 4 * 1024;
/** Longest reason kept in a dead letter, bytes. */
export const DEAD_LETTER_REASON_BYTES = 512;
/**
 * Most bytes one dead letter takes as Redis holds it: payload, reason, source name, id and field
 * names (about 4.8 KB at most) in a stream node of its own (it passes stream-node-max-bytes, 4 KB),
 * rounded up by the allocator: 5.4 KB measured (MEMORY USAGE of 3 449 such entries: 18.7 MB).
 */
export const DEAD_LETTER_ENTRY_BYTES = 6 * 1024;
/**
 * Dead-letter streams are trimmed (approximately: Redis may keep one more node of its entries, at
 * most 100 by default) to this many entries: DEAD_LETTER_STREAM_BYTES of the largest dead letters.
 */
export const DEAD_LETTER_MAXLEN = Math.floor(DEAD_LETTER_STREAM_BYTES / DEAD_LETTER_ENTRY_BYTES);
/** Largest amount of one event, as on HTTP. */
export const MAX_EVENT_AMOUNT = 1_000_000;
/** JetStream ack wait of the durable consumer: an unacked message is redelivered after it, ms. */
export const NATS_ACK_WAIT_MS = 30_000;
