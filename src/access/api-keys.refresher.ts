import { Injectable } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { AccessSettings } from './access.settings';
import { IntervalJob } from '../common/interval-job';
import { isRedisTimeoutError, isRedisUnavailableError } from '../common/redis-errors';
import { JobRegistry } from '../common/jobs';
import { ApiKeysService } from './api-keys.service';

/** Reads the stored API keys every API_KEYS_REFRESH_MS: keys made or revoked elsewhere count here. */
@Injectable()
export class ApiKeysRefresher extends IntervalJob<void> {
  static readonly JOB = 'api-keys-refresh';

  constructor(
    private readonly keys: ApiKeysService,
    registry: SchedulerRegistry,
    config: AccessSettings,
    jobs: JobRegistry,
  ) {
    super({ name: ApiKeysRefresher.JOB, enabled: true, intervalMs: config.API_KEYS_REFRESH_MS }, registry, jobs, {
      runs: 0,
      failures: 0,
      lastDurationMs: 0,
    });
  }

  /** A Redis that is away is counted, not logged every few seconds: the Redis client says so itself. */
  protected async runPass(): Promise<{ result: void; failures: number }> {
    try {
      await this.keys.reload();
      return { result: undefined, failures: 0 };
    } catch (error) {
      if (isRedisUnavailableError(error) || isRedisTimeoutError(error)) return { result: undefined, failures: 1 };
      throw error;
    }
  }
}
