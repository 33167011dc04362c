import { AppConfig } from '../common/config';
import { parsePrecisionList } from './counter-math';

/**
 * The settings the counters module reads (docs/counters.md), taken once from the validated
 * configuration: its providers name these, never AppConfig.
 */
export class CountersSettings {
  private constructor(
    /** Configured precisions, seconds, ascending (COUNTER_PRECISIONS). */
    readonly precisions: number[],
    /** Samples kept per precision (COUNTER_SAMPLES). */
    readonly samples: number,
    /** Buckets the known index is split into (COUNTER_INDEX_BUCKETS). */
    readonly buckets: number,
    /** Most index entries one cleaner call visits (COUNTER_CLEAN_BATCH). */
    readonly cleanBatch: number,
    /** Time between two cleaner passes (COUNTER_CLEAN_INTERVAL_MS). */
    readonly cleanIntervalMs: number,
    /** Most live counters (MAX_COUNTERS, 0: no cap). */
    readonly maxCounters: number,
    /** Each bucket's share of MAX_COUNTERS, ceil(most / buckets). */
    readonly bucketCap: number,
    /** Whether this instance runs the cleaner (SCHEDULER_ENABLED). */
    readonly schedulerEnabled: boolean,
    /** How long a keyed increment's answer is kept (IDEMPOTENCY_TTL_SEC, in ms). */
    readonly idempotencyRetentionMs: number,
  ) {}

  /** Throws naming COUNTER_PRECISIONS when it does not parse (validateConfig has checked it already). */
  static from(config: AppConfig): CountersSettings {
    const parsed = parsePrecisionList(config.COUNTER_PRECISIONS);
    if ('error' in parsed) throw new Error(`COUNTER_PRECISIONS: ${parsed.error}`);
    return new CountersSettings(
      parsed.precisions,
      config.COUNTER_SAMPLES,
      config.COUNTER_INDEX_BUCKETS,
      config.COUNTER_CLEAN_BATCH,
      config.COUNTER_CLEAN_INTERVAL_MS,
      config.MAX_COUNTERS,
      // Each bucket is its own Cluster hash tag: a function sees only its own, so the cap is split.
      Math.ceil(config.MAX_COUNTERS / config.COUNTER_INDEX_BUCKETS),
      config.SCHEDULER_ENABLED,
      config.IDEMPOTENCY_TTL_SEC * 1000,
    );
  }
}
