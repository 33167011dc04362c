import { Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { callerOf } from '../edge/caller';
import { answer, idempotencyKeyOf, WriteExchange } from '../edge/retry-safe';
import { WriteAnswer } from '../common/retry-safe';
import { Clock } from '../common/clock';
import { COMMON_MESSAGES as M } from '../common/common.messages';
import { GovernanceSettings } from './governance.settings';
import { ConflictError, QuotaExceededError } from '../common/errors';
import { CapRefusal, growthRefusalOf, QuotaRefusal } from '../redis/refusals';
import { RESEND_GUARD_SHARE } from '../redis/idempotency';
import { RedisService } from '../redis/redis.service';
import { GROWTH_KINDS, GrowthKind } from '../common/growth-kinds';
import { GrowthQuota, UNLIMITED } from './growth-quota';

export { UNLIMITED } from './growth-quota';

/** How the quotas name a kind to a client. */
const KIND_NAMES: Record<GrowthKind, string> = {
  items: 'new items',
  likeUsers: 'new likes (a user id liking an item for the first time)',
  counters: 'new counters',
  statsPairs: 'new stats context/type pairs',
  idempotentAnswers:
    "stored answers of writes (with a new Idempotency-Key; on a Redis Cluster, also without one: the service's own key)",
  actorEntries: "new actor contributions (an actor's first event on an item in a window's slot)",
  segmentEntries:
    "new segment entries (an item's first amount in a segment window's slot; a segment's keys on a shard where it is new)",
  itemDataBytes: 'bytes of new item data',
};

/** Each kind's place in GROWTH_KINDS. */
const KIND_INDEX = Object.fromEntries(GROWTH_KINDS.map((kind, i) => [kind, i])) as Record<GrowthKind, number>;

/** What a failed write created: nothing. */
const NOTHING_CREATED: Partial<Record<GrowthKind, number>> = Object.freeze({});

/**
 * What one write took from its client's budgets before its script ran: the script gets each kind's
 * allowance and refuses (atomically, nothing applied) a write that would create more; `settle` then
 * gives back what was not created. A write without a client (the service's own, a test) is unlimited.
 */
export class Reservation {
  private settled = false;

  constructor(
    private readonly owner: ClientBudget | undefined,
    /** What was taken of each kind, by its place in GROWTH_KINDS (undefined: not reserved). */
    private readonly taken: ReadonlyArray<number | undefined>,
  ) {}

  /** Most entries of `kind` the script may create: UNLIMITED when the kind has no quota or was not reserved. */
  allowance(kind: GrowthKind): number {
    return this.taken[KIND_INDEX[kind]] ?? UNLIMITED;
  }

  /** Charges what the write created and gives back the rest (once; a failed write settles with nothing). */
  settle(created: Partial<Record<GrowthKind, number>> = NOTHING_CREATED): void {
    if (this.settled || !this.owner) return;
    this.settled = true;
    const { quota, client, clock } = this.owner;
    let nowMs: number | undefined;
    for (let i = 0; i < this.taken.length; i++) {
      const taken = this.taken[i];
      if (taken === undefined || taken === UNLIMITED) continue;
      const unused = taken - (created[GROWTH_KINDS[i]] ?? 0);
      // Most writes create what they took: nothing to give back, no clock to read.
      if (unused > 0) quota.giveBackAt(client, i, unused, (nowMs ??= clock.nowMs()));
    }
  }

  /** The 429 for a write that would create `wanted` entries of `kind` (what it took goes back first). */
  refusal(kind: GrowthKind, wanted: number): QuotaExceededError {
    this.settle();
    if (!this.owner) throw new Error(`a write without a client was refused its ${kind}`);
    const { quota, client, clock } = this.owner;
    const retryAfterSec = quota.retryAfterSec(client, kind, wanted, clock.nowMs());
    const { perInterval, intervalMs } = quota.options;
    return new QuotaExceededError(
      M.quotaExceeded(KIND_NAMES[kind], wanted, perInterval[kind], intervalMs / 1000, retryAfterSec),
      retryAfterSec,
    );
  }
}

/**
 * One client's budgets (its API key, else its address: see callerOf). A budget is made per request, so
 * its reservations settle against the budget itself, with no object of their own for what they need.
 */
export class ClientBudget {
  constructor(
    readonly quota: GrowthQuota,
    readonly client: string,
    readonly clock: Clock,
    /**
     * The share of a stored answer a write without an Idempotency-Key costs (withAnswerBudget): on a
     * Cluster it carries a key of the service's own (RESEND_GUARD_SHARE); 0 on a single node, which
     * keeps none, or without a quota of stored answers.
     */
    readonly keylessAnswerShare = 0,
  ) {}

  /** Takes up to `wanted` of each kind now. */
  reserve(wanted: Partial<Record<GrowthKind, number>>): Reservation {
    const { quota, client, clock } = this;
    const taken = new Array<number | undefined>(GROWTH_KINDS.length);
    let nowMs: number | undefined;
    // The kinds wanted only (a write wants one to three of them), each read by the key for-in gives.
    for (const kind in wanted) {
      const count = wanted[kind as GrowthKind];
      const index = KIND_INDEX[kind as GrowthKind];
      if (count !== undefined && index !== undefined)
        taken[index] = quota.takeAt(client, index, count, (nowMs ??= clock.nowMs()));
    }
    return new Reservation(this, taken);
  }
}

/** A reservation from `budget`, or an unlimited one for a write without a client. */
export function reserveGrowth(
  budget: ClientBudget | undefined,
  wanted: Partial<Record<GrowthKind, number>>,
): Reservation {
  return budget ? budget.reserve(wanted) : new Reservation(undefined, []);
}

/**
 * What a client gets for a failed write: a script's quota refusal becomes the 429, a cap refusal
 * `capError` (409 BOARD_FULL, CAPACITY_REACHED), anything else stays as it is. The reservation is
 * settled with nothing created (a refused or failed script applied nothing of it).
 */
export function growthErrorOf(
  error: unknown,
  reservation: Reservation,
  capError: (refusal: CapRefusal) => Error,
): unknown {
  reservation.settle();
  const refusal = growthRefusalOf(error);
  if (refusal instanceof QuotaRefusal) return reservation.refusal(refusal.kind, refusal.wanted);
  if (refusal instanceof CapRefusal) return capError(refusal);
  return error;
}

/** The 409 CAPACITY_REACHED of a service-wide cap: `what` the service holds its most of, `setting` the cap. */
export function capacityReached(what: string, setting: string): (refusal: CapRefusal) => Error {
  return (refusal) =>
    new ConflictError('CAPACITY_REACHED', M.capacityReached(what, refusal.held, refusal.cap, setting));
}

/** What a write request is sent with: its Idempotency-Key scoped to its client, and that client's budgets. */
export interface WriteSent {
  idemKey: string | undefined;
  budget: ClientBudget;
}

/** The quotas on growth of this process (QUOTA_*): per client, per instance. */
@Injectable()
export class GrowthQuotas {
  private readonly quota: GrowthQuota;
  /** ClientBudget.keylessAnswerShare: the same for every client of this process. */
  private readonly keylessAnswerShare: number;

  constructor(
    settings: GovernanceSettings,
    private readonly clock: Clock,
    redis: RedisService,
  ) {
    this.quota = new GrowthQuota({
      perInterval: settings.quotas,
      intervalMs: settings.quotaIntervalMs,
      maxClients: settings.maxClients,
    });
    const charged = redis.client.isCluster && settings.quotas.idempotentAnswers > 0;
    this.keylessAnswerShare = charged ? RESEND_GUARD_SHARE : 0;
  }

  /** The budgets of the client a request counts for. */
  budgetOf(request: FastifyRequest): ClientBudget {
    return new ClientBudget(this.quota, callerOf(request).client, this.clock, this.keylessAnswerShare);
  }

  /** What a write request is sent with: its Idempotency-Key scoped to its client (400 when malformed), and that client's budgets. */
  sentWith(request: FastifyRequest): WriteSent {
    return { idemKey: idempotencyKeyOf(request), budget: this.budgetOf(request) };
  }

  /** Makes a write with what its request is sent with (sentWith) and answers it on its reply (answer). */
  async write<T>(exchange: WriteExchange, write: (sent: WriteSent) => Promise<WriteAnswer<T>>): Promise<T> {
    return answer(exchange.reply, await write(this.sentWith(exchange.request)));
  }
}
