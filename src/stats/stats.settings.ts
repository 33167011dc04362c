import { AppConfig } from '../common/config';

/**
 * The settings the stats module reads (docs/stats.md), taken once from the validated configuration:
 * its providers name these, never AppConfig.
 */
export class StatsSettings {
  private constructor(
    /** Most live context/type pairs (MAX_STATS_PAIRS; 0: no cap). */
    readonly maxPairs: number,
    /** How often the access times gathered in process are written (STATS_FLUSH_INTERVAL_MS). */
    readonly flushIntervalMs: number,
    /** Time between two passes of the index pruner (STATS_INDEX_PRUNE_INTERVAL_MS). */
    readonly indexPruneIntervalMs: number,
    /** Most index entries one pruning step removes (STATS_INDEX_PRUNE_BATCH). */
    readonly indexPruneBatch: number,
    /** Whether this instance runs the pruner (SCHEDULER_ENABLED). */
    readonly schedulerEnabled: boolean,
    /** How long a keyed record's answer is kept (IDEMPOTENCY_TTL_SEC, in ms). */
    readonly idempotencyRetentionMs: number,
  ) {}

  static from(config: AppConfig): StatsSettings {
    return new StatsSettings(
      config.MAX_STATS_PAIRS,
      config.STATS_FLUSH_INTERVAL_MS,
      config.STATS_INDEX_PRUNE_INTERVAL_MS,
      config.STATS_INDEX_PRUNE_BATCH,
      config.SCHEDULER_ENABLED,
      config.IDEMPOTENCY_TTL_SEC * 1000,
    );
  }
}
