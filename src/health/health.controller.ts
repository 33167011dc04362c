import { Controller, Get, ServiceUnavailableException } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { HealthCheck, HealthCheckResult, HealthCheckService } from '@nestjs/terminus';
import { PublicRoute } from '../access/access.decorators';
import { COMMON_MESSAGES as M } from '../common/common.messages';
import { NotReadyError } from '../common/errors';
import { ErrorResponse } from '../edge/route-decorators';
import { RedisHealthIndicator } from './redis.health';

@ApiTags('operations')
@PublicRoute()
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
  // Terminus' own schemas describe its answer; a 503 here is an error body (toErrorBody) instead.
  @HealthCheck({ swaggerDocumentation: false })
  @ApiResponse({ status: 200, description: 'Redis answered' })
  @ErrorResponse(503, 'NOT_READY: `message` names what is down, `details` holds each dependency')
  @ApiOperation({ summary: 'Readiness: 200 when Redis answers a PING within 500 ms, else 503' })
  async ready(): Promise<HealthCheckResult> {
    try {
      return await this.health.check([() => this.redis.isHealthy()]);
    } catch (error) {
      // Terminus answers its whole result as the exception's response: name what is down instead.
      if (!(error instanceof ServiceUnavailableException)) throw error;
      const result = error.getResponse() as Partial<HealthCheckResult>;
      const down = Object.entries(result.error ?? {}).map(([name, state]) =>
        typeof state?.message === 'string' ? `${name} is down (${state.message})` : `${name} is down`,
      );
      throw new NotReadyError(M.notReady(down), result.details ?? {});
    }
  }
}
