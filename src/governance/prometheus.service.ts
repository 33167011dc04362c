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
  private readonly requests = new Counter({
    name: 'trendboard_http_requests_total',
    help: 'HTTP requests answered',
    labelNames: ['method', 'route', 'status'],
    registers: [this.registry],
  });
  private readonly durations = new Histogram({
    name: 'trendboard_http_request_duration_seconds',
    help: 'HTTP request handling time',
    labelNames: ['method', 'route', 'status'],
    buckets: HTTP_BUCKETS_SEC,
    registers: [this.registry],
  });
  private readonly errorAnswers = new Counter({
    name: 'trendboard_http_error_answers_total',
    help: 'Error answers by machine code (RATE_LIMITED, QUOTA_EXCEEDED, REDIS_BUSY, REDIS_UNAVAILABLE...)',
    labelNames: ['code'],
    registers: [this.registry],
  });
  private readonly replays = new Counter({
    name: 'trendboard_idempotency_replays_total',
    help: 'Writes answered with a stored answer (Idempotent-Replayed: true): nothing applied',
    registers: [this.registry],
  });
  private readonly redisDurations = new Histogram({
    name: 'trendboard_redis_command_duration_seconds',
    help: 'Time from sending a Redis command (or script call) to its reply or error, on the client',
    labelNames: ['command'],
    buckets: REDIS_BUCKETS_SEC,
    registers: [this.registry],
  });
  private readonly redisCommandErrors = new Counter({
    name: 'trendboard_redis_command_errors_total',
    help: 'Redis commands that failed, by kind: timeout, connection, oom, refusal (a script refused by design), script, other',
    labelNames: ['kind'],
    registers: [this.registry],
  });

  constructor(redis: RedisService, jobs: JobRegistry, answered: AnsweredRequests, clock: Clock) {
    collectDefaultMetrics({ register: this.registry });
    // prom-client's sums of the per-type gauges below are gauges named *_total, which Prometheus
    // reserves for counters (promtool refuses them); sum() over the per-type series gives the same.
    for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'])
      this.registry.removeSingleMetric(name);
    this.registerRedisMetrics(redis);
    this.registerHttpMetrics(answered);
    this.registerJobTotals(jobs);
    this.registerJobTimes(jobs, clock);
  }

  private registerRedisMetrics(redis: RedisService): void {
    const redisErrors = new Counter({
      name: 'trendboard_redis_errors_total',
      help: 'Redis connection errors seen by the client',
      registers: [this.registry],
    });
    redis.client.on('error', () => redisErrors.inc());
    redis.observeCommands((command, durationMs, error) => {
      this.redisDurationsOf(command).observe(durationMs / 1000);
      if (error !== undefined) this.redisCommandErrors.inc({ kind: redisErrorKind(error) });
    });
    new Gauge({
      name: 'trendboard_redis_up',
      help: '1 while the Redis connection is ready, else 0',
      registers: [this.registry],
      collect() {
        this.set(redis.client.status === 'ready' ? 1 : 0);
      },
    });
    new Gauge({
      name: 'trendboard_redis_pending_commands',
      help: 'Redis commands sent and not yet answered (load shedding starts at REDIS_MAX_PENDING_COMMANDS)',
      registers: [this.registry],
      collect() {
        this.set(redis.pendingCommands());
      },
    });
  }

  private registerHttpMetrics(answered: AnsweredRequests): void {
    new Gauge({
      name: 'trendboard_http_requests_in_flight',
      help: 'HTTP requests received and not yet answered',
      registers: [this.registry],
      collect() {
        this.set(answered.requestsInFlight);
      },
    });
  }

  private registerJobTotals(jobs: JobRegistry): void {
    const jobCounter = (name: string, help: string, read: (stats: JobStats) => number) =>
      new Counter({
        name,
        help,
        labelNames: ['job'],
        registers: [this.registry],
        // The jobs keep their own totals; each scrape copies them (a reset, then the whole total).
        collect() {
          this.reset();
          for (const [job, stats] of jobs.entries()) this.inc({ job }, read(stats));
        },
      });
    jobCounter('trendboard_job_runs_total', 'Scheduled job passes run', (s) => s.runs);
    jobCounter('trendboard_job_failures_total', 'Scheduled job failures', (s) => s.failures);
    new Gauge({
      name: 'trendboard_job_last_duration_seconds',
      help: 'Duration of the last pass',
      labelNames: ['job'],
      registers: [this.registry],
      collect() {
        for (const [job, stats] of jobs.entries()) this.set({ job }, stats.lastDurationMs / 1000);
      },
    });
  }

  private registerJobTimes(jobs: JobRegistry, clock: Clock): void {
    new Gauge({
      name: 'trendboard_job_last_success_timestamp_seconds',
      help: 'Unix time of the end of the last pass without a failure (absent until one)',
      labelNames: ['job'],
      registers: [this.registry],
      collect() {
        this.reset();
        const nowMs = clock.nowMs();
        const perfNowMs = performance.now();
        for (const [job, stats] of jobs.entries()) {
          if (stats.lastSuccessPerfMs === undefined) continue;
          this.set({ job }, (nowMs - (perfNowMs - stats.lastSuccessPerfMs)) / 1000);
        }
      },
    });
    new Gauge({
      name: 'trendboard_job_seconds_since_success',
      help: 'Seconds since the end of the last pass without a failure (absent until one): alert when it grows past a few intervals',
      labelNames: ['job'],
      registers: [this.registry],
      collect() {
        this.reset();
        const perfNowMs = performance.now();
        for (const [job, stats] of jobs.entries()) {
          if (stats.lastSuccessPerfMs !== undefined) this.set({ job }, (perfNowMs - stats.lastSuccessPerfMs) / 1000);
        }
      },
    });
    new Gauge({
      name: 'trendboard_job_backlog',
      help: 'Work the last pass left for the next (ranking-expiry: boards still draining large expired slots)',
      labelNames: ['job'],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [job, stats] of jobs.entries()) if (stats.backlog !== undefined) this.set({ job }, stats.backlog);
      },
    });
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
