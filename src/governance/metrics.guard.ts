import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { BearerToken } from '../common/bearer-token';
import { COMMON_MESSAGES as M } from '../common/common.messages';
import { GovernanceSettings } from './governance.settings';
import { AccessError } from '../common/errors';

/** GET /metrics: open when METRICS_TOKEN is unset, else the token is required (401 missing, 403 wrong). */
@Injectable()
export class MetricsGuard implements CanActivate {
  private readonly token?: BearerToken;

  constructor(settings: GovernanceSettings) {
    if (settings.metricsToken) this.token = new BearerToken(settings.metricsToken);
  }

  canActivate(context: ExecutionContext): boolean {
    if (!this.token) return true;
    const verdict = this.token.check(context.switchToHttp().getRequest<FastifyRequest>().headers.authorization);
    if (verdict === 'missing') throw new AccessError('METRICS_TOKEN_MISSING', M.metricsTokenMissing());
    if (verdict === 'wrong') throw new AccessError('METRICS_TOKEN_INVALID', M.metricsTokenInvalid());
    return true;
  }
}
