import type { FastifyInstance, FastifyRequest } from 'fastify';

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
  return (request.routeConfigRead ??= contextConfigOf(request));
}

/** Fastify's symbol of a request's route context (`kRouteContext`), looked for on the first request read (null: none). */
let routeContextKey: symbol | null | undefined;

/**
 * `routeOptions.config` without the view around it: Fastify's getter returns the route context's own
 * `config` inside a dozen-field object made for each read (about 130 bytes of every request). Fastify
 * exports no name for the context: a request without it (another Fastify) is read through the getter.
 */
function contextConfigOf(request: FastifyRequest): RouteConfig | undefined {
  if (routeContextKey === undefined) {
    routeContextKey = Object.getOwnPropertySymbols(request).find((key) => key.description === ROUTE_CONTEXT) ?? null;
  }
  const context = routeContextKey && (Reflect.get(request, routeContextKey) as { config?: RouteConfig } | undefined);
  return context ? context.config : request.routeOptions.config;
}

const ROUTE_CONTEXT = 'fastify.context';

/**
 * Fields the app sets on requests as they pass (routeConfigRead, the access check's), declared so
 * every request is built with them: a field added in the middle of a request's hooks changes its
 * hidden class there, and the code after it sees requests of several shapes. A field another plugin
 * declared already is left as it is.
 */
export function declareRequestFields(fastify: FastifyInstance, names: readonly string[]): void {
  for (const name of names) if (!fastify.hasRequestDecorator(name)) fastify.decorateRequest(name, undefined);
}
