import type { Context } from '@opentelemetry/api';
import { currentContext, traceBatch } from '../tracing/tracing';

/** Sends the requests gathered under one key as one call; answers each request's result, or an Error to reject it with. */
export type FlushRequests<Request, Result> = (key: string, requests: Request[]) => Promise<Array<Result | Error>>;

export interface CoalescerOptions {
  /** Longest a request waits for a call already under way for its key before it is sent anyway (ms, > 0). */
  delayMs: number;
  /** Most requests in one call: a full batch is sent at once. */
  maxBatch: number;
  /**
   * Most weight of one call, the sum of its requests' (submit's `weight`): a request that would take a
   * gathering call past it sends that call at once and starts the next. Absent: only maxBatch counts.
   */
  maxWeight?: number;
}

interface Waiting<Request, Result> {
  request: Request;
  /** The request's trace context, when tracing: the call that carries it links to it. */
  traced?: Context;
  resolve: (result: Result) => void;
  reject: (error: unknown) => void;
}

interface Batch<Request, Result> {
  waiting: Array<Waiting<Request, Result>>;
  /** The sum of the waiting requests' weights. */
  weight: number;
  timer?: NodeJS.Timeout;
}

/**
 * Gathers requests that arrive together for one key (a board shard) into one call. A request for a
 * key with no call under way is sent at the end of the current event-loop turn, with whatever else
 * arrived in that turn: an idle service adds no delay. While a call for the key is under way, new
 * requests gather until it answers or `delayMs` has passed, whichever comes first, so a busy service
 * sends fewer, larger calls and no request waits longer than `delayMs` for its turn.
 */
export class Coalescer<Request, Result> {
  private readonly batches = new Map<string, Batch<Request, Result>>();
  private readonly underWay = new Map<string, number>();

  constructor(
    private readonly options: CoalescerOptions,
    private readonly flush: FlushRequests<Request, Result>,
  ) {}

  /** `weight`: what the request adds to its call (maxWeight); one unless told. */
  submit(key: string, request: Request, weight = 1): Promise<Result> {
    return new Promise<Result>((resolve, reject) => {
      const maxWeight = this.options.maxWeight ?? Infinity;
      const gathering = this.batches.get(key);
      if (gathering !== undefined && gathering.weight + weight > maxWeight) this.send(key, gathering);
      const batch = this.batches.get(key) ?? this.open(key);
      batch.waiting.push({ request, traced: currentContext(), resolve, reject });
      batch.weight += weight;
      if (batch.waiting.length >= this.options.maxBatch || batch.weight >= maxWeight) this.send(key, batch);
    });
  }

  /** Requests gathered and not yet sent, over every key. */
  get waitingCount(): number {
    let count = 0;
    for (const batch of this.batches.values()) count += batch.waiting.length;
    return count;
  }

  private open(key: string): Batch<Request, Result> {
    const batch: Batch<Request, Result> = { waiting: [], weight: 0 };
    this.batches.set(key, batch);
    if (!this.underWay.has(key)) setImmediate(() => this.send(key, batch));
    else batch.timer = setTimeout(() => this.send(key, batch), this.options.delayMs);
    return batch;
  }

  private send(key: string, batch: Batch<Request, Result>): void {
    // Sent already (full, or the call under way answered before the timer fired).
    if (this.batches.get(key) !== batch) return;
    this.batches.delete(key);
    clearTimeout(batch.timer);
    this.underWay.set(key, (this.underWay.get(key) ?? 0) + 1);
    const { waiting } = batch;
    traceBatch(
      'coalesced call',
      waiting.map((w) => w.traced),
      () =>
        this.flush(
          key,
          waiting.map((w) => w.request),
        ),
    ).then(
      (results) => {
        waiting.forEach((w, i) => {
          const result = results[i];
          if (result instanceof Error) w.reject(result);
          else w.resolve(result);
        });
        this.answered(key);
      },
      (error: unknown) => {
        for (const w of waiting) w.reject(error);
        this.answered(key);
      },
    );
  }

  /** A call for `key` answered: the requests that gathered meanwhile go now. */
  private answered(key: string): void {
    const left = (this.underWay.get(key) ?? 1) - 1;
    if (left === 0) this.underWay.delete(key);
    else this.underWay.set(key, left);
    const next = this.batches.get(key);
    if (next !== undefined) this.send(key, next);
  }
}
