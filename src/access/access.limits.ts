import { Bounds } from '../common/limits';

/** Most API keys stored in Redis (the admin routes refuse more): every instance holds them all in memory. */
export const MAX_STORED_API_KEYS = 1000;

/** Characters of an API key secret (configured or generated). */
export const API_KEY_SECRET_CHARS: Bounds = { min: 16, max: 256 };

/** Name prefixes one key may be limited to, and the characters of each. */
export const API_KEY_PREFIXES: Bounds = { min: 0, max: 32 };
export const API_KEY_PREFIX_CHARS: Bounds = { min: 1, max: 200 };

/** Random bytes of a generated secret (base64url: 43 characters after the `tb_` mark). */
export const GENERATED_SECRET_BYTES = 32;

/** Failed credential checks one network may make within one second: this many times AUTH_FAILURES_PER_SEC. */
export const AUTH_FAILURES_BURST_FACTOR = 2;

/** Addresses whose client name AccessGate.clientOf keeps (emptied when full). */
export const CLIENTS_BY_ADDRESS_MAX = 10_000;

/** Credentials (per client network) AccessGate keeps as admitted through a lockout (emptied when full). */
export const SEEN_CREDENTIALS_MAX = 10_000;
