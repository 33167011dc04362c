import { errorOfAnswer, TrendboardError } from './errors.js';

/** What a client needs to know to call the service; every field but baseUrl has a default. */
export interface ClientOptions {
  /** Where the service answers, e.g. `https://trendboard.example.com` (a path prefix is kept). */
  baseUrl: string;
  /** Sent as `Authorization: Bearer <apiKey>`. */
  apiKey?: string;
  /** Sent instead of apiKey on /admin routes (ADMIN_TOKEN or an admin-scoped key), when given. */
  adminToken?: string;
  /** Any fetch (Node's, a browser's, an instrumented one); default globalThis.fetch. */
  fetch?: typeof fetch;
  /** Extra headers on every request. */
  headers?: Record<string, string>;
  /** One attempt's limit, answer body included (default 10 000 ms). */
  timeoutMs?: number;
  /** A call's limit over all its attempts and waits (default 30 000 ms). */
  deadlineMs?: number;
  /** Attempts after the first (default 5); 0 turns retries off. */
  maxRetries?: number;
  /** Backoff: attempt n waits a random time in [0, min(maxDelayMs, baseDelayMs * 2^n)) (defaults 100, 5 000). */
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** How waiting is done; tests pass one that moves a fake clock instead of the real one. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** [0, 1) source for the jitter (default Math.random). */
  random?: () => number;
}

/** Per-call options of every method. */
export interface CallOptions {
  signal?: AbortSignal;
  /**
   * A write's Idempotency-Key (default: a new random UUID per call, reused by its retries, whose answer
   * the service keeps only for those retries: see retentionOfOwnKeys). A key of yours is kept the
   * service's full IDEMPOTENCY_TTL_SEC, for repeats of your own (after a restart, say).
   */
  idempotencyKey?: string;
  headers?: Record<string, string>;
}

/**
 * How a call may be repeated after a failure whose outcome is unknown:
 * - 'safe':    reads, PUT of a board (the same PUT twice is the same board), and writes that carry an
 *              Idempotency-Key (the service answers a repeat from its stored answer, applying nothing);
 * - 'unsafe':  the rest (a new API key, an admin DELETE): repeated only when the service said it
 *              applied nothing (applied: 'no'), never after a lost answer.
 */
export type Repeat = 'safe' | 'unsafe';

export interface RouteCall {
  method: 'GET' | 'PUT' | 'POST' | 'DELETE';
  /** The route pattern, e.g. `/boards/{board}/top`. */
  path: string;
  params?: Record<string, string>;
  query?: object;
  body?: unknown;
  repeat: Repeat;
  /** Sends an Idempotency-Key (the service's retry-safe writes). */
  keyed?: boolean;
  /** How the answer is read (default json; 204 is always undefined). */
  answer?: 'json' | 'text';
}

type Settings = Required<Omit<ClientOptions, 'apiKey' | 'adminToken'>> & Pick<ClientOptions, 'apiKey' | 'adminToken'>;

/** Sends a route's requests: URL, headers, per-attempt timeout, and the retry loop. */
export class Transport {
  readonly settings: Settings;

  constructor(options: ClientOptions) {
    this.settings = {
      fetch: (...args) => globalThis.fetch(...args),
      headers: {},
      timeoutMs: 10_000,
      deadlineMs: 30_000,
      maxRetries: 5,
      baseDelayMs: 100,
      maxDelayMs: 5_000,
      sleep: sleepFor,
      random: Math.random,
      ...options,
      baseUrl: options.baseUrl.replace(/\/+$/, ''),
    };
  }

