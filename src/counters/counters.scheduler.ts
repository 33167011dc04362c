import { Injectable } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { IntervalJob } from '../common/interval-job';
import { JobRegistry, JobStats } from '../common/jobs';
import { CleanPassResult, CountersService } from './counters.service';

/** The cleaner's stats: the job's runs/failures plus what it removed (read by /metrics as a JobStats). */
export interface CounterCleanerStats extends JobStats {
  passes: number;
  slicesRemoved: number;
  entriesRemoved: number;
}

/**
 * The counters cleaner. Every COUNTER_CLEAN_INTERVAL_MS (default one minute) it makes one pass over the
 * known index; a counter of precision p is trimmed on every max(1, floor(p / 60))-th pass, so daily
 * counters are not re-scanned every minute. The pass number lives in this process. Across processes
 * passes are safe because each page is one atomic script that re-checks emptiness before removing an
 * index entry.
 */
@Injectable()
export class CountersScheduler extends IntervalJob<CleanPassResult, CounterCleanerStats> {
  static readonly JOB = 'counters-cleaner';
  private pass = 0;

  constructor(
    private readonly counters: CountersService,
    registry: SchedulerRegistry,
    jobs: JobRegistry,
  ) {
    const { schedulerEnabled, cleanIntervalMs } = counters.settings;
    super({ name: CountersScheduler.JOB, enabled: schedulerEnabled, intervalMs: cleanIntervalMs }, registry, jobs, {
      runs: 0,
      failures: 0,
      lastDurationMs: 0,
      passes: 0,
      slicesRemoved: 0,
      entriesRemoved: 0,
    });
  }

  /** The pass number the next tick will use (0 first: every precision is due on pass 0). */
  get nextPass(): number {
    return this.pass;
  }

  protected async runPass(): Promise<{ result: CleanPassResult; failures: number }> {
    const result = await this.counters.cleanPass(this.pass++);
    this.stats.passes++;
    this.stats.slicesRemoved += result.slicesRemoved;
    this.stats.entriesRemoved += result.entriesRemoved;
    return { result, failures: result.failures };
  }
}
