import { Injectable } from '@nestjs/common';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { AnsweredRequest, AnsweredRequests } from '../common/answered-requests';
import { Clock } from '../common/clock';
import { JobRegistry, JobStats } from '../common/jobs';
import { redisErrorKind } from '../common/redis-errors';
import { RedisService } from '../redis/redis.service';
import { counterHandle, CountHandle, histogramHandle, ObserveHandle } from './fast-series';

/** Redis command latency buckets (s): a script call takes tens of µs in Redis, the timeout is ~1 s. */
const REDIS_BUCKETS_SEC = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1];
/** HTTP handling time buckets (s). */
const HTTP_BUCKETS_SEC = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

/**
 * The Prometheus registry of this app (one per app, so several apps can share a process in tests).
 * Names follow Prometheus' rules (`promtool check metrics` is a test): counters end in `_total`,
 * units are in the name and are base units (seconds, bytes).
 */
@Injectable()
export class PrometheusService {
  readonly registry = new Registry();
  private readonly requests = this.counter('trendboard_http_requests_total', 'HTTP requests answered', [
    'method',
    'route',
    'status',
  ]);
  private readonly durations = this.histogram(
    'trendboard_http_request_duration_seconds',
    'HTTP request handling time',
    ['method', 'route', 'status'],
    HTTP_BUCKETS_SEC,
  );
  private readonly errorAnswers = this.counter(
    'trendboard_http_error_answers_total',
    'Error answers by machine code (RATE_LIMITED, QUOTA_EXCEEDED, REDIS_BUSY, REDIS_UNAVAILABLE...)',
    ['code'],
  );
  private readonly replays = this.counter(
    'trendboard_idempotency_replays_total',
    'Writes answered with a stored answer (Idempotent-Replayed: true): nothing applied',
  );
  private readonly redisDurations = this.histogram(
    'trendboard_redis_command_duration_seconds',
    'Time from sending a Redis command (or script call) to its reply or error, on the client',
    ['command'],
    REDIS_BUCKETS_SEC,
  );
  private readonly redisCommandErrors = this.counter(
    'trendboard_redis_command_errors_total',
    'Redis commands that failed, by kind: timeout, connection, oom, refusal (a script refused by design), script, other',
    ['kind'],
  );

  constructor(redis: RedisService, jobs: JobRegistry, answered: AnsweredRequests, clock: Clock) {
    collectDefaultMetrics({ register: this.registry });
    // prom-client's sums of the per-type gauges below are gauges named *_total, which Prometheus
    // reserves for counters (promtool refuses them); sum() over the per-type series gives the same.
    for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'])
      this.registry.removeSingleMetric(name);
    this.registerRedisMetrics(redis);
    this.registerHttpMetrics(answered);
    this.registerJobTotals(jobs, clock);
    this.registerJobTimes(jobs, clock);
  }

  /** A counter on this app's registry. */
  private counter<Label extends string = never>(name: string, help: string, labelNames: Label[] = []) {
    return new Counter<Label>({ name, help, labelNames, registers: [this.registry] });
  }

  /** A histogram on this app's registry. */
  private histogram<Label extends string>(name: string, help: string, labelNames: Label[], buckets: number[]) {
    return new Histogram<Label>({ name, help, labelNames, buckets, registers: [this.registry] });
  }

  /** A gauge on this app's registry, set by `value` at each scrape. */
  private gauge(name: string, help: string, value: () => number): void {
    new Gauge({
      name,
      help,
      registers: [this.registry],
      collect() {
        this.set(value());
      },
    });
  }

  /**
   * A counter or gauge of each job on this app's registry. The jobs keep their own figures: each scrape
   * copies them (a reset, then each job's `value`, so inc sets it; undefined: no series for that job).
   * `at` is the scrape's time, once for every job.
   */
  private jobSeries(
    Kind: typeof Counter | typeof Gauge,
    [jobs, clock]: readonly [JobRegistry, Clock],
    name: string,
    help: string,
    value: (stats: JobStats, at: { nowMs: number; perfNowMs: number }) => number | undefined,
  ): void {
    new Kind<'job'>({
      name,
      help,
      labelNames: ['job'],
      registers: [this.registry],
      collect() {
        this.reset();
        const at = { nowMs: clock.nowMs(), perfNowMs: performance.now() };
        for (const [job, stats] of jobs.entries()) {
          const figure = value(stats, at);
          if (figure !== undefined) this.inc({ job }, figure);
        }
      },
    });
  }

