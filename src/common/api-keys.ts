import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { COMMON_MESSAGES as M } from './common.messages';
import { AppConfig, parseApiKeys } from './config';
import { AccessError } from './errors';

/** The configured API keys (API_KEYS), kept only as SHA-256 digests. */
@Injectable()
export class ApiKeys {
  /** digest (hex) -> a short name for the key: its digest's first 12 hex characters, safe to log. */
  private readonly known = new Map<string, string>();

  constructor(config: AppConfig) {
    for (const key of parseApiKeys(config.API_KEYS)) this.known.set(digest(key), digest(key).slice(0, 12));
  }

  get configured(): boolean {
    return this.known.size > 0;
  }

  /**
   * The key a request presents (X-Api-Key), or undefined when it sends none or no key is configured.
   * A sent key that is not configured is a 401: a client cannot pass as a new one by inventing keys. Digests are compared as
   * map keys: equal-length digests of a secret, so timing tells nothing about the key.
   */
  identify(request: FastifyRequest): { name: string } | undefined {
    const header = request.headers['x-api-key'];
    if (header === undefined || !this.configured) return undefined;
    const name = typeof header === 'string' ? this.known.get(digest(header)) : undefined;
    if (name === undefined) throw new AccessError('API_KEY_INVALID', M.apiKeyInvalid());
    return { name };
  }
}

function digest(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Global when API_KEYS is set: a write that sends an X-Api-Key must send a configured one (else 401). */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(private readonly keys: ApiKeys) {}

  canActivate(context: ExecutionContext): boolean {
    if (context.getType() !== 'http') return true;
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    if (!READ_METHODS.has(request.method)) this.keys.identify(request);
    return true;
  }
}
