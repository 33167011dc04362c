import { Injectable } from '@nestjs/common';
import { HealthIndicatorResult, HealthIndicatorService } from '@nestjs/terminus';
import { RedisFunctions } from '../redis/redis-functions';
import { RedisService } from '../redis/redis.service';

const PING_TIMEOUT_MS = 500;

@Injectable()
export class RedisHealthIndicator {
  constructor(
    private readonly redis: RedisService,
    private readonly functions: RedisFunctions,
    private readonly indicators: HealthIndicatorService,
  ) {}

  async isHealthy(key = 'redis'): Promise<HealthIndicatorResult> {
    const indicator = this.indicators.check(key);
    try {
      await this.redis.ping(PING_TIMEOUT_MS);
      // Not ready before its function libraries are on Redis (each call would find its function
      // missing); a load that failed is tried again here, so readiness recovers by itself.
      const functions = await this.functions.ensureLoaded();
      if (!functions.loaded) return indicator.down({ message: functions.reason });
      return indicator.up();
    } catch (error) {
      return indicator.down({ message: error instanceof Error ? error.message : String(error) });
    }
  }
}
