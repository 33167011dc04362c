import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { Clock } from '../common/clock';
import { COMMON_MESSAGES as M } from '../common/common.messages';
import { ApiKeys } from '../common/api-keys';
import { AppConfig } from '../common/config';
import { RateLimitedError } from '../common/errors';
import { RateLimiter } from './rate-limiter';

const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Limits write requests per client in this instance: a configured API key is its client; anything
 * else counts by address (the peer, or the client a trusted proxy names: TRUST_PROXY).
 */
@Injectable()
export class RateLimitGuard implements CanActivate {
  private readonly limiter?: RateLimiter;

  constructor(
    config: AppConfig,
    private readonly clock: Clock,
    private readonly apiKeys: ApiKeys,
  ) {
    if (config.RATE_LIMIT_PER_SEC > 0) {
      this.limiter = new RateLimiter({
        perSecond: config.RATE_LIMIT_PER_SEC,
        burst: config.RATE_LIMIT_BURST || 2 * config.RATE_LIMIT_PER_SEC,
        maxClients: config.RATE_LIMIT_MAX_CLIENTS,
      });
    }
  }

  /** False when RATE_LIMIT_PER_SEC is 0: bootstrap then leaves the guard out of the request path. */
  get enabled(): boolean {
    return this.limiter !== undefined;
  }

  canActivate(context: ExecutionContext): boolean {
    if (!this.limiter || context.getType() !== 'http') return true;
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    if (READ_METHODS.has(request.method)) return true;
    const key = this.apiKeys.identify(request);
    const client = key ? `key:${key.name}` : `ip:${request.ip}`;
    const decision = this.limiter.check(client, this.clock.nowMs());
    if (decision.allowed) return true;
    const { perSecond, burst } = this.limiter.options;
    throw new RateLimitedError(M.rateLimited(perSecond, burst, decision.retryAfterSec), decision.retryAfterSec);
  }
}
