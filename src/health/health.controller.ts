import { Controller, Get, ServiceUnavailableException } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { HealthCheck, HealthCheckResult, HealthCheckService } from '@nestjs/terminus';
import { COMMON_MESSAGES as M } from '../common/common.messages';
import { NotReadyError } from '../common/errors';
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
