import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ACCESS_RULE } from './access.decorators';
import { AccessGate } from './access-gate';
import { RouteAccess } from './access-rules';

/**
 * Global: every route declares what it needs (Access), and a route that does not is refused here, so a
 * new route is never open by mistake. The check itself (AccessGate) has run by now for every route
 * whose rule sits on its handler, before the body was read; a rule set on a controller class is
 * checked here. With no key configured anywhere, every read and write is admitted (the service logs at
 * boot that writes are open); admin routes always need ADMIN_TOKEN or a key with the admin scope.
 */
@Injectable()
export class AccessGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly gate: AccessGate,
  ) {}

  /**
   * Each handler's rule (its own, else its class's) with the class it was read for, read once:
   * metadata does not change after boot. A handler inherited by two classes is read again for the other.
   */
  private readonly rules = new WeakMap<object, { owner: object; rule: RouteAccess | undefined }>();

  /** Synchronous once the stored keys were read: a guard that awaits costs every request a promise. */
  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    if (context.getType() !== 'http') return true;
    const rule = this.ruleOf(context.getHandler(), context.getClass());
    if (!rule) throw new Error(`${context.getClass().name}.${context.getHandler().name} declares no access rule`);
    if (rule.scope === 'public') return true;
    // An http context's arguments are the request and the reply (switchToHttp would wrap them in a new object).
    const request = context.getArgByIndex<FastifyRequest>(0);
    if (request.accessChecked) return true;
    const checked = this.gate.check(request, rule, context.getArgByIndex<FastifyReply>(1));
    return checked === true ? true : checked.then(() => true);
  }

  /**
   * True when canActivate would admit the request at once without asking anything more: a public
   * route, or one whose rule the access gate checked before the body was read. FastRoutes then builds
   * no execution context for this guard.
   */
  admitsChecked(request: FastifyRequest, handler: object, owner: object): boolean {
    const rule = this.ruleOf(handler, owner);
    return rule !== undefined && (rule.scope === 'public' || request.accessChecked === true);
  }

  private ruleOf(handler: object, owner: object): RouteAccess | undefined {
    const known = this.rules.get(handler);
    if (known?.owner === owner) return known.rule;
    const rule = this.reflector.getAllAndOverride<RouteAccess | undefined>(ACCESS_RULE, [
      handler as () => unknown,
      owner as () => unknown,
    ]);
    this.rules.set(handler, { owner, rule });
    return rule;
  }
}
