import { createHash } from 'node:crypto';
import { API_KEY_PREFIX_CHARS, API_KEY_PREFIXES, API_KEY_SECRET_CHARS } from './access.limits';

/** What a key may do: read boards, counters and stats; write to them; use the /admin routes. */
export const SCOPES = ['read', 'write', 'admin'] as const;
export type Scope = (typeof SCOPES)[number];

/** What a route needs: a scope, or nothing at all (health probes, the metrics scrape, the docs). */
export type RouteAccess = { scope: Scope; nameParam?: string } | { scope: 'public' };

/** One API key as the service knows it: never the secret, only its SHA-256 digest. */
export interface KeyGrant {
  /** Safe to log and to name the key's client (rate limits, quotas). */
  name: string;
  scopes: ReadonlySet<Scope>;
  /** Names (board, counter, stats context) the key may touch start with one of these; empty: any. */
  prefixes: readonly string[];
  source: 'config' | 'redis';
  /** When a stored key was made (unix s). */
  createdAtSec?: number;
}

/** Why a key may not make a request, or undefined when it may. */
export type Refusal =
  { reason: 'scope'; scope: Scope } | { reason: 'prefix'; prefixes: readonly string[] } | { reason: 'prefixedAdmin' };

/** A configured key without scopes may read and write, as API_KEYS keys always could; admin is never implied. */
export const DEFAULT_CONFIG_SCOPES: readonly Scope[] = ['read', 'write'];

export function digestOf(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

/**
 * Whether `grant` may make a request needing `scope` on the name `name` (undefined: a route without a
 * name, such as a list: a key limited to prefixes may not use it, since it would see other names).
 * An admin key limited to prefixes is refused every admin route: such keys can no longer be made
 * (isPrefixedAdmin), and one stored by an older version must not reach names, or mint keys, outside them.
 */
export function refusalOf(grant: KeyGrant, scope: Scope, name: string | undefined): Refusal | undefined {
  if (!grant.scopes.has(scope)) return { reason: 'scope', scope };
  if (grant.prefixes.length === 0) return undefined;
  if (scope === 'admin') return { reason: 'prefixedAdmin' };
  if (name !== undefined && grant.prefixes.some((prefix) => name.startsWith(prefix))) return undefined;
  return { reason: 'prefix', prefixes: grant.prefixes };
}

const SECRET = `[\\x21-\\x2b\\x2d-\\x39\\x3b-\\x7e]{${API_KEY_SECRET_CHARS.min},${API_KEY_SECRET_CHARS.max}}`;
const PREFIX = `[\\x21-\\x2b\\x2d-\\x7b\\x7d\\x7e]{${API_KEY_PREFIX_CHARS.min},${API_KEY_PREFIX_CHARS.max}}`;
/** `<secret>[:<scope>+<scope>...[:<prefix>|<prefix>...]]`: no comma, colon or space in a secret. */
const CONFIG_ENTRY = new RegExp(
  `^(${SECRET})(?::((?:read|write|admin)(?:\\+(?:read|write|admin))*)(?::(${PREFIX}(?:\\|${PREFIX})*))?)?$`,
);

/** An admin key limited to name prefixes: refused at creation (API_KEYS, POST /admin/keys). */
export function isPrefixedAdmin(scopes: Iterable<Scope>, prefixes: readonly string[]): boolean {
  return prefixes.length > 0 && [...scopes].includes('admin');
}

/** A printable name prefix, as a key created over HTTP may carry (no `|`, `,` or spaces: API_KEYS syntax). */
export const PREFIX_PATTERN = new RegExp(`^${PREFIX}$`);

export interface ConfiguredKey {
  digest: string;
  grant: KeyGrant;
}

/**
 * API_KEYS: comma-separated entries `<secret>[:<scopes>[:<prefixes>]]`, scopes joined by `+`
 * (read, write, admin), prefixes by `|`. Throws naming the first bad entry (by position, never its
 * secret). A key's name is `config:` and the first 12 hex digits of its digest.
 */
export function parseConfiguredKeys(value: string): ConfiguredKey[] {
  const entries = value
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry.length > 0);
  return entries.map((entry, index) => {
    const match = CONFIG_ENTRY.exec(entry);
    if (!match) throw new Error(`entry ${index + 1} is not <secret>[:<scopes>[:<prefixes>]]`);
    const prefixes = match[3] ? match[3].split('|') : [];
    if (prefixes.length > API_KEY_PREFIXES.max)
      throw new Error(`entry ${index + 1} has more than ${API_KEY_PREFIXES.max} prefixes`);
    const digest = digestOf(match[1]);
    const scopes = match[2] ? (match[2].split('+') as Scope[]) : DEFAULT_CONFIG_SCOPES;
    if (isPrefixedAdmin(scopes, prefixes))
      throw new Error(`entry ${index + 1} has the admin scope and name prefixes: admin keys cannot be limited`);
    return {
      digest,
      grant: { name: `config:${digest.slice(0, 12)}`, scopes: new Set(scopes), prefixes, source: 'config' },
    };
  });
}

/** A key read back from Redis: undefined when the stored value is not what the service writes. */
export function storedGrantOf(name: string, stored: string): ConfiguredKey | undefined {
  let value: unknown;
  try {
    value = JSON.parse(stored);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const { digest, scopes, prefixes, createdAtSec } = value as Record<string, unknown>;
  if (typeof digest !== 'string' || !/^[0-9a-f]{64}$/.test(digest)) return undefined;
  if (!Array.isArray(scopes) || !scopes.every((scope) => SCOPES.includes(scope))) return undefined;
  if (!Array.isArray(prefixes) || !prefixes.every((prefix) => typeof prefix === 'string')) return undefined;
  if (typeof createdAtSec !== 'number') return undefined;
  const grant: KeyGrant = {
    name,
    scopes: new Set(scopes as Scope[]),
    prefixes: prefixes as string[],
    source: 'redis',
    createdAtSec,
  };
  return { digest, grant };
}
