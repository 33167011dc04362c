/**
 * One message read from a source: its identity and its payload. `id` is "<hi>-<lo>", ascending in the
 * source's order (a Redis stream entry id as it is; a JetStream stream sequence as "<seq>-0"), so the
 * apply script can tell a message it has seen from a new one.
 */
export interface SourceMessage {
  id: string;
  payload: string;
}

/**
 * A stream the service counts events from. Only the instance holding the source's lease calls it,
 * one call at a time, so messages arrive in id order: `next` first answers whatever earlier holders
 * read but never acknowledged (oldest first), then new messages. A Kafka source would be one more
 * implementation: `next` polls a partition assigned to this consumer, the id is
 * "<partition>-<offset>" tracked per partition, `ack` commits offsets (see docs/ingest.md).
 */
export interface IngestSource {
  /** Connects and prepares the consumer (group, durable consumer), ready to read from the oldest unacknowledged message. */
  open(): Promise<void>;
  /** Up to `max` messages in id order, waiting at most `waitMs` when none is there (0: not at all). */
  next(max: number, waitMs: number): Promise<SourceMessage[]>;
  /** Acknowledges messages applied (or found applied): the source never delivers them again. */
  ack(messages: SourceMessage[]): Promise<void>;
  /**
   * Writes a message to the dead letters with the reason and acknowledges it, such that a message
   * dead-lettered twice (redelivered after a crash) is written once. True when written by this call.
   */
  deadLetter(message: SourceMessage, reason: string): Promise<boolean>;
  /** Messages not yet applied: not delivered yet, or delivered and not acknowledged. */
  lag(): Promise<number>;
  close(): Promise<void>;
}
