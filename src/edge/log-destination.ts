import { writeSync } from 'node:fs';
import { hostname } from 'node:os';
import type { DestinationStream } from 'pino';
import { LOG_PENDING_MAX_BYTES, LOG_RETRY_AFTER_MS } from './edge.limits';

/** The turn buffer's size: a turn's lines up to it are encoded there, a larger turn's in a buffer of their own. */
const TURN_BUFFER_BYTES = 64 * 1024;

/**
 * The service's log output: the lines of one event-loop turn leave in one synchronous write at the end of
 * the turn. pino's default destination hands every few lines to a thread-pool write, and on a 2-core VM
 * the wake-ups cost more than building the lines: 7-8 µs of CPU per line against 2.3-2.7 here, about a
 * tenth of an increment's CPU with its access line (docs/benchmarks.md, "The access line written once per
 * turn"). A full blocking pipe slows the service to its reader's pace, as pino's `sync: true` does; a
 * non-blocking one (EAGAIN) never blocks: lines wait, at most LOG_PENDING_MAX_BYTES of them, later ones are
 * dropped and counted, and a line says how many once the output takes lines again. A reader gone (EPIPE)
 * drops them, as pino does. `flushSync` writes what is pending now; the process's exit calls it.
 */
export class TurnBatchedDestination implements DestinationStream {
  private pending: string[] = [];
  /** The bytes of a write the output took only part of: they go first, so lines stay whole and in order. */
  private unwritten?: Buffer;
  private pendingBytes = 0;
  /** Where a turn's lines are encoded (pendingText), made at the first flush. */
  private turnBuffer?: Buffer;
  private droppedLines = 0;
  private scheduled = false;
  private retryTimer?: NodeJS.Timeout;
  private readonly onExit = () => this.flushSync();

  constructor(private readonly fd: number) {
    process.once('exit', this.onExit);
  }

  write(line: string): void {
    const bytes = Buffer.byteLength(line);
    if (this.pendingBytes + (this.unwritten?.length ?? 0) + bytes > LOG_PENDING_MAX_BYTES) {
      this.droppedLines++;
      return;
    }
    this.keep(line, bytes);
    if (!this.scheduled && this.retryTimer === undefined) {
      this.scheduled = true;
      setImmediate(() => {
        this.scheduled = false;
        this.flushSync();
      });
    }
  }

  /** Writes every pending line now (what the output takes of them); never throws. */
  flushSync(): void {
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    // What the output refused goes first, alone: while it refuses, a retry copies nothing.
    if (this.unwritten !== undefined && !this.writeOrKeep(this.unwritten)) return;
    if (this.pending.length === 0 && this.droppedLines === 0) return;
    if (this.droppedLines > 0) this.keep(droppedLine(this.droppedLines));
    const text = this.pendingText();
    this.pending = [];
    this.pendingBytes = 0;
    this.droppedLines = 0;
    this.writeOrKeep(text);
  }

  private keep(line: string, bytes = Buffer.byteLength(line)): void {
    this.pending.push(line);
    this.pendingBytes += bytes;
  }

  /**
   * The pending lines' bytes, encoded into the turn buffer (kept from turn to turn) when they fit it:
   * a new buffer per turn cost the access line of every request its bytes once more. One join, then one
   * write: 27-30 ns a line, against 40-59 for a new buffer and 44 for a write per line (Node 26).
   */
  private pendingText(): Buffer {
    if (this.pendingBytes > TURN_BUFFER_BYTES) return Buffer.from(this.pending.join(''));
    this.turnBuffer ??= Buffer.allocUnsafe(TURN_BUFFER_BYTES);
    return this.turnBuffer.subarray(0, this.turnBuffer.write(this.pending.join(''), 0));
  }

  /** Stops the exit hook (an app closed in a process that goes on, as tests do). */
  close(): void {
    this.flushSync();
    clearTimeout(this.retryTimer);
    process.removeListener('exit', this.onExit);
  }

  /** Bytes written before the output refused more (EAGAIN), or all of them; a lost reader counts as written. */
  private writeAll(text: Buffer): number {
    let offset = 0;
    while (offset < text.length) {
      try {
        offset += writeSync(this.fd, text, offset);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'EAGAIN' || code === 'EWOULDBLOCK') return offset;
        return text.length;
      }
    }
    return offset;
  }

  /** Writes `text`; what the output refuses is kept for a retry. Whether all of it left. */
  private writeOrKeep(text: Buffer): boolean {
    const written = this.writeAll(text);
    if (written === text.length) {
      this.unwritten = undefined;
      return true;
    }
    // Not a copy, though it may be in the turn buffer: flushSync encodes no new lines there before this is all out.
    this.unwritten = text.subarray(written);
    this.retryTimer = setTimeout(() => this.flushSync(), LOG_RETRY_AFTER_MS);
    this.retryTimer.unref();
    return false;
  }
}

/** The line written once the output takes lines again, in pino's shape (level 40: warn). */
function droppedLine(lines: number): string {
  const message = `${lines} log lines dropped: the log output took no more for a while`;
  const line = {
    level: 40,
    time: Date.now(),
    pid: process.pid,
    hostname: hostname(),
    droppedLines: lines,
    msg: message,
  };
  return `${JSON.stringify(line)}\n`;
}
