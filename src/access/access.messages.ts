import { Scope } from './access-rules';

/** Messages of the access feature, written once. */
export const ACCESS_MESSAGES = {
  keyMissing: (scope: Scope) =>
    `This route needs an API key with the "${scope}" scope: send Authorization: Bearer <key> or X-Api-Key: <key>`,
  keyInvalid: () => 'The API key is not known (wrong, or revoked)',
  scopeMissing: (scope: Scope) => `This API key lacks the "${scope}" scope`,
  prefixMissing: (prefixes: readonly string[], name: string | undefined) =>
    name === undefined
      ? `This API key is limited to names starting with ${prefixes.map((p) => `"${p}"`).join(', ')}; listing every name needs a key without name prefixes`
      : `This API key is limited to names starting with ${prefixes.map((p) => `"${p}"`).join(', ')}; "${name}" is not one`,
  prefixedAdmin: () =>
    'An admin key cannot be limited to name prefixes (admin routes reach every name and make keys): give it no prefixes, or drop the admin scope',
  authFailures: (perSecond: number, retryAfterSec: number) =>
    `Too many unknown API keys or wrong tokens from this network (at most ${perSecond} per second); try again in ${retryAfterSec} s`,
  keysLost: () =>
    'The API key store is empty, yet this deployment has had keys (all revoked, or Redis lost them: FLUSHALL, a restart without persistence, a failover to an empty replica). Requests without a known key stay refused: recreate keys with ADMIN_TOKEN, or set API_KEYS',
  keyExists: (name: string) => `An API key named "${name}" already exists; delete it first or pick another name`,
  keysFull: (max: number) => `At most ${max} API keys can be stored; delete unused ones first`,
  keyNotFound: (name: string) => `No stored API key is named "${name}"`,
  configName: () => 'name must not start with "config:" (the names of keys from API_KEYS)',
  writesOpen: () =>
    'No API key is configured: anyone who can reach the port can write (and read). Set API_KEYS or create keys with POST /admin/keys',
};
