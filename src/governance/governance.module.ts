import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { MetricsController } from './metrics.controller';
import { PrometheusService } from './prometheus.service';
import { RateLimitGuard } from './rate-limit.guard';
import { RequestMetrics } from './request-metrics';

/** Local request metrics on time wheels, Prometheus metrics, and per-client rate limiting of writes. */
@Module({
  controllers: [MetricsController],
  providers: [PrometheusService, RequestMetrics, { provide: APP_GUARD, useClass: RateLimitGuard }],
})
export class GovernanceModule {}
