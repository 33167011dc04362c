import { CounterWheel } from './time-wheel';

export interface RateLimitOptions {
  /** Sustained requests per second, averaged over the last 10 s. */
  perSecond: number;
  /** Most requests within any one second (100 ms resolution). */
  burst: number;
  /** Clients tracked at once; the least recently seen are forgotten beyond this. */
  maxClients: number;
}

export type RateDecision = { allowed: true } | { allowed: false; retryAfterSec: number };

const SUSTAINED_SEC = 10;

/**
 * A sliding-window limiter per client on two time wheels: 1 s in 100 ms buckets for the burst, 10 s in
 * 1 s buckets for the sustained rate. Counts only requests it allows. Local to this process.
 */
export class RateLimiter {
  private readonly clients = new Map<string, { burst: CounterWheel; sustained: CounterWheel }>();

  constructor(readonly options: RateLimitOptions) {}

  /** Counts `cost` requests at once (a live stream costs several reads) when the client's budget has them. */
  check(client: string, nowMs: number, cost = 1): RateDecision {
    const wheels = this.wheelsOf(client);
    const lastSecond = wheels.burst.sum(nowMs, 10, true);
    const lastTen = wheels.sustained.sum(nowMs, SUSTAINED_SEC, true);
    if (lastSecond + cost > this.options.burst) return { allowed: false, retryAfterSec: 1 };
    const sustainedLimit = this.options.perSecond * SUSTAINED_SEC;
    if (lastTen + cost > sustainedLimit) {
      return {
        allowed: false,
        retryAfterSec: Math.min(
          SUSTAINED_SEC,
          Math.max(1, Math.ceil((lastTen - sustainedLimit + cost) / this.options.perSecond)),
        ),
      };
    }
    wheels.burst.add(nowMs, cost);
    wheels.sustained.add(nowMs, cost);
    return { allowed: true };
  }

  get trackedClients(): number {
    return this.clients.size;
  }

  private wheelsOf(client: string) {
    let wheels = this.clients.get(client);
    if (wheels) {
      this.clients.delete(client); // re-insert: Map order is recency order
    } else {
      wheels = {
        burst: new CounterWheel({ bucketMs: 100, spanBuckets: 10 }),
        sustained: new CounterWheel({ bucketMs: 1000, spanBuckets: SUSTAINED_SEC }),
      };
      if (this.clients.size >= this.options.maxClients) this.clients.delete(this.clients.keys().next().value as string);
    }
    this.clients.set(client, wheels);
    return wheels;
  }
}
