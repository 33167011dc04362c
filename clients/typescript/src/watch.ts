import { errorOfAnswer, TrendboardError } from './errors.js';
import type { Transport } from './transport.js';
import type { ListedItem } from './types.js';

/** A listing as the live stream sends it (GET /boards/:board/stream); rows carry previousRank. */
export interface LiveListing {
  board: string;
  window: string;
  /** The metric the rows rank by, when the stream named one (WatchOptions.metric). */
  metric?: string;
  from: number;
  to: number;
  /** The board's change version; also the event's id. */
  version: number;
  /** On a board with metrics each row carries every metric's count in `metrics`. */
  items: Array<ListedItem & { previousRank: number | null; metrics?: Record<string, number> }>;
}

/** `snapshot`: the whole listing (first on every connection, also after a reconnect); `top`: it changed. */
export interface TopEvent {
  type: 'snapshot' | 'top';
  id: string;
  listing: LiveListing;
}

export interface WatchOptions {
  window?: string;
  /** Rows watched, 1-100 (default 10). */
  limit?: number;
  /**
   * The metric the rows rank by, on a board declaring `metrics` (default its first); every row carries
   * each metric's count in `metrics`. A metric the board does not declare is thrown (400 UNKNOWN_METRIC).
   */
  metric?: string;
  /** Ends the iteration (the loop simply finishes; nothing is thrown). */
  signal?: AbortSignal;
  /** Resume point, e.g. the id of the last event seen by an earlier iteration. */
  lastEventId?: string;
  /**
   * Silence after which the connection is taken for dead and reopened (default 45 000 ms): the
   * service sends a heartbeat comment every 15 s, so this is three missed heartbeats.
   */
  idleTimeoutMs?: number;
  /** Reconnects in a row that may fail before the iteration throws (default: never gives up). */
  maxReconnects?: number;
}

/** One dispatched event-stream frame (HTML's "dispatch the event"), with the fields it set. */
interface Frame {
  event: string;
  /** Undefined for a frame that only set `id` or `retry` (the service's opening `retry:`). */
  data?: string;
  id?: string;
  retry?: number;
}

/**
 * The live top of a window as an async iterator. Any end of a connection the caller did not ask for
 * (a reset, the service ending the stream at a lifetime limit or at shutdown, silence past
 * idleTimeoutMs, a 503 or 429) reopens it with `Last-Event-ID`, after the service's `retry:` delay
 * the first time and exponential backoff with jitter when reopening keeps failing (Retry-After
 * honoured). An answer the error table calls not retryable (404 unknown board, 401...) is thrown.
 */
export async function* watchTop(
  transport: Transport,
  board: string,
  options: WatchOptions = {},
): AsyncGenerator<TopEvent, void, undefined> {
  const { signal, idleTimeoutMs = 45_000, maxReconnects = Infinity } = options;
  const { sleep, baseDelayMs, maxDelayMs, random } = transport.settings;
  const path = '/boards/{board}/stream';
  const { window, limit, metric } = options;
  const url = transport.url(path, { board }, { window, limit, metric });
  let lastEventId = options.lastEventId;
  let serverRetryMs = baseDelayMs;
  let failures = 0;
  /** Whether a connection was open before: later ones are reconnects. */
  let connected = false;
  while (!signal?.aborted) {
    const connection = new AbortController();
    const abort = () => connection.abort();
    signal?.addEventListener('abort', abort);
    let idle: ReturnType<typeof setTimeout> | undefined;
    const stillAlive = () => {
      clearTimeout(idle);
      idle = setTimeout(abort, idleTimeoutMs);
    };
    let failure: TrendboardError | undefined;
    try {
      stillAlive();
      const headers = transport.headersFor(path, { accept: 'text/event-stream' });
      if (lastEventId !== undefined) headers['last-event-id'] = lastEventId;
      const fetchNow = transport.settings.fetch;
      const response = await fetchNow(url, { headers, signal: connection.signal });
      if (!response.ok) throw await errorOfAnswer(response);
      if (!response.body || !/^text\/event-stream/.test(response.headers.get('content-type') ?? '')) {
        throw new TrendboardError({
          code: 'UNEXPECTED_ANSWER',
          status: response.status,
          message: `${path}: not an event stream`,
        });
      }
      connected = true;
      for await (const frame of framesOf(response.body, stillAlive)) {
        if (frame.retry !== undefined) serverRetryMs = frame.retry;
        if (frame.id !== undefined) lastEventId = frame.id;
        if ((frame.event !== 'snapshot' && frame.event !== 'top') || frame.data === undefined) continue;
        failures = 0;
        yield { type: frame.event, id: frame.id ?? '', listing: JSON.parse(frame.data) as LiveListing };
      }
      // The service ended the stream (a lifetime limit, its shutdown): reopen it like a lost one.
    } catch (error) {
      if (signal?.aborted) return;
      if (error instanceof TrendboardError) {
        // After a lost connection the service may still count it against this client's stream cap
        // until it notices the socket is gone: a STREAM_LIMIT then is our own ghost, worth a retry.
        const ghost = error.code === 'STREAM_LIMIT' && connected;
        if (!error.retryable && !ghost) throw error;
        failure = error;
      }
      // Anything else is the connection failing or going silent: reopened below.
    } finally {
      clearTimeout(idle);
      signal?.removeEventListener('abort', abort);
      // Also when the caller leaves the loop early: the response body is released.
      connection.abort();
    }
    if (failures >= maxReconnects) {
      throw (
        failure ??
        new TrendboardError({ code: 'CONNECTION_ERROR', status: 0, message: `${path}: ${failures} reconnects failed` })
      );
    }
    const wait =
      failure?.retryAfterSec !== undefined
        ? failure.retryAfterSec * 1000
        : failures === 0
          ? serverRetryMs
          : Math.floor(random() * Math.min(maxDelayMs, baseDelayMs * 2 ** failures));
    failures++;
    try {
      await sleep(wait, signal);
    } catch {
      return; // aborted while waiting
    }
  }
}

/** Parses an event stream (the HTML Living Standard's rules) from a fetch body, frame by frame. */
export async function* framesOf(body: ReadableStream<Uint8Array>, onBytes: () => void): AsyncGenerator<Frame> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let frame: Partial<Frame> = {};
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      onBytes();
      buffer += decoder.decode(value, { stream: true });
      let match: RegExpExecArray | null;
      // A lone CR at the end may be the first half of a CRLF: wait for the next chunk.
      while ((match = /\r\n|\r(?!$)|\n/.exec(buffer)) !== null) {
        const line = buffer.slice(0, match.index);
        buffer = buffer.slice(match.index + match[0].length);
        if (line === '') {
          if (Object.keys(frame).length > 0) {
            yield {
              event: frame.event ?? 'message',
              data: frame.data?.replace(/\n$/, ''),
              id: frame.id,
              retry: frame.retry,
            };
          }
          frame = {};
          continue;
        }
        if (line.startsWith(':')) continue; // a comment: the heartbeat
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'data') frame.data = `${frame.data ?? ''}${value}\n`;
        else if (field === 'event') frame.event = value;
        else if (field === 'id' && !value.includes('\0')) frame.id = value;
        else if (field === 'retry' && /^\d+$/.test(value)) frame.retry = Number(value);
      }
    }
  } finally {
    reader.releaseLock();
  }
}
