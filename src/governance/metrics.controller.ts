import { Controller, Get, Header, Query, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiProperty, ApiPropertyOptional, ApiResponse, ApiTags } from '@nestjs/swagger';
import { IsInt, Max, Min } from 'class-validator';
import { AdminGuard } from '../common/admin.guard';
import { Clock } from '../common/clock';
import { IsOptionalNotNull, ToInt } from '../common/dto';
import { LOCAL_SPAN_SEC, RouteFigures } from './local-metrics';
import { PrometheusService } from './prometheus.service';
import { RequestMetrics } from './request-metrics';

export class LocalMetricsQuery {
  @ApiPropertyOptional({ minimum: 1, maximum: LOCAL_SPAN_SEC, default: 10, description: 'Complete seconds to cover' })
  @IsOptionalNotNull()
  @ToInt()
  @Max(LOCAL_SPAN_SEC)
  @Min(1)
  @IsInt()
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
  @UseGuards(AdminGuard)
  @ApiBearerAuth()
  @ApiOperation({ summary: "This instance's per-route figures over the last N seconds (in-process time wheel)" })
  @ApiResponse({ status: 200, type: LocalMetricsDto })
  local(@Query() query: LocalMetricsQuery): LocalMetricsDto {
    const seconds = query.seconds ?? 10;
    return { seconds, routes: this.requests.local.lastSeconds(this.clock.nowMs(), seconds) };
  }
}
