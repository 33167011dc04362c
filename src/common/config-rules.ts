import { isIP } from 'node:net';

/** The rules of AppConfig's settings that take more than a decorator, and how some are read. */

export function isPrecisionList(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  const parts = value.split(',').map((part) => part.trim());
  if (!parts.every((part) => /^[1-9][0-9]{0,7}$/.test(part) && Number(part) <= 31_536_000)) return false;
  return new Set(parts.map(Number)).size === parts.length;
}

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
