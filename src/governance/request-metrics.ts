import { Injectable, OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance } from 'fastify';
import { Clock } from '../common/clock';
import { UNMATCHED_ROUTE } from '../common/names';
import { LocalRouteMetrics } from './local-metrics';
import { PrometheusService } from './prometheus.service';

/**
 * Records every answered request, off the handler's path (Fastify onResponse), into the local time
 * wheels and Prometheus. Routes are keyed by pattern ("GET /boards/:board/top"), unmatched ones share
 * "<METHOD> {unmatched}", so the number of series stays bounded.
 */
@Injectable()
export class RequestMetrics implements OnModuleInit {
  readonly local = new LocalRouteMetrics();

  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly prometheus: PrometheusService,
    private readonly clock: Clock,
  ) {}

  onModuleInit(): void {
    const fastify = this.adapterHost.httpAdapter.getInstance<FastifyInstance>();
    fastify.addHook('onResponse', async (request, reply) => {
      const pattern = request.routeOptions.url ?? UNMATCHED_ROUTE;
      const durationMs = reply.elapsedTime;
      this.local.record(`${request.method} ${pattern}`, this.clock.nowMs(), durationMs, reply.statusCode);
      this.prometheus.observe(request.method, pattern, reply.statusCode, durationMs);
    });
  }
}
