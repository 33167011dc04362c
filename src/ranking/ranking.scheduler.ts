import { Injectable } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { AppConfig } from '../common/config';
import { IntervalJob } from '../common/interval-job';
import { JobRegistry } from '../common/jobs';
import { RankingService } from './ranking.service';

/**
 * Advances every board's windows on a fixed interval. Expiry also runs lazily on requests, so a late
 * or stopped scheduler never makes a read count stale data; several instances may run it at once
 * because each expire call is one atomic script.
 */
@Injectable()
export class RankingScheduler extends IntervalJob<void> {
  static readonly JOB = 'ranking-expiry';

  constructor(
    private readonly ranking: RankingService,
    registry: SchedulerRegistry,
    config: AppConfig,
    jobs: JobRegistry,
  ) {
    super(
      { name: RankingScheduler.JOB, enabled: config.SCHEDULER_ENABLED, intervalMs: config.SCHEDULER_INTERVAL_MS },
      registry,
      jobs,
      { runs: 0, failures: 0, lastDurationMs: 0 },
    );
  }

  protected async runPass(): Promise<{ result: void; failures: number }> {
    const result = await this.ranking.expireAll();
    if (result.stillDraining > 0)
      this.logger.log(`${result.stillDraining} board(s) still draining large expired slots`);
    return { result: undefined, failures: result.failures };
  }
}
