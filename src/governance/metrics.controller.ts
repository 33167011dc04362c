import { Controller, Get, Header, Query } from '@nestjs/common';
import { ApiOperation, ApiProperty, ApiResponse, ApiTags } from '@nestjs/swagger';
import { AdminRoute } from '../common/route-decorators';
import { Clock } from '../common/clock';
import { OptionalIntProperty } from '../common/dto';
import { DEFAULT_LOCAL_READ_SPAN_SEC, LOCAL_READ_SPAN_SEC } from './governance.limits';
import { RouteFigures } from './local-metrics';
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
  @ApiProperty() requests!: number;
  @ApiProperty({ description: 'Answers with status >= 500' }) errors!: number;
  @ApiProperty({ description: 'Answers with status 400-499' }) clientErrors!: number;
  @ApiProperty() avgMs!: number;
  @ApiProperty() maxMs!: number;
}

export class LocalMetricsDto {
  @ApiProperty({ description: 'Seconds covered: the last complete seconds, the current one left out' })
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
  @Header('Content-Type', 'text/plain; version=0.0.4; charset=utf-8')
  @ApiOperation({ summary: 'Prometheus metrics (text format)' })
  metrics(): Promise<string> {
    return this.prometheus.registry.metrics();
  }

  @Get('admin/metrics/local')
  @AdminRoute()
  @ApiOperation({ summary: "This instance's per-route figures over the last N seconds (in-process time wheel)" })
  @ApiResponse({ status: 200, type: LocalMetricsDto })
  local(@Query() query: LocalMetricsQuery): LocalMetricsDto {
    const seconds = query.seconds ?? DEFAULT_LOCAL_READ_SPAN_SEC;
    return { seconds, routes: this.requests.local.lastSeconds(this.clock.nowMs(), seconds) };
  }
}
