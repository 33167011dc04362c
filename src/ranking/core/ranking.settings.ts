import { AppConfig } from '../../common/config';
import { settingsFrom } from '../../common/settings';

/**
 * The settings the ranking module reads (docs/configuration.md), taken once from the validated
 * configuration: its stores and scheduler name these, never AppConfig.
 */
export class RankingSettings extends settingsFrom((config: AppConfig) => ({
  /** EXPIRE_CHUNK: most expired-slot fields one function call drains. */
  expireChunk: config.EXPIRE_CHUNK,
  /** WRITE_COALESCE_MS: how long an increment may wait to share a call (0: never). */
  writeCoalesceMs: config.WRITE_COALESCE_MS,
  /** IDEMPOTENCY_TTL_SEC, in ms: how long a keyed write's answer is kept. */
  idempotencyRetentionMs: config.IDEMPOTENCY_TTL_SEC * 1000,
  /** WRITE_COST_PER_CALL: most cost units one write call may weigh (core/write-cost.ts). */
  writeCostPerCall: config.WRITE_COST_PER_CALL,
  /** LOOKUP_COUNTS_PER_REQUEST: most ranks one lookup may count (lookup/lookup.service.ts). */
  lookupCountsPerRequest: config.LOOKUP_COUNTS_PER_REQUEST,
  /** SCHEDULER_*: the expiry job of this instance. */
  scheduler: {
    enabled: config.SCHEDULER_ENABLED,
    intervalMs: config.SCHEDULER_INTERVAL_MS,
    leaseMs: config.SCHEDULER_LEASE_MS,
    claimBatch: config.SCHEDULER_CLAIM_BATCH,
    sweepIntervalMs: config.SCHEDULER_SWEEP_INTERVAL_MS,
  },
})) {}
