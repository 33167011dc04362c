/**
 * What a write may create, each kind with a quota of its own. idempotentAnswers: the answers of keyed
 * writes Redis keeps for IDEMPOTENCY_TTL_SEC (see answer-budget.ts).
 */
export const GROWTH_KINDS = ['items', 'likeUsers', 'counters', 'statsPairs', 'idempotentAnswers'] as const;
export type GrowthKind = (typeof GROWTH_KINDS)[number];

/** The allowance a script gets for a kind without a quota: it may create any number. */
export const UNLIMITED = -1;

export interface GrowthQuotaOptions {
  /** Most new entries of each kind a client may create per interval; 0: no quota for that kind. */
  perInterval: Record<GrowthKind, number>;
  intervalMs: number;
  /** Clients tracked at once; the least recently seen are forgotten beyond this. */
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

  constructor(readonly options: GrowthQuotaOptions) {}

  /** Takes up to `wanted` from the client's budget of `kind`: what was taken, or UNLIMITED. */
  take(client: string, kind: GrowthKind, wanted: number, nowMs: number): number {
    const limit = this.options.perInterval[kind];
    if (limit === 0) return UNLIMITED;
    const buckets = this.bucketsOf(client, nowMs);
    const index = GROWTH_KINDS.indexOf(kind);
    const taken = Math.min(wanted, Math.floor(buckets.tokens[index]));
    buckets.tokens[index] -= taken;
    return taken;
  }

  /** Returns what a write took and did not create. */
  giveBack(client: string, kind: GrowthKind, amount: number, nowMs: number): void {
    const limit = this.options.perInterval[kind];
    if (limit === 0 || amount <= 0) return;
    const buckets = this.bucketsOf(client, nowMs);
    const index = GROWTH_KINDS.indexOf(kind);
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

  private bucketsOf(client: string, nowMs: number): Buckets {
    let buckets = this.clients.get(client);
    if (buckets) {
      this.clients.delete(client); // re-insert: Map order is recency order
      const elapsedMs = Math.max(0, nowMs - buckets.lastMs);
      GROWTH_KINDS.forEach((kind, i) => {
        const limit = this.options.perInterval[kind];
        buckets!.tokens[i] = Math.min(limit, buckets!.tokens[i] + (elapsedMs * limit) / this.options.intervalMs);
      });
      buckets.lastMs = Math.max(buckets.lastMs, nowMs);
    } else {
      buckets = { lastMs: nowMs, tokens: GROWTH_KINDS.map((kind) => this.options.perInterval[kind]) };
      if (this.clients.size >= this.options.maxClients) this.clients.delete(this.clients.keys().next().value as string);
    }
    this.clients.set(client, buckets);
    return buckets;
  }
}
