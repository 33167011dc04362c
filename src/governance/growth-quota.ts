import { GROWTH_KINDS, GrowthKind } from '../common/growth-kinds';

/** The allowance a script gets for a kind without a quota: it may create any number. */
export const UNLIMITED = -1;

export interface GrowthQuotaOptions {
  /** Most new entries of each kind a client may create per interval; 0: no quota for that kind. */
  perInterval: Record<GrowthKind, number>;
  intervalMs: number;
  /** Clients tracked at once (see bucketsOf for what happens beyond). */
  maxClients: number;
}

interface Buckets {
  lastMs: number;
  tokens: number[];
}

/**
 * Per-client token buckets, one per kind: a client may create `perInterval` entries at once, and the
 * bucket refills at `perInterval` per interval. Writes reserve before their script runs and give back
 * what the script did not create, so concurrent writes of one client never create more than the
 * budget. Local to this process (like the rate limiter).
 */
export class GrowthQuota {
  private readonly clients = new Map<string, Buckets>();
  /** The client last moved to the end of `clients` (its most recent): a repeat needs no move. */
  private newest: string | undefined;
  /** Shared by every client that finds the table full of clients still owing a refill. */
  private readonly overflow: Buckets;
  /**
   * perInterval by kind's place in GROWTH_KINDS: every write reads it per kind, and an object read by a
   * kind held in a variable is a generic keyed lookup each time.
   */
  private readonly limits: readonly number[];

  constructor(readonly options: GrowthQuotaOptions) {
    this.limits = GROWTH_KINDS.map((kind) => options.perInterval[kind]);
    this.overflow = { lastMs: -Infinity, tokens: this.fullTokens() };
  }

  /** Takes up to `wanted` from the client's budget of `kind`: what was taken, or UNLIMITED. */
  take(client: string, kind: GrowthKind, wanted: number, nowMs: number): number {
    return this.takeAt(client, GROWTH_KINDS.indexOf(kind), wanted, nowMs);
  }

  /** take, the kind named by its place in GROWTH_KINDS. */
  takeAt(client: string, index: number, wanted: number, nowMs: number): number {
    if (this.limits[index] === 0) return UNLIMITED;
    // Nothing wanted takes nothing (a plain increment wants no actor or segment entries): no bucket to refill.
    if (wanted === 0) return 0;
    const buckets = this.bucketsOf(client, nowMs);
    const tokens = buckets.tokens[index];
    // Whole entries only when short (a script creates whole items); a share of a stored answer (a
    // short retention's) is taken while the bucket holds it, a bucket's last token included.
    const taken = tokens >= wanted ? wanted : Math.floor(tokens);
    buckets.tokens[index] -= taken;
    return taken;
  }

  /** Returns what a write took and did not create. */
  giveBack(client: string, kind: GrowthKind, amount: number, nowMs: number): void {
    this.giveBackAt(client, GROWTH_KINDS.indexOf(kind), amount, nowMs);
  }

  /** giveBack, the kind named by its place in GROWTH_KINDS. */
  giveBackAt(client: string, index: number, amount: number, nowMs: number): void {
    const limit = this.limits[index];
    if (limit === 0 || amount <= 0) return;
    const buckets = this.bucketsOf(client, nowMs);
    buckets.tokens[index] = Math.min(limit, buckets.tokens[index] + amount);
  }

  /** Seconds until the client may create `needed` entries of `kind` (a whole interval when it never can). */
  retryAfterSec(client: string, kind: GrowthKind, needed: number, nowMs: number): number {
    const limit = this.options.perInterval[kind];
    const intervalSec = Math.ceil(this.options.intervalMs / 1000);
    if (needed > limit) return intervalSec;
    const missing = needed - this.bucketsOf(client, nowMs).tokens[GROWTH_KINDS.indexOf(kind)];
    return Math.min(intervalSec, Math.max(1, Math.ceil((missing * this.options.intervalMs) / limit / 1000)));
  }

  get trackedClients(): number {
    return this.clients.size;
  }

  /**
   * The client's buckets, refilled up to `nowMs`. When the table is full, the least recently seen
   * client is forgotten only if its buckets are full again (forgetting it gives nothing away);
   * otherwise the newcomer draws on the shared overflow buckets, so fresh addresses never get a fresh
   * budget by pushing a spent one out of the table.
   */
  private bucketsOf(client: string, nowMs: number): Buckets {
    let buckets = this.clients.get(client);
    if (buckets) {
      this.refill(buckets, nowMs);
      if (client === this.newest) return buckets;
      this.clients.delete(client); // re-insert: Map order is recency order
    } else {
      if (this.clients.size >= this.options.maxClients) {
        const [oldest, oldestBuckets] = this.clients.entries().next().value as [string, Buckets];
        this.refill(oldestBuckets, nowMs);
        if (!this.isFull(oldestBuckets)) return this.refill(this.overflow, nowMs);
        this.clients.delete(oldest);
      }
      buckets = { lastMs: nowMs, tokens: this.fullTokens() };
    }
    this.clients.set(client, buckets);
    this.newest = client;
    return buckets;
  }

  private refill(buckets: Buckets, nowMs: number): Buckets {
    if (buckets.lastMs === -Infinity) buckets.lastMs = nowMs;
    const elapsedMs = nowMs - buckets.lastMs;
    // Nothing to add (the same millisecond, or a clock that stepped back): tokens never exceed a limit.
    if (elapsedMs <= 0) return buckets;
    for (let i = 0; i < this.limits.length; i++) {
      const limit = this.limits[i];
      buckets.tokens[i] = Math.min(limit, buckets.tokens[i] + (elapsedMs * limit) / this.options.intervalMs);
    }
    buckets.lastMs = nowMs;
    return buckets;
  }

  private isFull(buckets: Buckets): boolean {
    return this.limits.every((limit, i) => buckets.tokens[i] >= limit);
  }

  private fullTokens(): number[] {
    return [...this.limits];
  }
}
