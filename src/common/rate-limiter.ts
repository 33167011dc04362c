import { CounterWheel } from './time-wheel';

export interface RateLimitOptions {
  /** Sustained requests per second, averaged over the last 10 s. */
  perSecond: number;
  /** Most requests within any one second (100 ms resolution). */
  burst: number;
  /** Clients tracked at once (see wheelsOf for what happens beyond). */
  maxClients: number;
}

export type RateDecision = { allowed: true } | { allowed: false; retryAfterSec: number };

const SUSTAINED_SEC = 10;

interface Wheels {
  burst: CounterWheel;
  sustained: CounterWheel;
}

/**
 * A sliding-window limiter per client on two time wheels: 1 s in 100 ms buckets for the burst, 10 s in
 * 1 s buckets for the sustained rate. Counts only requests it allows. Local to this process.
 */
export class RateLimiter {
  private readonly clients = new Map<string, Wheels>();
  /** Shared by every client that finds the table full of active clients. */
  private readonly overflow: Wheels = RateLimiter.newWheels();

  constructor(readonly options: RateLimitOptions) {}

  /** Whether the client may go on, counting `cost` requests when it may (a live stream costs several reads). */
  check(client: string, nowMs: number, cost = 1): RateDecision {
    const decision = this.peek(client, nowMs, cost);
    if (decision.allowed) this.count(client, nowMs, cost);
    return decision;
  }

  /** Whether the client's budget holds `cost` more requests now, counting nothing. */
  peek(client: string, nowMs: number, cost = 1): RateDecision {
    const wheels = this.wheelsOf(client, nowMs);
    const lastSecond = wheels.burst.sum(nowMs, 10, true);
    const lastTen = wheels.sustained.sum(nowMs, SUSTAINED_SEC, true);
    // A cost above a whole budget (a batch of more entries than the burst) passes only on an empty
    // window, which it then fills for its whole cost: it can always go, never faster than the rates.
    if (lastSecond > 0 && lastSecond + cost > this.options.burst) return { allowed: false, retryAfterSec: 1 };
    const sustainedLimit = this.options.perSecond * SUSTAINED_SEC;
    if (lastTen > 0 && lastTen + cost > sustainedLimit) {
      return {
        allowed: false,
        retryAfterSec: Math.min(
          SUSTAINED_SEC,
          Math.max(1, Math.ceil((lastTen - sustainedLimit + cost) / this.options.perSecond)),
        ),
      };
    }
    return { allowed: true };
  }

  /** Counts `cost` requests (or failures) of the client. */
  count(client: string, nowMs: number, cost = 1): void {
    const wheels = this.wheelsOf(client, nowMs);
    wheels.burst.add(nowMs, cost);
    wheels.sustained.add(nowMs, cost);
  }

  get trackedClients(): number {
    return this.clients.size;
  }

  /**
   * The client's wheels. When the table is full, the least recently seen client is forgotten only if
   * nothing of it is still counted (idle for 10 s: forgetting it gives nothing away); otherwise the
   * newcomer shares the overflow wheels, so filling the table with fresh addresses never hands out a
   * fresh budget.
   */
  private wheelsOf(client: string, nowMs: number): Wheels {
    let wheels = this.clients.get(client);
    if (wheels) {
      this.clients.delete(client); // re-insert: Map order is recency order
    } else {
      if (this.clients.size >= this.options.maxClients) {
        const [oldest, oldestWheels] = this.clients.entries().next().value as [string, Wheels];
        if (oldestWheels.sustained.sum(nowMs, SUSTAINED_SEC, true) > 0) return this.overflow;
        this.clients.delete(oldest);
      }
      wheels = RateLimiter.newWheels();
    }
    this.clients.set(client, wheels);
    return wheels;
  }

  private static newWheels(): Wheels {
    return {
      burst: new CounterWheel({ bucketMs: 100, spanBuckets: 10 }),
      sustained: new CounterWheel({ bucketMs: 1000, spanBuckets: SUSTAINED_SEC }),
    };
  }
}