  /** The URL of a route with its parameters filled in and its query (undefined fields left out). */
  url(path: string, params: Record<string, string> = {}, query: object = {}): string {
    const filled = path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(params[name]));
    const search = new URLSearchParams();
    for (const [name, value] of Object.entries(query)) if (value !== undefined) search.set(name, String(value));
    const text = search.toString();
    return `${this.settings.baseUrl}${filled}${text ? `?${text}` : ''}`;
  }

  headersFor(path: string, extra: Record<string, string> = {}): Record<string, string> {
    const { apiKey, adminToken } = this.settings;
    const secret = path.startsWith('/admin/') ? (adminToken ?? apiKey) : apiKey;
    // Lower-cased: a caller's `Authorization` must replace ours, not be sent beside it.
    return {
      accept: 'application/json',
      ...(secret ? { authorization: `Bearer ${secret}` } : {}),
      ...lowerCased(this.settings.headers),
      ...lowerCased(extra),
    };
  }

  async call<T>(route: RouteCall, options: CallOptions = {}): Promise<T> {
    const { signal } = options;
    const url = this.url(route.path, route.params, route.query);
    const headers = this.headersFor(route.path, options.headers);
    // One key per logical call: every retry below sends the same one, so the service applies it once.
    if (route.keyed) Object.assign(headers, this.keyHeaders(options.idempotencyKey));
    const body = route.body === undefined ? undefined : JSON.stringify(route.body);
    if (body !== undefined) headers['content-type'] = 'application/json';
    const deadline = Date.now() + this.settings.deadlineMs;
    for (let attempt = 0; ; attempt++) {
      let failure: TrendboardError;
      try {
        // No attempt outlives the call's deadline.
        const timeoutMs = Math.max(1, Math.min(this.settings.timeoutMs, deadline - Date.now()));
        return await this.attempt<T>(route, url, { method: route.method, headers, body }, timeoutMs, signal);
      } catch (error) {
        if (!(error instanceof TrendboardError)) throw error;
        failure = error;
      }
      const wait = this.waitBeforeRetry(failure, attempt, route.repeat);
      if (wait === undefined || Date.now() + wait > deadline) throw failure;
      await this.settings.sleep(wait, signal);
    }
  }

  /**
   * A keyed write's headers. A key the client makes only guards this call's own retries, all sent
   * within deadlineMs: the service is asked to keep its answer that long and a minute more
   * (Idempotency-Retention), so a backend writing through the client spends a small share of its
   * quota of stored answers per write (QUOTA_IDEMPOTENT_ANSWERS counts answers x time) instead of a
   * whole 24 h answer, and is never cut off at production rates; Redis holds about a minute of them.
   */
  keyHeaders(idempotencyKey: string | undefined): Record<string, string> {
    if (idempotencyKey !== undefined) return { 'idempotency-key': idempotencyKey };
    return {
      'idempotency-key': globalThis.crypto.randomUUID(),
      'idempotency-retention': String(retentionOfOwnKeys(this.settings.deadlineMs)),
    };
  }

  /**
   * Milliseconds to wait before repeating a failed call, or undefined when it must not be repeated:
   * the error table says a repeat cannot help, the call is not safe to repeat and may have been
   * applied, or the retries are used up. Retry-After is honoured as given; otherwise exponential
   * backoff with full jitter (AWS' "full jitter"), which spreads clients that failed together.
   */
  waitBeforeRetry(failure: TrendboardError, attempt: number, repeat: Repeat): number | undefined {
    if (attempt >= this.settings.maxRetries || !failure.retryable) return undefined;
    if (repeat === 'unsafe' && failure.applied !== 'no') return undefined;
    if (failure.retryAfterSec !== undefined) return failure.retryAfterSec * 1000;
    const { baseDelayMs, maxDelayMs, random } = this.settings;
    return Math.floor(random() * Math.min(maxDelayMs, baseDelayMs * 2 ** attempt));
  }

  /** One request: its answer, or a TrendboardError (abort by the caller's signal rethrows its reason). */
  private async attempt<T>(
    route: RouteCall,
    url: string,
    init: RequestInit,
    timeoutMs: number,
    signal?: AbortSignal,
  ): Promise<T> {
    signal?.throwIfAborted();
    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(), timeoutMs);
    const stop = () => timeout.abort();
    signal?.addEventListener('abort', stop);
    try {
      // Called unbound: a browser's fetch refuses to run with `this` set to anything but the window.
      const fetchNow = this.settings.fetch;
      const response = await fetchNow(url, { ...init, signal: timeout.signal });
      if (!response.ok) throw await errorOfAnswer(response);
      if (response.status === 204) return undefined as T;
      // Read inside the try: a connection cut mid-body is a failed attempt like any other.
      const text = await response.text();
      if (route.answer === 'text') return text as T;
      return JSON.parse(text) as T;
    } catch (error) {
      if (error instanceof TrendboardError) throw error;
      signal?.throwIfAborted();
      if (error instanceof SyntaxError) {
        throw new TrendboardError({
          code: 'UNEXPECTED_ANSWER',
          status: 200,
          message: `${route.path}: ${error.message}`,
        });
      }
      const timedOut = timeout.signal.aborted;
      throw new TrendboardError({
        code: timedOut ? 'TIMEOUT' : 'CONNECTION_ERROR',
        status: 0,
        message: timedOut
          ? `${route.method} ${route.path}: no answer within ${timeoutMs} ms`
          : `${route.method} ${route.path}: ${describe(error)}`,
        cause: error,
      });
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', stop);
    }
  }
}

function lowerCased(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? ` (${error.cause.message})` : '';
  return `${error.message}${cause}`;
}

/** setTimeout as a promise that an abort ends early (rejecting with the signal's reason). */
export function sleepFor(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', aborted);
    };
    const aborted = () => {
      done();
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      done();
      resolve();
    }, ms);
    signal?.addEventListener('abort', aborted, { once: true });
  });
}

/**
 * Seconds the service keeps the answer of a key the client made: the call's deadline (every retry is
 * sent within it) and a minute more for the clocks of the service's instances, within the service's
 * 1-86 400.
 */
export function retentionOfOwnKeys(deadlineMs: number): number {
  return Math.min(86_400, Math.ceil(deadlineMs / 1000) + 60);
}
