import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { COMMON_MESSAGES as M } from './common.messages';
import { AppConfig } from './config';
import { AccessError } from './errors';

/** Bearer-token guard for /admin routes. Digests make the comparison constant-time whatever the lengths. */
@Injectable()
export class AdminGuard implements CanActivate {
  private readonly expectedDigest?: Buffer;

  constructor(config: AppConfig) {
    if (config.ADMIN_TOKEN) this.expectedDigest = digest(config.ADMIN_TOKEN);
  }

  canActivate(context: ExecutionContext): boolean {
    if (!this.expectedDigest) throw new AccessError('ADMIN_DISABLED', M.adminDisabled());
    const header = context.switchToHttp().getRequest<FastifyRequest>().headers.authorization;
    const match = typeof header === 'string' ? /^Bearer (.+)$/i.exec(header) : null;
    if (!match) throw new AccessError('ADMIN_TOKEN_MISSING', M.adminTokenMissing());
    if (!timingSafeEqual(digest(match[1]), this.expectedDigest))
      throw new AccessError('ADMIN_TOKEN_INVALID', M.adminTokenInvalid());
    return true;
  }
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}
