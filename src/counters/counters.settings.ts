import { AppConfig } from '../common/config';
import { parsePrecisionList } from './counter-math';
import { settingsFrom } from '../common/settings';

/**
 * The settings the counters module reads (docs/counters.md), taken once from the validated
 * configuration: its providers name these, never AppConfig.
 */
export class CountersSettings extends settingsFrom((config: AppConfig) => ({
  /** Configured precisions, seconds, ascending (COUNTER_PRECISIONS). */
  precisions: precisionsOf(config),
  /** Samples kept per precision (COUNTER_SAMPLES). */
  samples: config.COUNTER_SAMPLES,
  /** Buckets the known index is split into (COUNTER_INDEX_BUCKETS). */
  buckets: config.COUNTER_INDEX_BUCKETS,
  /** Most index entries one cleaner call visits (COUNTER_CLEAN_BATCH). */
  cleanBatch: config.COUNTER_CLEAN_BATCH,
  /** Time between two cleaner passes (COUNTER_CLEAN_INTERVAL_MS). */
  cleanIntervalMs: config.COUNTER_CLEAN_INTERVAL_MS,
  /** Most live counters (MAX_COUNTERS, 0: no cap). */
  maxCounters: config.MAX_COUNTERS,
  /**
   * Each bucket's share of MAX_COUNTERS, ceil(most / buckets): each bucket is its own Cluster hash tag,
   * and a function sees only its own, so the cap is split.
   */
  bucketCap: Math.ceil(config.MAX_COUNTERS / config.COUNTER_INDEX_BUCKETS),
  /** Whether this instance runs the cleaner (SCHEDULER_ENABLED). */
  schedulerEnabled: config.SCHEDULER_ENABLED,
  /** How long a keyed increment's answer is kept (IDEMPOTENCY_TTL_SEC, in ms). */
  idempotencyRetentionMs: config.IDEMPOTENCY_TTL_SEC * 1000,
})) {}

/** Throws naming COUNTER_PRECISIONS when it does not parse (validateConfig has checked it already). */
function precisionsOf(config: AppConfig): number[] {
  const parsed = parsePrecisionList(config.COUNTER_PRECISIONS);
  if ('error' in parsed) throw new Error(`COUNTER_PRECISIONS: ${parsed.error}`);
  return parsed.precisions;
}
