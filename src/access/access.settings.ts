import { IsIn, IsOptional, IsString, Matches, ValidateBy } from 'class-validator';
import { BoolSetting, IntSettings, IntSettingsTable, SHARED_INT_SETTINGS, validateSettings } from '../common/settings';
import { parseConfiguredKeys } from './access-rules';

export const ACCESS_MODES = ['auto', 'keyed'] as const;
export type AccessMode = (typeof ACCESS_MODES)[number];

function isApiKeyList(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  try {
    parseConfiguredKeys(value);
    return true;
  } catch {
    return false;
  }
}

/** The access module's integer settings: bounds and default of each. */
const ACCESS_INT_SETTINGS = {
  /** Unknown keys / wrong admin tokens per second per client network (10 s; 2x in 1 s), then 429; 0: off. */
  AUTH_FAILURES_PER_SEC: { min: 0, max: 1_000_000, byDefault: 5 },

  /** How often each instance reads the stored API keys again (a key made or revoked elsewhere counts within it). */
  API_KEYS_REFRESH_MS: { min: 100, max: 3_600_000, byDefault: 5000 },

  /** Networks whose failed checks are counted at once (AppConfig names it too: governance's limiters). */
  RATE_LIMIT_MAX_CLIENTS: SHARED_INT_SETTINGS.RATE_LIMIT_MAX_CLIENTS,

  /** Bits of an address naming its client (rate limits, quotas); loopback is always one client (/8). */
  CLIENT_IPV4_PREFIX: { min: 8, max: 32, byDefault: 32 },

  /** The same for IPv6: a /64 is what one customer gets. */
  CLIENT_IPV6_PREFIX: { min: 16, max: 128, byDefault: 64 },
} as const satisfies IntSettingsTable;

/** The settings the access module reads (docs/access.md), validated when the app is built. */
export class AccessSettings extends IntSettings(ACCESS_INT_SETTINGS) {
  @IsOptional()
  @IsString()
  @Matches(/^\S{16,}$/, { message: 'ADMIN_TOKEN must be at least 16 characters without spaces' })
  ADMIN_TOKEN?: string;

  /**
   * API keys from configuration: comma-separated `<secret>[:<scopes>[:<prefixes>]]`, a secret 16-256
   * printable characters without comma, colon or space, scopes joined by `+` (read, write, admin;
   * default read+write), name prefixes joined by `|`. Keys made by POST /admin/keys live in Redis.
   */
  @ValidateBy({
    name: 'isApiKeyList',
    validator: {
      validate: isApiKeyList,
      defaultMessage: () =>
        'API_KEYS must be comma-separated <secret>[:<scopes>[:<prefixes>]] entries: a secret of 16-256 printable characters without comma, colon or space; scopes read, write, admin joined by +; prefixes joined by | (an admin key takes none)',
    },
  })
  API_KEYS = '';

  /** Once any key exists, reads still need none (writes and admin routes do). */
  @BoolSetting()
  PUBLIC_READS = false;

  /** `auto`: keys needed once one exists or ever existed; `keyed`: always (production: survives a FLUSHALL). */
  @IsIn(ACCESS_MODES)
  ACCESS_MODE: AccessMode = 'auto';
}

/** Validates the access settings; throws one error naming every bad variable (the process stops at boot). */
export function validateAccessSettings(env: Record<string, unknown>): AccessSettings {
  return validateSettings(AccessSettings, env);
}
