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
/** Dead-letter streams are trimmed (approximately) to this many entries. */
export const DEAD_LETTER_MAXLEN = 1_000_000;
/** Longest original payload kept in a dead letter, bytes (a longer one is cut, the reason says so). */
export const DEAD_LETTER_PAYLOAD_BYTES = 64 * 1024;
/** Largest amount of one event, as on HTTP. */
export const MAX_EVENT_AMOUNT = 1_000_000;
/** JetStream ack wait of the durable consumer: an unacked message is redelivered after it, ms. */
export const NATS_ACK_WAIT_MS = 30_000;
