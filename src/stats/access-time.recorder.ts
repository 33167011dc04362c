import { Injectable, Logger, OnApplicationBootstrap, OnModuleInit } from '@nestjs/common';
import { AnsweredRequests } from '../common/answered-requests';
import { Clock } from '../common/clock';
import { StatsSettings } from './stats.settings';
import { JobRegistry, JobStats } from '../common/jobs';
import { RedisService } from '../redis/redis.service';
import { ACCESS_TIME, StatsService } from './stats.service';
import { Batch } from './stats.store';
import {
  addToHistogram,
  addValue,
  emptyMoments,
  hourStartOf,
  HOUR_SEC,
  mergeHistograms,
  mergeMoments,
} from './stats-math';
import { routeContext } from './stats-names';

/**
 * Records every route's handling time (seconds) as context "<METHOD> <route pattern>", type AccessTime.
 * The request never waits on Redis: once it is answered (AnsweredRequests) its time is added to an in-process batch per
 * context and hour (count, sum, sumsq, min, max, mean, M2, histogram); a timer flushes all batches at
 * least once a second in one pipeline (one merge script call per context), and the last batch is
 * flushed at shutdown, after the HTTP server has closed and before Redis does. The timer is the
 * recorder's own, not a SchedulerRegistry interval: @nestjs/schedule clears those before the HTTP
 * server drains, and the requests answered during a long drain would wait for the last flush (lost if
 * the shutdown times out). It stops just before that last flush; whoever drives the flush itself (the
 * worst-case harness, between its measured rows) takes it over (takeOverFlushes).
 */
@Injectable()
export class AccessTimeRecorder implements OnModuleInit, OnApplicationBootstrap {
  static readonly JOB = 'stats-flush';
  readonly stats: JobStats = { runs: 0, failures: 0, lastDurationMs: 0 };
  private readonly logger = new Logger('AccessTime');
  private pending = new Map<string, Batch>();
  private chain: Promise<void> = Promise.resolve();
  /** Each context's pending key for its latest hour ("<hourStart> <context>"): made once an hour, not per request. */
  private readonly pendingKeys = new Map<string, { hourStart: number; key: string }>();
  /** Stats context of each "<METHOD> <pattern>" seen: routeContext's escaping runs once per route. */
  private readonly contexts = new Map<string, string>();
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly answered: AnsweredRequests,
    private readonly statsService: StatsService,
    private readonly clock: Clock,
    private readonly settings: StatsSettings,
    private readonly redis: RedisService,
    jobs: JobRegistry,
  ) {
    jobs.register(AccessTimeRecorder.JOB, this.stats);
  }

  onModuleInit(): void {
    this.answered.subscribe(({ method, route, routeKey, durationMs }) =>
      this.observe(this.contextOf(method, route, routeKey), durationMs / 1000),
    );
    this.redis.flushBeforeClose(() => {
      this.takeOverFlushes();
      return this.flush();
    });
  }

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.flush(), this.settings.flushIntervalMs);
    this.timer.unref();
  }

  /** Stops the periodic flush: from now on the caller flushes (the last flush at shutdown, or the harness). */
  takeOverFlushes(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Whether the periodic flush runs (until takeOverFlushes). */
  get flushesOnTimer(): boolean {
    return this.timer !== undefined;
  }

  private pendingKeyOf(hourStart: number, context: string): string {
    const known = this.pendingKeys.get(context);
    if (known?.hourStart === hourStart) return known.key;
    const key = `${hourStart} ${context}`;
    this.pendingKeys.set(context, { hourStart, key });
    return key;
  }

  /** Adds one handling time (seconds) to the batch of its context and the current hour. */
  observe(context: string, seconds: number): void {
    if (!Number.isFinite(seconds) || seconds < 0) return;
    const hourStart = hourStartOf(this.clock.nowMs());
    const key = this.pendingKeyOf(hourStart, context);
    let batch = this.pending.get(key);
    if (!batch) {
      batch = { context, type: ACCESS_TIME, hourStart, moments: emptyMoments(), histogram: new Map() };
      this.pending.set(key, batch);
    }
    addValue(batch.moments, seconds);
    addToHistogram(batch.histogram, seconds);
  }

  private contextOf(method: string, route: string, routeKey: string): string {
    let context = this.contexts.get(routeKey);
    if (context === undefined) {
      context = routeContext(method, route);
      this.contexts.set(routeKey, context);
    }
    return context;
  }

  /**
   * Writes every pending batch. Flushes run one after another; a call resolves once everything
   * observed before it has been written (or has failed and been put back). Never throws.
   */
  flush(): Promise<void> {
    this.chain = this.chain.then(() => this.flushOnce());
    return this.chain;
  }

  private async flushOnce(): Promise<void> {
    if (this.pending.size === 0) return;
    const batches = [...this.pending.values()];
    this.pending = new Map();
    const startedMs = performance.now();
    this.stats.runs++;
    try {
      const { failed, slowestError } = await this.statsService.flush(batches);
      const problems: string[] = [];
      if (failed.length > 0) problems.push(`${failed.length} of ${batches.length} batches failed`);
      if (slowestError !== undefined) problems.push(`slowest list not updated: ${messageOf(slowestError)}`);
      if (problems.length > 0) this.failedRun(problems.join('; '));
      else this.stats.lastSuccessPerfMs = performance.now();
      this.putBack(failed);
    } catch (error) {
      // Thrown before any batch was merged (e.g. no connection): every batch is retried.
      this.failedRun(messageOf(error));
      this.putBack(batches);
    } finally {
      this.stats.lastDurationMs = performance.now() - startedMs;
    }
  }

  private failedRun(reason: string): void {
    this.stats.failures++;
    const line = `access-time flush failed (${reason}); retrying with the next flush`;
    // During an outage every flush fails: the connection logs the outage once, so not each flush.
    if (this.redis.down) this.logger.debug(line);
    else this.logger.warn(line);
  }

  /** Merges failed batches back for the next flush, except those too old to be kept anyway. */
  private putBack(batches: Batch[]): void {
    const oldestKept = hourStartOf(this.clock.nowMs()) - HOUR_SEC;
    for (const failed of batches) {
      if (failed.hourStart < oldestKept) continue;
      const key = `${failed.hourStart} ${failed.context}`;
      const live = this.pending.get(key);
      if (!live) {
        this.pending.set(key, failed);
        continue;
      }
      mergeMoments(live.moments, failed.moments);
      mergeHistograms(live.histogram, failed.histogram);
    }
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
