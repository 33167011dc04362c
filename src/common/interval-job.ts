import { Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { JobRegistry, JobStats } from './jobs';
import { isRedisTimeoutError, isRedisUnavailableError } from './redis-errors';

export interface IntervalJobOptions {
  /** Job name: the SchedulerRegistry interval, the /metrics `job` label and the log context. */
  name: string;
  enabled: boolean;
  intervalMs: number;
}

/**
 * A scheduled job on a fixed interval (registered in @nestjs/schedule's SchedulerRegistry). Passes
 * never overlap within a process (a tick during a pass joins it); a failed pass is logged and counted
 * and never stops the process. Safety across processes is each job's own business (atomic scripts).
 */
export abstract class IntervalJob<Result, Stats extends JobStats = JobStats>
  implements OnApplicationBootstrap, OnApplicationShutdown
{
  protected readonly logger: Logger;
  private running?: Promise<Result | undefined>;

  protected constructor(
    private readonly options: IntervalJobOptions,
    private readonly registry: SchedulerRegistry,
    jobs: JobRegistry,
    readonly stats: Stats,
  ) {
    this.logger = new Logger(options.name);
    jobs.register(options.name, stats);
  }

  /** One pass: returns its result and how many parts of it failed (logged by the job itself). */
  protected abstract runPass(): Promise<{ result: Result; failures: number }>;

  onApplicationBootstrap(): void {
    if (!this.options.enabled) return;
    const timer = setInterval(() => void this.tick(), this.options.intervalMs);
    timer.unref();
    this.registry.addInterval(this.options.name, timer);
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.registry.doesExist('interval', this.options.name)) this.registry.deleteInterval(this.options.name);
    await this.running;
  }

  /** Runs a pass now, or joins the one running. Never throws: undefined when the pass failed. */
  tick(): Promise<Result | undefined> {
    this.running ??= this.measuredPass().finally(() => (this.running = undefined));
    return this.running;
  }

  private async measuredPass(): Promise<Result | undefined> {
    const startedMs = performance.now();
    this.stats.runs++;
    try {
      const { result, failures } = await this.runPass();
      this.stats.failures += failures;
      if (failures === 0) this.stats.lastSuccessPerfMs = performance.now();
      return result;
    } catch (error) {
      this.stats.failures++;
      // While Redis is away every pass fails; the connection logs the outage once, so not each pass.
      if (isRedisUnavailableError(error) || isRedisTimeoutError(error))
        this.logger.debug(`pass failed: ${error instanceof Error ? error.message : String(error)}`);
      else this.logger.warn(`pass failed: ${error instanceof Error ? error.message : String(error)}`);
      return undefined;
    } finally {
      this.stats.lastDurationMs = performance.now() - startedMs;
    }
  }
}
