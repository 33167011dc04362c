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
export const INGEST_RETRY_MS = { min: 10, max: 60_000, default: 250 };
/**
 * Most bytes of dead letters a Redis dead-letter stream keeps, counted as each one's fields plus
 * DEAD_LETTER_ENTRY_OVERHEAD_BYTES: the oldest go past it (redis-stream.source.ts). Redis holds them
 * in at most about DEAD_LETTER_HELD_BYTES (largest dead letters, each a stream node of its own);
 * small ones, most, pack tighter. Where 10^6 x 64 KB (about 64 GB) could pile up before.
 */
export const DEAD_LETTER_BYTES = 12 * 1024 * 1024;
/** What one dead letter is counted beyond its fields' bytes: field names, entry id and stream overhead. */
export const DEAD_LETTER_ENTRY_OVERHEAD_BYTES = 64;
/**
 * What Redis holds at most for DEAD_LETTER_BYTES of the largest dead letters (MEMORY USAGE measured
 * 5.4 KB each for 4.3 KB counted: the allocator rounds up a node of one entry), the figure
 * test/e2e/ingest-bounds.e2e-spec.ts checks.
 */
export const DEAD_LETTER_HELD_BYTES = 16 * 1024 * 1024;
/** Longest original payload kept in a dead letter, bytes (a longer one is cut to this). */
export const DEAD_LETTER_PAYLOAD_BYTES = 4 * 1024;
/** Longest reason kept in a dead letter, bytes. */
export const DEAD_LETTER_REASON_BYTES = 512;
/** Largest amount of one event, as on HTTP. */
export const MAX_EVENT_AMOUNT = 1_000_000;
/** JetStream ack wait of the durable consumer: an unacked message is redelivered after it, ms. */
export const NATS_ACK_WAIT_MS = 30_000;
