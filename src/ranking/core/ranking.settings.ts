import { AppConfig } from '../../common/config';

/**
 * The settings the ranking module reads (docs/configuration.md), taken once from the validated
 * configuration: its stores and scheduler name these, never AppConfig.
 */
export class RankingSettings {
  private constructor(
    /** EXPIRE_CHUNK: most expired-slot fields one function call drains. */
    readonly expireChunk: number,
    /** WRITE_COALESCE_MS: how long an increment may wait to share a call (0: never). */
    readonly writeCoalesceMs: number,
    /** IDEMPOTENCY_TTL_SEC, in ms: how long a keyed write's answer is kept. */
    readonly idempotencyRetentionMs: number,
    /** WRITE_COST_PER_CALL: most cost units one write call may weigh (core/write-cost.ts). */
    readonly writeCostPerCall: number,
    /** LOOKUP_COUNTS_PER_REQUEST: most ranks one lookup may count (lookup/lookup.service.ts). */
    readonly lookupCountsPerRequest: number,
    /** SCHEDULER_*: the expiry job of this instance. */
    readonly scheduler: {
      enabled: boolean;
      intervalMs: number;
      leaseMs: number;
      claimBatch: number;
      sweepIntervalMs: number;
    },
  ) {}

  static from(config: AppConfig): RankingSettings {
    const { EXPIRE_CHUNK, WRITE_COALESCE_MS, IDEMPOTENCY_TTL_SEC, WRITE_COST_PER_CALL } = config;
    const lookupCounts = config.LOOKUP_COUNTS_PER_REQUEST;
    return new RankingSettings(
      EXPIRE_CHUNK,
      WRITE_COALESCE_MS,
      IDEMPOTENCY_TTL_SEC * 1000,
      WRITE_COST_PER_CALL,
      lookupCounts,
      {
        enabled: config.SCHEDULER_ENABLED,
        intervalMs: config.SCHEDULER_INTERVAL_MS,
        leaseMs: config.SCHEDULER_LEASE_MS,
        claimBatch: config.SCHEDULER_CLAIM_BATCH,
        sweepIntervalMs: config.SCHEDULER_SWEEP_INTERVAL_MS,
      },
    );
  }
}
