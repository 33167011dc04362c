import { LOCAL_SPAN_SEC } from './governance.limits';
import { LatencyWheel } from '../common/time-wheel';

export interface RouteFigures {
  route: string;
  requests: number;
  /** Answers with status >= 500. */
  errors: number;
  /** Answers with status 400-499. */
  clientErrors: number;
  avgMs: number;
  maxMs: number;
}

/** Per-route request figures of this process over the last minute, on 1-second time wheels. */
export class LocalRouteMetrics {
  private readonly routes = new Map<string, { all: LatencyWheel; client: LatencyWheel }>();

  record(route: string, nowMs: number, durationMs: number, status: number): void {
    let wheels = this.routes.get(route);
    if (!wheels) {
      const options = { bucketMs: 1000, spanBuckets: LOCAL_SPAN_SEC, spareBuckets: 3 };
      wheels = { all: new LatencyWheel(options), client: new LatencyWheel(options) };
      this.routes.set(route, wheels);
    }
    wheels.all.record(nowMs, durationMs, status >= 500);
    if (status >= 400 && status < 500) wheels.client.record(nowMs, durationMs, false);
  }

  /** Figures over the last `seconds` complete seconds (the second being written is left out). */
  lastSeconds(nowMs: number, seconds: number): RouteFigures[] {
    const figures: RouteFigures[] = [];
    for (const [route, wheels] of this.routes) {
      const all = wheels.all.summary(nowMs, seconds);
      if (all.requests === 0) continue;
      const round = (ms: number) => Math.round(ms * 1000) / 1000;
      figures.push({
        route,
        requests: all.requests,
        errors: all.errors,
        clientErrors: wheels.client.summary(nowMs, seconds).requests,
        avgMs: round(all.avgMs),
        maxMs: round(all.maxMs),
      });
    }
    return figures.sort((a, b) => b.requests - a.requests || a.route.localeCompare(b.route));
  }
}
