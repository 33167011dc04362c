import { Injectable } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { RankingSettings } from '../core/ranking.settings';
import { IntervalJob } from '../../common/interval-job';
import { JobRegistry } from '../../common/jobs';
import { DuePassResult, ExpiryService } from './expiry.service';

/**
 * Expires the boards that have something due, on a fixed interval: each pass takes this interval's
 * sweep of the due index when no instance has (see ExpiryService.sweepDueIndex), then claims and
 * visits due boards until none is left. Instances share the visits (claims are atomic, with a lease);
 * expiry also runs lazily on requests, so a late or stopped scheduler never makes a read count stale
 * data.
 */
@Injectable()
export class RankingScheduler extends IntervalJob<DuePassResult> {
  static readonly JOB = 'ranking-expiry';
  private readonly leaseMs: number;
  private readonly claimBatch: number;
  private readonly sweepIntervalMs: number;

  constructor(
    private readonly expiry: ExpiryService,
    registry: SchedulerRegistry,
    settings: RankingSettings,
    jobs: JobRegistry,
  ) {
    super(
      { name: RankingScheduler.JOB, enabled: settings.scheduler.enabled, intervalMs: settings.scheduler.intervalMs },
      registry,
      jobs,
      { runs: 0, failures: 0, lastDurationMs: 0, backlog: 0 },
    );
    this.leaseMs = settings.scheduler.leaseMs;
    this.claimBatch = settings.scheduler.claimBatch;
    this.sweepIntervalMs = settings.scheduler.sweepIntervalMs;
  }

  protected async runPass(): Promise<{ result: DuePassResult; failures: number }> {
    const swept = await this.expiry.sweepDueIndex(this.sweepIntervalMs);
    if (swept !== null) this.logger.log(`sweep: ${swept} board(s) without a due entry entered into the due index`);
    const result = await this.expiry.expireDue({ leaseMs: this.leaseMs, claimBatch: this.claimBatch });
    this.stats.backlog = result.stillDraining + result.timedOut;
    if (result.stillDraining > 0)
      this.logger.log(`${result.stillDraining} board(s) still draining large expired slots`);
    if (result.timedOut > 0) this.logger.warn(`${result.timedOut} board(s) timed out: due again on the next pass`);
    return { result, failures: result.failures };
  }
}
