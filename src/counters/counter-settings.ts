import { AppConfig } from '../common/config';
import { parsePrecisionList } from './counter-math';

/** The counters part of the configuration, parsed once. */
export interface CounterSettings {
  /** Configured precisions, seconds, ascending. */
  precisions: number[];
  /** Samples kept per precision. */
  samples: number;
  /** Buckets the known index is split into. */
  buckets: number;
  /** Most index entries one cleaner script call visits. */
  cleanBatch: number;
  /** Time between two cleaner passes. */
  cleanIntervalMs: number;
  /** Most live counters (MAX_COUNTERS, 0: no cap) and each bucket's share, ceil(most / buckets). */
  maxCounters: number;
  bucketCap: number;
}

export function counterSettings(config: AppConfig): CounterSettings {
  const parsed = parsePrecisionList(config.COUNTER_PRECISIONS);
  if ('error' in parsed) throw new Error(`COUNTER_PRECISIONS: ${parsed.error}`);
  return {
    precisions: parsed.precisions,
    samples: config.COUNTER_SAMPLES,
    buckets: config.COUNTER_INDEX_BUCKETS,
    cleanBatch: config.COUNTER_CLEAN_BATCH,
    cleanIntervalMs: config.COUNTER_CLEAN_INTERVAL_MS,
    maxCounters: config.MAX_COUNTERS,
    // Each bucket is its own Cluster hash tag: a script sees only its own, so the cap is split.
    bucketCap: Math.ceil(config.MAX_COUNTERS / config.COUNTER_INDEX_BUCKETS),
  };
}
