/** One connected stream client: the transport (SSE over a socket in production). */
export interface LiveClient {
  /** Writes one frame unless the response ended or was destroyed (false then: the client is gone). */
  write(frame: Buffer): boolean;
  /** Bytes Node holds for this client beyond what its socket took. */
  readonly bufferedBytes: number;
  /** True when the client read since the last call (its socket took a write meanwhile, or holds nothing unsent). */
  takeProgress(): boolean;
  /** Ends the stream (cut when bytes are still waiting: a stalled reader never takes them). */
  close(): void;
  /** Cuts the connection at once. */
  destroy(): void;
}
