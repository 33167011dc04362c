import { Injectable } from '@nestjs/common';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { JobRegistry } from '../common/jobs';
import { RedisService } from '../redis/redis.service';

/** The Prometheus registry of this app (one per app, so several apps can share a process in tests). */
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
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [this.registry],
  });

  constructor(redis: RedisService, jobs: JobRegistry) {
    collectDefaultMetrics({ register: this.registry });
    const redisErrors = new Counter({
      name: 'trendboard_redis_errors_total',
      help: 'Redis connection errors seen by the client',
      registers: [this.registry],
    });
    redis.client.on('error', () => redisErrors.inc());
    const jobGauge = (
      name: string,
      help: string,
      read: (stats: { runs: number; failures: number; lastDurationMs: number }) => number,
    ) =>
      new Gauge({
        name,
        help,
        labelNames: ['job'],
        registers: [this.registry],
        collect() {
          for (const [job, stats] of jobs.entries()) this.set({ job }, read(stats));
        },
      });
    jobGauge('trendboard_job_runs_total', 'Scheduled job passes run', (s) => s.runs);
    jobGauge('trendboard_job_failures_total', 'Scheduled job failures', (s) => s.failures);
    jobGauge('trendboard_job_last_duration_seconds', 'Duration of the last pass', (s) => s.lastDurationMs / 1000);
  }

  /** Labelled children, kept per (method, route, status): prom-client would hash the labels on every call. */
  private readonly series = new Map<
    string,
    { requests: { inc(): void }; durations: { observe(value: number): void } }
  >();

  observe(method: string, route: string, status: number, durationMs: number): void {
    const key = `${method} ${status} ${route}`;
    let series = this.series.get(key);
    if (!series) {
      const labels = { method, route, status: String(status) };
      series = { requests: this.requests.labels(labels), durations: this.durations.labels(labels) };
      this.series.set(key, series);
    }
    series.requests.inc();
    series.durations.observe(durationMs / 1000);
  }
}
