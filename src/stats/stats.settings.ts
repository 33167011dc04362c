import { AppConfig } from '../common/config';
import { settingsFrom } from '../common/settings';

/**
 * The settings the stats module reads (docs/stats.md), taken once from the validated configuration:
 * its providers name these, never AppConfig.
 */
export class StatsSettings extends settingsFrom((config: AppConfig) => ({
  /** Most live context/type pairs (MAX_STATS_PAIRS; 0: no cap). */
  maxPairs: config.MAX_STATS_PAIRS,
  /** How often the access times gathered in process are written (STATS_FLUSH_INTERVAL_MS). */
  flushIntervalMs: config.STATS_FLUSH_INTERVAL_MS,
  /** Time between two passes of the index pruner (STATS_INDEX_PRUNE_INTERVAL_MS). */
  indexPruneIntervalMs: config.STATS_INDEX_PRUNE_INTERVAL_MS,
  /** Most index entries one pruning step removes (STATS_INDEX_PRUNE_BATCH). */
  indexPruneBatch: config.STATS_INDEX_PRUNE_BATCH,
  /** Whether this instance runs the pruner (SCHEDULER_ENABLED). */
  schedulerEnabled: config.SCHEDULER_ENABLED,
  /** How long a keyed record's answer is kept (IDEMPOTENCY_TTL_SEC, in ms). */
  idempotencyRetentionMs: config.IDEMPOTENCY_TTL_SEC * 1000,
})) {}