  private registerRedisMetrics(redis: RedisService): void {
    const redisErrors = this.counter('trendboard_redis_errors_total', 'Redis connection errors seen by the client');
    redis.client.on('error', () => redisErrors.inc());
    redis.observeCommands((command, durationMs, error) => {
      this.redisDurationsOf(command).observe(durationMs / 1000);
      if (error !== undefined) this.redisCommandErrors.inc({ kind: redisErrorKind(error) });
    });
    this.gauge('trendboard_redis_up', '1 while the Redis connection is ready, else 0', () =>
      redis.client.status === 'ready' ? 1 : 0,
    );
    this.gauge(
      'trendboard_redis_pending_commands',
      'Redis commands sent and not yet answered (load shedding starts at REDIS_MAX_PENDING_COMMANDS)',
      () => redis.pendingCommands(),
    );
  }

  private registerHttpMetrics(answered: AnsweredRequests): void {
    this.gauge(
      'trendboard_http_requests_in_flight',
      'HTTP requests received and not yet answered',
      () => answered.requestsInFlight,
    );
  }

  private registerJobTotals(jobs: JobRegistry, clock: Clock): void {
    const of = [jobs, clock] as const;
    this.jobSeries(Counter, of, 'trendboard_job_runs_total', 'Scheduled job passes run', (s) => s.runs);
    this.jobSeries(Counter, of, 'trendboard_job_failures_total', 'Scheduled job failures', (s) => s.failures);
    const lastDuration = (s: JobStats) => s.lastDurationMs / 1000;
    this.jobSeries(Gauge, of, 'trendboard_job_last_duration_seconds', 'Duration of the last pass', lastDuration);
  }

  private registerJobTimes(jobs: JobRegistry, clock: Clock): void {
    const of = [jobs, clock] as const;
    this.jobSeries(
      Gauge,
      of,
      'trendboard_job_last_success_timestamp_seconds',
      'Unix time of the end of the last pass without a failure (absent until one)',
      (s, at) =>
        s.lastSuccessPerfMs === undefined ? undefined : (at.nowMs - (at.perfNowMs - s.lastSuccessPerfMs)) / 1000,
    );
    this.jobSeries(
      Gauge,
      of,
      'trendboard_job_seconds_since_success',
      'Seconds since the end of the last pass without a failure (absent until one): alert when it grows past a few intervals',
      (s, at) => (s.lastSuccessPerfMs === undefined ? undefined : (at.perfNowMs - s.lastSuccessPerfMs) / 1000),
    );
    this.jobSeries(
      Gauge,
      of,
      'trendboard_job_backlog',
      'Work the last pass left for the next (ranking-expiry: boards still draining large expired slots)',
      (s) => s.backlog,
    );
  }

  /**
   * Each (method, route, status)'s series, found once (fast-series.ts): by the answered request's
   * routeKey, then by status, so no key string is built per request.
   */
  private readonly series = new Map<string, Map<number, { requests: CountHandle; durations: ObserveHandle }>>();

  /** Each command name's series (a function's, or "command": a bounded set), found once (fast-series.ts). */
  private readonly redisSeries = new Map<string, ObserveHandle>();

  private redisDurationsOf(command: string): ObserveHandle {
    let series = this.redisSeries.get(command);
    if (!series) {
      series = histogramHandle(this.redisDurations, { command }, REDIS_BUCKETS_SEC);
      this.redisSeries.set(command, series);
    }
    return series;
  }

  observe({ method, route, routeKey, statusCode, durationMs, errorCode, replayed }: AnsweredRequest): void {
    let byStatus = this.series.get(routeKey);
    if (!byStatus) {
      byStatus = new Map();
      this.series.set(routeKey, byStatus);
    }
    let series = byStatus.get(statusCode);
    if (!series) {
      const labels = { method, route, status: String(statusCode) };
      series = {
        requests: counterHandle(this.requests, labels),
        durations: histogramHandle(this.durations, labels, HTTP_BUCKETS_SEC),
      };
      byStatus.set(statusCode, series);
    }
    series.requests.inc();
    series.durations.observe(durationMs / 1000);
    if (errorCode !== undefined) this.errorAnswers.inc({ code: errorCode });
    if (replayed) this.replays.inc();
  }
}
