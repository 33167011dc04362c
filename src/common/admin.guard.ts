import {
  CanActivate,
  ExecutionContext,
  ForbiddenException,
  Injectable,
  ServiceUnavailableException,
  UnauthorizedException,
} from '@nestjs/common';
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { AppConfig } from './config';

/** Bearer-token guard for /admin routes. Digests make the comparison constant-time whatever the lengths. */
@Injectable()
export class AdminGuard implements CanActivate {
  private readonly expectedDigest?: Buffer;

  constructor(config: AppConfig) {
    if (config.ADMIN_TOKEN) this.expectedDigest = digest(config.ADMIN_TOKEN);
  }

  canActivate(context: ExecutionContext): boolean {
    if (!this.expectedDigest)
      throw new ServiceUnavailableException('Admin routes are disabled: ADMIN_TOKEN is not configured');
    const header = context.switchToHttp().getRequest<FastifyRequest>().headers.authorization;
    const match = typeof header === 'string' ? /^Bearer (.+)$/i.exec(header) : null;
    if (!match) throw new UnauthorizedException('Authorization: Bearer <ADMIN_TOKEN> is required');
    if (!timingSafeEqual(digest(match[1]), this.expectedDigest))
      throw new ForbiddenException('The admin token is wrong');
    return true;
  }
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}
