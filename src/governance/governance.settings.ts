import { AppConfig } from '../common/config';
import { settingsFrom } from '../common/settings';

/** Requests per second and burst of one kind of route (0 per second: not limited). */
export interface RateBudget {
  perSecond: number;
  burst: number;
}

/**
 * The settings the governance module reads (docs/operations.md), taken once from the validated
 * configuration: its providers name these, never AppConfig.
 */
export class GovernanceSettings extends settingsFrom((config: AppConfig) => ({
  /** RATE_LIMIT_PER_SEC and RATE_LIMIT_BURST: writes per client. */
  writeRate: { perSecond: config.RATE_LIMIT_PER_SEC, burst: config.RATE_LIMIT_BURST },
  /** READ_RATE_LIMIT_PER_SEC and READ_RATE_LIMIT_BURST: reads per client. */
  readRate: { perSecond: config.READ_RATE_LIMIT_PER_SEC, burst: config.READ_RATE_LIMIT_BURST },
  /** RATE_LIMIT_MAX_CLIENTS: clients each limiter and the quotas track at once. */
  maxClients: config.RATE_LIMIT_MAX_CLIENTS,
  /** QUOTA_NEW_ITEMS, QUOTA_NEW_LIKE_USERS, ...: growth a client may cause per interval. */
  quotas: {
    items: config.QUOTA_NEW_ITEMS,
    likeUsers: config.QUOTA_NEW_LIKE_USERS,
    counters: config.QUOTA_NEW_COUNTERS,
    statsPairs: config.QUOTA_NEW_STATS_PAIRS,
    idempotentAnswers: config.QUOTA_IDEMPOTENT_ANSWERS,
    actorEntries: config.QUOTA_NEW_ACTOR_ENTRIES,
    segmentEntries: config.QUOTA_NEW_SEGMENT_ENTRIES,
    itemDataBytes: config.QUOTA_ITEM_DATA_BYTES,
  },
  /** QUOTA_INTERVAL_SEC, in ms. */
  quotaIntervalMs: config.QUOTA_INTERVAL_SEC * 1000,
  /** METRICS_TOKEN: the bearer token /metrics asks for (undefined: public). */
  metricsToken: config.METRICS_TOKEN,
})) {}
