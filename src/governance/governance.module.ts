import { Module } from '@nestjs/common';
import { MetricsController } from './metrics.controller';
import { PrometheusService } from './prometheus.service';
import { RateLimitGuard } from './rate-limit.guard';
import { RequestMetrics } from './request-metrics';

/**
 * Local request metrics on time wheels, Prometheus metrics, and per-client rate limiting of writes.
 * The rate-limit guard is made global by bootstrap only when limiting is on: a global guard costs
 * every request an execution context and an await even when it lets everything through.
 */
@Module({
  controllers: [MetricsController],
  providers: [PrometheusService, RequestMetrics, RateLimitGuard],
  exports: [RateLimitGuard],
})
export class GovernanceModule {}
