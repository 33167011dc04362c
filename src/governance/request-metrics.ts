import { Injectable } from '@nestjs/common';
import { AnsweredRequests } from '../common/answered-requests';
import { Clock } from '../common/clock';
import { LocalRouteMetrics } from './local-metrics';
import { PrometheusService } from './prometheus.service';

/**
 * Records every answered request, off the handler's path (AnsweredRequests), into the local time
 * wheels and Prometheus. Routes are keyed by pattern ("GET /boards/:board/top"), unmatched ones share
 * "<METHOD> {unmatched}", so the number of series stays bounded.
 */
@Injectable()
export class RequestMetrics {
  readonly local = new LocalRouteMetrics();

  constructor(answered: AnsweredRequests, prometheus: PrometheusService, clock: Clock) {
    answered.subscribe((request) => {
      this.local.record(request.routeKey, clock.nowMs(), request.durationMs, request.statusCode);
      prometheus.observe(request);
    });
  }
}
