import { isIP } from 'node:net';
import { ValidateBy } from 'class-validator';
import {
  BoolSetting,
  IntSetting,
  IntSettings,
  IntSettingsTable,
  SHARED_INT_SETTINGS,
  validateSettings,
} from '../common/settings';

/** TRUST_PROXY as Fastify's trustProxy option: false, a hop count, or a list of addresses/CIDRs. */
export function trustProxyOf(config: { TRUST_PROXY: string }): false | number | string[] {
  const value = config.TRUST_PROXY.trim();
  if (value === '') return false;
  if (/^\d+$/.test(value)) return Number(value);
  return value.split(',').map((part) => part.trim());
}

export function isTrustProxy(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  if (value.trim() === '') return true;
  if (/^\d+$/.test(value.trim())) return Number(value) >= 1 && Number(value) <= 10;
  return value
    .split(',')
    .every((part) => isIP(part.trim().split('/')[0]) !== 0 && /^[^/]+(\/\d{1,3})?$/.test(part.trim()));
}

/** One origin as a browser sends it: scheme, host, optional port; no path, no trailing slash. */
const ORIGIN = /^https?:\/\/(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+)(:\d{1,5})?$/;
export const ORIGIN_LIST_RULE =
  'comma-separated origins like https://app.example.com or http://localhost:5173 (scheme://host[:port], no path, no *)';

export function isOriginList(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  return value.trim() === '' || value.split(',').every((part) => ORIGIN.test(part.trim()));
}

/** CORS_ORIGINS as a list (empty: CORS off). */
export function corsOriginsOf(config: { CORS_ORIGINS: string }): string[] {
  return config.CORS_ORIGINS.split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '');
}

/** The HTTP edge's integer settings: bounds and default of each. */
const EDGE_INT_SETTINGS = {
  /**
   * A socket silent this long is closed: one that never sends a request, and one whose answer has not
   * started that long (Node's socket inactivity timeout). 30 s: far above any answer (Redis commands
   * time out in 0.5 s) and above the coming event stream's 15 s heartbeat, yet a socket opened and
   * left idle is gone well before the 75 s the review measured.
   */
  HTTP_CONNECTION_TIMEOUT_MS: { min: 100, max: 600_000, byDefault: 30_000 },

  /**
   * Longest from a request's first byte to its last (Node's requestTimeout): a trickled body is
   * answered 408 and closed, nothing applied. 30 s still takes the largest body (a 1 MB batch) over a
   * link of 300 kbit/s.
   */
  HTTP_REQUEST_TIMEOUT_MS: { min: 100, max: 600_000, byDefault: 30_000 },

  /**
   * How long an idle keep-alive socket is kept after an answer. 72 s (Fastify's default) outlasts the
   * 60 s idle timeout of common load balancers, so the balancer, not the service, closes a pooled
   * socket: the other way round it may send a request on a socket just closed and answer a 502.
   * Directly exposed, a few seconds is enough.
   */
  HTTP_KEEP_ALIVE_TIMEOUT_MS: { min: 100, max: 600_000, byDefault: 72_000 },

  /**
   * Open connections the server accepts at once; one more is closed on arrival. An idle socket costs
   * about 12 KB (the review's 18 500 sockets took 218 MB): 10 000 bound that near 120 MB and stay
   * well under common file-descriptor limits, while a load balancer's pool needs a few hundred.
   */
  // LiveSettings names it too: the live streams take at most half of it.
  HTTP_MAX_CONNECTIONS: SHARED_INT_SETTINGS.HTTP_MAX_CONNECTIONS,

  /**
   * Open connections one client (its peer address's network: CLIENT_IPV4_PREFIX, CLIENT_IPV6_PREFIX)
   * may hold; one more is closed on arrival. 256 is far above what a browser (6 per origin) or a
   * backend's pool opens, and 39 clients cannot fill HTTP_MAX_CONNECTIONS between them. Connections
   * of a trusted proxy (TRUST_PROXY) are not counted: it carries many clients.
   */
  HTTP_CONNECTIONS_PER_CLIENT: { min: 1, max: 1_000_000, byDefault: 256 },
} as const satisfies IntSettingsTable;

/** The settings the HTTP edge reads (docs/configuration.md), validated before the app is built. */
export class EdgeSettings extends IntSettings(EDGE_INT_SETTINGS) {
  /**
   * Proxies whose X-Forwarded-For is believed, as Fastify's trustProxy takes them: a number of hops, or
   * comma-separated addresses/CIDRs. Empty (default): the peer address is the client.
   */
  @ValidateBy({
    name: 'isTrustProxy',
    validator: {
      validate: isTrustProxy,
      defaultMessage: () => 'TRUST_PROXY must be a number of hops (1-10) or comma-separated IP addresses/CIDRs',
    },
  })
  TRUST_PROXY = '';

  /**
   * Longest from a request's first byte to the end of its header block (Node's headersTimeout): a
   * trickled header is answered 408 and closed. 10 s is what proxies commonly give (HAProxy's
   * `timeout http-request`); our clients send a few hundred bytes of headers.
   */
  @IntSetting(100, 600_000)
  @ValidateBy({
    name: 'isWithinRequestTimeout',
    validator: {
      validate: (value, args) =>
        typeof value === 'number' && value <= (args?.object as EdgeSettings).HTTP_REQUEST_TIMEOUT_MS,
      defaultMessage: () =>
        'HTTP_HEADERS_TIMEOUT_MS must not exceed HTTP_REQUEST_TIMEOUT_MS (the headers are part of the request)',
    },
  })
  HTTP_HEADERS_TIMEOUT_MS = 10_000;

  /**
   * The hot routes (@FastRoute(): increments, likes, scores, the top and item reads) answer valid
   * requests without Nest's per-request router work (fast-routes.ts), the same answers for less CPU.
   * false: every request goes through Nest's router, as a way back should the two ever differ.
   */
  @BoolSetting()
  FAST_ROUTES = true;

  /**
   * Browser pages of these origins may call the API (CORS): comma-separated `scheme://host[:port]`.
   * Empty (default): no CORS headers, so browsers allow only pages this service serves itself.
   */
  @ValidateBy({
    name: 'isOriginList',
    validator: { validate: isOriginList, defaultMessage: () => `CORS_ORIGINS must be ${ORIGIN_LIST_RULE}` },
  })
  CORS_ORIGINS = '';
}

/** Validates the edge's settings; throws one error naming every bad variable (the process stops at boot). */
export function validateEdgeSettings(env: Record<string, unknown>): EdgeSettings {
  return validateSettings(EdgeSettings, env);
}
