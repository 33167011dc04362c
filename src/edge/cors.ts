import fastifyCors from '@fastify/cors';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { corsOriginsOf, EdgeSettings } from './edge.settings';

/** Headers a browser page may send beyond the CORS-safelisted ones: what the API reads. */
export const CORS_ALLOWED_HEADERS = [
  'Content-Type',
  'Authorization',
  'X-Api-Key',
  'Idempotency-Key',
  'Idempotency-Retention',
  'X-Request-Id',
];
/** Answer headers a page may read: when to retry, whether a write was replayed, the id to report. */
export const CORS_EXPOSED_HEADERS = ['Retry-After', 'Idempotent-Replayed', 'X-Request-Id'];
/** How long a browser may reuse a preflight answer (s): one preflight per route per page and 10 minutes. */
export const CORS_MAX_AGE_SEC = 600;

/**
 * CORS for pages of the CORS_ORIGINS allow-list; nothing at all when it is empty (the default: no
 * header, and an OPTIONS is a 405). Registered before every other hook, so a refusal made in a hook
 * (401, 429, 503) carries the headers too and the page can read why. No credentials: keys and tokens
 * travel in headers a page sets itself, never in cookies.
 */
export async function corsFor(app: NestFastifyApplication, config: EdgeSettings): Promise<void> {
  const origins = corsOriginsOf(config);
  if (origins.length === 0) return;
  await app.register(fastifyCors, {
    origin: origins,
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'DELETE'],
    allowedHeaders: CORS_ALLOWED_HEADERS,
    exposedHeaders: CORS_EXPOSED_HEADERS,
    credentials: false,
    maxAge: CORS_MAX_AGE_SEC,
    // A preflight is answered by the plugin, before access checks: it carries no key by design.
    preflight: true,
    strictPreflight: true,
  });
}
