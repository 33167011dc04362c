import { AppConfig } from '../common/config';

/** Requests per second and burst of one kind of route (0 per second: not limited). */
export interface RateBudget {
  perSecond: number;
  burst: number;
}

/**
 * The settings the governance module reads (docs/operations.md), taken once from the validated
 * configuration: its providers name these, never AppConfig.
 */
export class GovernanceSettings {
  private constructor(
    /** RATE_LIMIT_PER_SEC and RATE_LIMIT_BURST: writes per client. */
    readonly writeRate: RateBudget,
    /** READ_RATE_LIMIT_PER_SEC and READ_RATE_LIMIT_BURST: reads per client. */
    readonly readRate: RateBudget,
    /** RATE_LIMIT_MAX_CLIENTS: clients each limiter and the quotas track at once. */
    readonly maxClients: number,
    /** QUOTA_NEW_ITEMS, QUOTA_NEW_LIKE_USERS, ...: growth a client may cause per interval. */
    readonly quotas: {
      items: number;
      likeUsers: number;
      counters: number;
      statsPairs: number;
      idempotentAnswers: number;
      actorEntries: number;
      segmentEntries: number;
      itemDataBytes: number;
    },
    /** QUOTA_INTERVAL_SEC, in ms. */
    readonly quotaIntervalMs: number,
    /** METRICS_TOKEN: the bearer token /metrics asks for (undefined: public). */
    readonly metricsToken: string | undefined,
  ) {}

  static from(config: AppConfig): GovernanceSettings {
    return new GovernanceSettings(
      { perSecond: config.RATE_LIMIT_PER_SEC, burst: config.RATE_LIMIT_BURST },
      { perSecond: config.READ_RATE_LIMIT_PER_SEC, burst: config.READ_RATE_LIMIT_BURST },
      config.RATE_LIMIT_MAX_CLIENTS,
      {
        items: config.QUOTA_NEW_ITEMS,
        likeUsers: config.QUOTA_NEW_LIKE_USERS,
        counters: config.QUOTA_NEW_COUNTERS,
        statsPairs: config.QUOTA_NEW_STATS_PAIRS,
        idempotentAnswers: config.QUOTA_IDEMPOTENT_ANSWERS,
        actorEntries: config.QUOTA_NEW_ACTOR_ENTRIES,
        segmentEntries: config.QUOTA_NEW_SEGMENT_ENTRIES,
        itemDataBytes: config.QUOTA_ITEM_DATA_BYTES,
      },
      config.QUOTA_INTERVAL_SEC * 1000,
      config.METRICS_TOKEN,
    );
  }
}
