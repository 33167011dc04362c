import type { FastifyRequest } from 'fastify';

declare module 'fastify' {
  interface FastifyRequest {
    /** Who makes the request, set by the access check (absent on requests no route matched). */
    caller?: Caller;
  }
}

/** The client a request counts against (rate limits, quotas): its API key, else its address. */
export interface Caller {
  /** `key:<name>` for a request with a known key, `ip:<network>` otherwise (AccessGate: CLIENT_IPV4_PREFIX, CLIENT_IPV6_PREFIX). */
  client: string;
}

/**
 * The caller of a request: the key AccessGuard found, else the address (the peer, or the client a
 * trusted proxy names: TRUST_PROXY). A key that is not known never names a client: it was refused.
 */
export function callerOf(request: FastifyRequest): Caller {
  return request.caller ?? { client: `ip:${request.ip}` };
}

/** The key a request presents: `Authorization: Bearer <key>` or `X-Api-Key: <key>` (the first if both). */
export function presentedKey(request: FastifyRequest): string | undefined {
  const authorization = request.headers.authorization;
  if (typeof authorization === 'string') {
    const match = /^Bearer (.+)$/i.exec(authorization);
    if (match) return match[1];
  }
  const header = request.headers['x-api-key'];
  return typeof header === 'string' ? header : undefined;
}
