import { Global, Module } from '@nestjs/common';
import { AppConfig } from '../common/config';
import { GovernanceSettings } from './governance.settings';
import { GrowthQuotas } from './growth-quotas';
import { LoadShedder } from './load-shedder';
import { MetricsController } from './metrics.controller';
import { MetricsGuard } from './metrics.guard';
import { PrometheusService } from './prometheus.service';
import { RateLimitGuard } from './rate-limit.guard';
import { RequestMetrics } from './request-metrics';

/**
 * Local request metrics on time wheels, Prometheus metrics, per-client rate limiting, per-client
 * quotas on growth (global: every feature's controller hands its writes a client budget), and load
 * shedding of requests while this instance's Redis backlog is full (LoadShedder).
 * The rate-limit guard is made global by bootstrap only when limiting is on: a global guard costs
 * every request an execution context and an await even when it lets everything through.
 */
@Global()
@Module({
  controllers: [MetricsController],
  providers: [
    {
      provide: GovernanceSettings,
      inject: [AppConfig],
      useFactory: (config: AppConfig) => GovernanceSettings.from(config),
    },
    PrometheusService,
    RequestMetrics,
    RateLimitGuard,
    MetricsGuard,
    LoadShedder,
    GrowthQuotas,
  ],
  exports: [RateLimitGuard, GrowthQuotas],
})
export class GovernanceModule {}
