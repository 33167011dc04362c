/**
 * A write's answer, and whether it is the stored answer of an earlier request with the same
 * Idempotency-Key (the services return it; edge/retry-safe.ts reads the header and sends it).
 */
export interface WriteAnswer<T> {
  replayed: boolean;
  body: T;
}
