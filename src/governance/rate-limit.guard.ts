import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import { ACCESS_RULE } from '../access/access.decorators';
import type { RouteAccess } from '../access/access-rules';
import { callerOf } from '../edge/caller';
import { Clock } from '../common/clock';
import { COMMON_MESSAGES as M } from '../common/common.messages';
import { GovernanceSettings, RateBudget } from './governance.settings';
import { RateLimitedError } from '../common/errors';
import { RateLimiter } from '../common/rate-limiter';
import { RATE_COST, RateCostOf } from './rate-cost';

type Limited = 'read' | 'write';

/**
 * Limits read and write requests per client in this instance, each kind on its own budget: a request
 * with an API key counts against its key, any other against its address (the peer, or the client a
 * trusted proxy names: TRUST_PROXY). Admin routes and public routes (probes, metrics) are not limited.
 * A route marked with RateCost counts for several requests (a batch: one per entry; a cost above the
 * burst passes only on an empty budget, see RateLimiter.peek). Runs after AccessGuard, which names the
 * caller, and after the body is parsed.
 */
@Injectable()
export class RateLimitGuard implements CanActivate {
  private readonly limiters: Partial<Record<Limited, RateLimiter>> = {};

  constructor(
    settings: GovernanceSettings,
    private readonly clock: Clock,
    private readonly reflector: Reflector,
  ) {
    const budgets: Record<Limited, RateBudget> = { write: settings.writeRate, read: settings.readRate };
    for (const kind of ['read', 'write'] as const) {
      const { perSecond, burst } = budgets[kind];
      if (perSecond > 0) {
        this.limiters[kind] = new RateLimiter({
          perSecond,
          burst: burst || 2 * perSecond,
          maxClients: settings.maxClients,
        });
      }
    }
  }

  /** False when both rates are 0: bootstrap then leaves the guard out of the request path. */
  get enabled(): boolean {
    return this.limiters.read !== undefined || this.limiters.write !== undefined;
  }

  /**
   * Counts `cost` more reads against a client (what a live stream adds to the read its route counted),
   * at most the read burst so a stream can always open; 429 RATE_LIMITED when its budget lacks them.
   */
  chargeReads(client: string, cost: number): void {
    const limiter = this.limiters.read;
    if (!limiter || cost <= 0) return;
    const decision = limiter.check(client, this.clock.nowMs(), Math.min(cost, limiter.options.burst - 1));
    if (!decision.allowed) this.refuse('read', limiter, decision.retryAfterSec);
  }

  canActivate(context: ExecutionContext): boolean {
    if (context.getType() !== 'http') return true;
    const rule = this.reflector.getAllAndOverride<RouteAccess | undefined>(ACCESS_RULE, [
      context.getHandler(),
      context.getClass(),
    ]);
    if (rule?.scope !== 'read' && rule?.scope !== 'write') return true;
    const limiter = this.limiters[rule.scope];
    if (!limiter) return true;
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    const costOf = this.reflector.get<RateCostOf | undefined>(RATE_COST, context.getHandler());
    const decision = limiter.check(callerOf(request).client, this.clock.nowMs(), costOf ? costOf(request.body) : 1);
    if (decision.allowed) return true;
    this.refuse(rule.scope, limiter, decision.retryAfterSec);
  }

  private refuse(kind: Limited, limiter: RateLimiter, retryAfterSec: number): never {
    const { perSecond, burst } = limiter.options;
    throw new RateLimitedError(M.rateLimited(kind, perSecond, burst, retryAfterSec), retryAfterSec);
  }
}
