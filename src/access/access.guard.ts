import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import { BearerToken } from '../common/bearer-token';
import { COMMON_MESSAGES } from '../common/common.messages';
import { AppConfig } from '../common/config';
import { AccessError } from '../common/errors';
import { ACCESS_RULE } from './access.decorators';
import { ACCESS_MESSAGES as M } from './access.messages';
import { KeyGrant, refusalOf, RouteAccess, Scope } from './access-rules';
import { ApiKeysService } from './api-keys.service';
import { presentedKey } from './caller';

/**
 * The one access check, global: every route declares what it needs (Access), and this guard admits a
 * request or answers 401/403 with a code. With no key configured anywhere, every read and write is
 * admitted as before (the service logs at boot that writes are open); admin routes always need
 * ADMIN_TOKEN or a key with the admin scope.
 */
@Injectable()
export class AccessGuard implements CanActivate {
  private readonly adminToken?: BearerToken;
  private readonly publicReads: boolean;

  constructor(
    private readonly reflector: Reflector,
    private readonly keys: ApiKeysService,
    config: AppConfig,
  ) {
    if (config.ADMIN_TOKEN) this.adminToken = new BearerToken(config.ADMIN_TOKEN);
    this.publicReads = config.PUBLIC_READS;
  }

  /** Synchronous once the stored keys were read: a guard that awaits costs every request a promise. */
  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    if (context.getType() !== 'http') return true;
    const rule = this.reflector.getAllAndOverride<RouteAccess | undefined>(ACCESS_RULE, [
      context.getHandler(),
      context.getClass(),
    ]);
    if (!rule) throw new Error(`${context.getClass().name}.${context.getHandler().name} declares no access rule`);
    if (rule.scope === 'public') return true;
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    const secret = presentedKey(request);
    // ADMIN_TOKEN needs no stored key: the admin routes work while Redis is away.
    if (rule.scope === 'admin' && this.isAdminToken(secret)) return true;
    if (!this.keys.loaded) return this.keys.ready().then(() => this.admit(request, secret, rule));
    return this.admit(request, secret, rule);
  }

  private admit(
    request: FastifyRequest,
    secret: string | undefined,
    rule: Extract<RouteAccess, { scope: Scope }>,
  ): boolean {
    if (rule.scope === 'admin') return this.admitAdmin(request, secret);
    if (!this.keys.configured) return true;
    if (secret === undefined) {
      if (rule.scope === 'read' && this.publicReads) return true;
      throw new AccessError('API_KEY_MISSING', M.keyMissing(rule.scope));
    }
    const grant = this.keys.find(secret);
    if (!grant) throw new AccessError('API_KEY_INVALID', M.keyInvalid());
    this.admitGrant(request, grant, rule.scope, rule.nameParam);
    return true;
  }

  private isAdminToken(secret: string | undefined): boolean {
    return secret !== undefined && this.adminToken !== undefined && this.adminToken.matches(secret);
  }

  /** A key with the admin scope (ADMIN_TOKEN was checked first). */
  private admitAdmin(request: FastifyRequest, secret: string | undefined): boolean {
    const grant = secret === undefined ? undefined : this.keys.find(secret);
    if (grant) {
      this.admitGrant(request, grant, 'admin', undefined);
      return true;
    }
    if (!this.adminToken && !this.keys.hasAdminKey)
      throw new AccessError('ADMIN_DISABLED', COMMON_MESSAGES.adminDisabled());
    if (secret === undefined) throw new AccessError('ADMIN_TOKEN_MISSING', COMMON_MESSAGES.adminTokenMissing());
    throw new AccessError('ADMIN_TOKEN_INVALID', COMMON_MESSAGES.adminTokenInvalid());
  }

  /** Admits a known key when it has the scope (and the name is inside its prefixes): it names the caller. */
  private admitGrant(request: FastifyRequest, grant: KeyGrant, scope: Scope, nameParam: string | undefined): void {
    const name = nameParam === undefined ? undefined : paramOf(request, nameParam);
    const refusal = refusalOf(grant, scope, name);
    if (refusal?.reason === 'scope') throw new AccessError('API_KEY_SCOPE', M.scopeMissing(refusal.scope));
    if (refusal?.reason === 'prefix') throw new AccessError('API_KEY_SCOPE', M.prefixMissing(refusal.prefixes, name));
    request.caller = { client: `key:${grant.name}`, grant };
  }
}

function paramOf(request: FastifyRequest, name: string): string | undefined {
  const params = request.params;
  if (typeof params !== 'object' || params === null) return undefined;
  const value = (params as Record<string, unknown>)[name];
  return typeof value === 'string' ? value : undefined;
}
