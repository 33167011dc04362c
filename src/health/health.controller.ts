import { Controller, Get } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { HealthCheck, HealthCheckResult, HealthCheckService } from '@nestjs/terminus';
import { RedisHealthIndicator } from './redis.health';

@ApiTags('operations')
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly redis: RedisHealthIndicator,
  ) {}

  @Get('live')
  @ApiOperation({ summary: 'Liveness: 200 while the process runs' })
  @ApiResponse({ status: 200 })
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  @Get('ready')
  @HealthCheck()
  @ApiOperation({ summary: 'Readiness: 200 when Redis answers a PING within 500 ms, else 503' })
  ready(): Promise<HealthCheckResult> {
    return this.health.check([() => this.redis.isHealthy()]);
  }
}
