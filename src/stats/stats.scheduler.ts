import { Injectable } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { StatsSettings } from './stats.settings';
import { IntervalJob } from '../common/interval-job';
import { JobRegistry, JobStats } from '../common/jobs';
import { MAX_PRUNE_STEPS_PER_PASS } from './stats.limits';
import { StatsService } from './stats.service';

/** The pruner's stats: the job's runs/failures plus the index entries it removed. */
export interface StatsPrunerStats extends JobStats {
  entriesRemoved: number;
}

/**
 * Removes stats index entries of pairs not recorded this or last hour (their hashes expire by
 * themselves), in steps of STATS_INDEX_PRUNE_BATCH entries, each one short script, so the index never
 * waits for an admin listing to shrink. Several instances may run it at once: a step removes only
 * entries that are stale when it runs.
 */
@Injectable()
export class StatsIndexScheduler extends IntervalJob<{ removed: number; steps: number }, StatsPrunerStats> {
  static readonly JOB = 'stats-index-pruner';
  private readonly batch: number;

  constructor(
    private readonly service: StatsService,
    registry: SchedulerRegistry,
    settings: StatsSettings,
    jobs: JobRegistry,
  ) {
    super(
      {
        name: StatsIndexScheduler.JOB,
        enabled: settings.schedulerEnabled,
        intervalMs: settings.indexPruneIntervalMs,
      },
      registry,
      jobs,
      { runs: 0, failures: 0, lastDurationMs: 0, entriesRemoved: 0 },
    );
    this.batch = settings.indexPruneBatch;
  }

  protected async runPass(): Promise<{ result: { removed: number; steps: number }; failures: number }> {
    const result = await this.service.pruneIndex(this.batch, MAX_PRUNE_STEPS_PER_PASS);
    this.stats.entriesRemoved += result.removed;
    return { result, failures: 0 };
  }
}
