/**
 * A ring of time buckets for in-process metrics, driven by the caller's clock (no timers).
 *
 * Time is cut into buckets of `bucketMs`; bucket number n = floor(nowMs / bucketMs) lives at ring index
 * n mod ringSize and is tagged with n (its "round"). A bucket whose tag is not the number asked for
 * holds an older round: it reads as empty and is reset when written. So an idle gap of any length
 * costs nothing, and a read of the last N buckets touches N entries at most (N <= span).
 * The ring has a few spare buckets beyond the span, so the bucket being written is never one that a
 * read of the full span still needs.
 */
export interface TimeWheelOptions {
  bucketMs: number;
  /** Buckets a read may cover (e.g. 60 one-second buckets). */
  spanBuckets: number;
  /** Extra ring entries beyond the span. */
  spareBuckets?: number;
}

export class TimeWheel<B> {
  private readonly ring: Array<{ round: number; value: B }>;
  readonly bucketMs: number;
  readonly spanBuckets: number;

  constructor(
    options: TimeWheelOptions,
    private readonly create: () => B,
  ) {
    if (!(options.bucketMs > 0) || !Number.isInteger(options.spanBuckets) || options.spanBuckets < 1) {
      throw new Error('TimeWheel needs bucketMs > 0 and spanBuckets >= 1');
    }
    this.bucketMs = options.bucketMs;
    this.spanBuckets = options.spanBuckets;
    const size = options.spanBuckets + Math.max(1, options.spareBuckets ?? 2);
    this.ring = Array.from({ length: size }, () => ({ round: Number.NaN, value: create() }));
  }

  /** The bucket for `nowMs`, fresh if it last held an older round. */
  current(nowMs: number): B {
    const round = Math.floor(nowMs / this.bucketMs);
    const entry = this.ring[mod(round, this.ring.length)];
    if (entry.round !== round) {
      entry.round = round;
      entry.value = this.create();
    }
    return entry.value;
  }

  /**
   * The non-empty buckets of the last `buckets` complete buckets before the current one (or ending
   * with the current one when `includeCurrent`), oldest first. Buckets of older rounds are skipped.
   */
  last(nowMs: number, buckets: number, includeCurrent = false): B[] {
    const count = Math.min(Math.max(0, Math.floor(buckets)), this.spanBuckets);
    const newest = Math.floor(nowMs / this.bucketMs) - (includeCurrent ? 0 : 1);
    const found: B[] = [];
    for (let round = newest - count + 1; round <= newest; round++) {
      const entry = this.ring[mod(round, this.ring.length)];
      if (entry.round === round) found.push(entry.value);
    }
    return found;
  }
}

function mod(n: number, m: number): number {
  return ((n % m) + m) % m;
}

/** A counter summed over buckets. */
export class CounterWheel {
  private readonly wheel: TimeWheel<{ count: number }>;

  constructor(options: TimeWheelOptions) {
    this.wheel = new TimeWheel(options, () => ({ count: 0 }));
  }

  add(nowMs: number, amount = 1): void {
    this.wheel.current(nowMs).count += amount;
  }

  sum(nowMs: number, buckets: number, includeCurrent = false): number {
    return this.wheel.last(nowMs, buckets, includeCurrent).reduce((total, b) => total + b.count, 0);
  }
}

/** Request latencies per bucket: count, errors, sum, min and max. */
export interface LatencyBucket {
  requests: number;
  errors: number;
  sumMs: number;
  minMs: number;
  maxMs: number;
}

export interface LatencySummary extends LatencyBucket {
  avgMs: number;
}

export class LatencyWheel {
  private readonly wheel: TimeWheel<LatencyBucket>;

  constructor(options: TimeWheelOptions) {
    this.wheel = new TimeWheel(options, () => ({ requests: 0, errors: 0, sumMs: 0, minMs: Infinity, maxMs: 0 }));
  }

  record(nowMs: number, durationMs: number, failed: boolean): void {
    const bucket = this.wheel.current(nowMs);
    bucket.requests++;
    if (failed) bucket.errors++;
    bucket.sumMs += durationMs;
    bucket.minMs = Math.min(bucket.minMs, durationMs);
    bucket.maxMs = Math.max(bucket.maxMs, durationMs);
  }

  summary(nowMs: number, buckets: number, includeCurrent = false): LatencySummary {
    const total = { requests: 0, errors: 0, sumMs: 0, minMs: Infinity, maxMs: 0 };
    for (const b of this.wheel.last(nowMs, buckets, includeCurrent)) {
      total.requests += b.requests;
      total.errors += b.errors;
      total.sumMs += b.sumMs;
      total.minMs = Math.min(total.minMs, b.minMs);
      total.maxMs = Math.max(total.maxMs, b.maxMs);
    }
    return {
      ...total,
      minMs: total.requests ? total.minMs : 0,
      avgMs: total.requests ? total.sumMs / total.requests : 0,
    };
  }
}
