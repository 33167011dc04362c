import type { FastifyRequest } from 'fastify';

/** What the route of a request declares: Fastify's route `config`, which holds its url pattern and method too. */
export type RouteConfig = FastifyRequest['routeOptions']['config'];

declare module 'fastify' {
  interface FastifyRequest {
    /** routeConfigOf's copy of the route's config, read once per request. */
    routeConfigRead?: RouteConfig;
  }
}

/**
 * The config of the route a request matched, read once per request: Fastify builds `routeOptions`
 * anew on every read (a dozen fields and a router lookup), and the access gate, the body parser and
 * the answered-request hook all ask for it. Read first by request hooks, after any not-found
 * rerouting (the adapter's hooks run before the app's); a reader after the answer checks `is404` too.
 */
export function routeConfigOf(request: FastifyRequest): RouteConfig | undefined {
  return (request.routeConfigRead ??= request.routeOptions.config);
}
