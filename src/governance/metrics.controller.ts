import { Controller, Get, Header, Query, UseGuards } from '@nestjs/common';
import { ApiOperation, ApiProperty, ApiResponse, ApiTags } from '@nestjs/swagger';
import { AdminRoute, PublicRoute } from '../access/access.decorators';
import { BEARER_SCHEME } from '../edge/security-schemes';
import { ErrorResponse } from '../edge/route-decorators';
import { Clock } from '../common/clock';
import { OptionalIntProperty } from '../common/dto';
import { DEFAULT_LOCAL_READ_SPAN_SEC, LOCAL_READ_SPAN_SEC } from './governance.limits';
import { RouteFigures } from './local-metrics';
import { MetricsGuard } from './metrics.guard';
import { PrometheusService } from './prometheus.service';
import { RequestMetrics } from './request-metrics';

export class LocalMetricsQuery {
  @OptionalIntProperty(
    LOCAL_READ_SPAN_SEC,
    { default: DEFAULT_LOCAL_READ_SPAN_SEC, description: 'Complete seconds to cover' },
    { fromQuery: true },
  )
  seconds?: number;
}

export class RouteFiguresDto implements RouteFigures {
  @ApiProperty({ example: 'GET /boards/:board/top' }) route!: string;
  @ApiProperty({ type: 'integer', minimum: 0 }) requests!: number;
  @ApiProperty({ type: 'integer', minimum: 0, description: 'Answers with status >= 500' }) errors!: number;
  @ApiProperty({ type: 'integer', minimum: 0, description: 'Answers with status 400-499' })
  clientErrors!: number;
  @ApiProperty() avgMs!: number;
  @ApiProperty() maxMs!: number;
}

export class LocalMetricsDto {
  @ApiProperty({
    type: 'integer',
    minimum: LOCAL_READ_SPAN_SEC.min,
    maximum: LOCAL_READ_SPAN_SEC.max,
    description: 'Seconds covered: the last complete seconds, the current one left out',
  })
  seconds!: number;
  @ApiProperty({ type: [RouteFiguresDto] }) routes!: RouteFiguresDto[];
}

@ApiTags('operations')
@Controller()
export class MetricsController {
  constructor(
    private readonly requests: RequestMetrics,
    private readonly prometheus: PrometheusService,
    private readonly clock: Clock,
  ) {}

  @Get('metrics')
  @PublicRoute()
  @UseGuards(MetricsGuard)
  @Header('Content-Type', 'text/plain; version=0.0.4; charset=utf-8')
  @ApiOperation({
    summary: 'Prometheus metrics (text format); needs the METRICS_TOKEN when one is configured',
    // The token when METRICS_TOKEN is set, else nothing ({}: anonymous).
    security: [{ [BEARER_SCHEME]: [] }, {}],
  })
  @ApiResponse({
    status: 200,
    description: 'Prometheus text format 0.0.4',
    content: { 'text/plain': { schema: { type: 'string' } } },
  })
  @ErrorResponse(401, 'METRICS_TOKEN_MISSING')
  @ErrorResponse(403, 'METRICS_TOKEN_INVALID')
  metrics(): Promise<string> {
    return this.prometheus.registry.metrics();
  }

  @Get('admin/metrics/local')
  @AdminRoute()
  @ErrorResponse(400, 'INVALID_INPUT: the message names the field')
  @ErrorResponse(503, 'ADMIN_DISABLED: neither ADMIN_TOKEN nor an admin key is configured')
  @ApiOperation({ summary: "This instance's per-route figures over the last N seconds (in-process time wheel)" })
  @ApiResponse({ status: 200, type: LocalMetricsDto })
  local(@Query() query: LocalMetricsQuery): LocalMetricsDto {
    const seconds = query.seconds ?? DEFAULT_LOCAL_READ_SPAN_SEC;
    return { seconds, routes: this.requests.local.lastSeconds(this.clock.nowMs(), seconds) };
  }
}
