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

/** What the guard reads of a handler's metadata, with the class it was read for. */
interface LimitedRoute {
  owner: object;
  rule: RouteAccess | undefined;
  costOf: RateCostOf | undefined;
}

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
  private readonly routes = new WeakMap<object, LimitedRoute>();

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

  /** The charge of a request's reads beyond the one its route counted (its client's `chargeReads`). */
  readsOf(request: FastifyRequest): (reads: number) => void {
    return (reads) => this.chargeReads(callerOf(request).client, reads);
  }

  /** The charge of a request's work counted in units, `perRead` units a read, beyond the one read its route counted. */
  unitsOf(request: FastifyRequest, perRead: number): (units: number) => void {
    const client = callerOf(request).client;
    return (units) => this.chargeReads(client, Math.ceil(units / perRead) - 1);
  }

  canActivate(context: ExecutionContext): boolean {
    if (context.getType() !== 'http') return true;
    const { rule, costOf } = this.routeOf(context);
    if (rule?.scope !== 'read' && rule?.scope !== 'write') return true;
    const limiter = this.limiters[rule.scope];
    if (!limiter) return true;
    // An http context's arguments are the request and the reply (switchToHttp would wrap them in a new object).
    const request = context.getArgByIndex<FastifyRequest>(0);
    const decision = limiter.check(callerOf(request).client, this.clock.nowMs(), costOf ? costOf(request.body) : 1);
    if (decision.allowed) return true;
    this.refuse(rule.scope, limiter, decision.retryAfterSec);
  }

  /**
   * A handler's access rule (its own, else its class's) and rate cost, read once with the class they were
   * read for: metadata does not change after boot. A handler inherited by two classes is read again for the other.
   */
  private routeOf(context: ExecutionContext): LimitedRoute {
    const handler = context.getHandler();
    const owner = context.getClass();
    const known = this.routes.get(handler);
    if (known?.owner === owner) return known;
    const route: LimitedRoute = {
      owner,
      rule: this.reflector.getAllAndOverride<RouteAccess | undefined>(ACCESS_RULE, [handler, owner]),
      costOf: this.reflector.get<RateCostOf | undefined>(RATE_COST, handler),
    };
    this.routes.set(handler, route);
    return route;
  }

  private refuse(kind: Limited, limiter: RateLimiter, retryAfterSec: number): never {
    const { perSecond, burst } = limiter.options;
    throw new RateLimitedError(M.rateLimited(kind, perSecond, burst, retryAfterSec), retryAfterSec);
  }
}
