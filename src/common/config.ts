import { isIP } from 'node:net';
import { applyDecorators } from '@nestjs/common';
import { plainToInstance, Transform } from 'class-transformer';
import {
  IsBoolean,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  Matches,
  Max,
  Min,
  ValidateBy,
  validateSync,
} from 'class-validator';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

const toInt = ({ value }: { value: unknown }) =>
  typeof value === 'string' && /^-?\d+$/.test(value.trim()) ? Number(value) : value;
const toBool = ({ value }: { value: unknown }) =>
  value === 'true' || value === '1' ? true : value === 'false' || value === '0' ? false : value;

/** An integer setting within [min, max]; the environment gives it as a string. */
const IntSetting = (min: number, max: number) => applyDecorators(Transform(toInt), IsInt(), Min(min), Max(max));
const BoolSetting = () => applyDecorators(Transform(toBool), IsBoolean());

/** Every setting the service reads, validated at boot. Nothing else reads process.env. */
export class AppConfig {
  @IntSetting(0, 65535)
  PORT = 3000;

  @IsString()
  HOST = '0.0.0.0';

  @Matches(/^rediss?:\/\/\S+$/, { message: 'REDIS_URL must look like redis://host:port[/db]' })
  REDIS_URL = 'redis://127.0.0.1:6379';

  @IsOptional()
  @Matches(/^[^\s,:]+:\d{1,5}(,[^\s,:]+:\d{1,5})*$/, {
    message: 'REDIS_CLUSTER_NODES must be comma-separated host:port pairs',
  })
  REDIS_CLUSTER_NODES?: string;

  /**
   * Cluster nodes announced at one address and reached at another (NAT, containers, proxies):
   * comma-separated `announced=reachable` pairs of host:port.
   */
  @IsOptional()
  @Matches(/^[^\s,:=]+:\d{1,5}=[^\s,:=]+:\d{1,5}(,[^\s,:=]+:\d{1,5}=[^\s,:=]+:\d{1,5})*$/, {
    message: 'REDIS_CLUSTER_NAT_MAP must be comma-separated announced=reachable pairs of host:port',
  })
  REDIS_CLUSTER_NAT_MAP?: string;

  @IntSetting(50, 60000)
  REDIS_COMMAND_TIMEOUT_MS = 500;

  /**
   * Single node only: commands issued in the same event-loop turn go out in one socket write (ioredis
   * auto-pipelining): about a third less Redis CPU per request under load (docs/benchmarks.md). One
   * pipeline is in flight at a time, so a command may wait for the one ahead; the command timeout is
   * split accordingly (redis-options.ts). Not used on a Cluster: ioredis groups auto-pipelines by the
   * first argument, which for a script with a dynamic key count is the count, not a key.
   */
  @BoolSetting()
  REDIS_AUTO_PIPELINING = true;

  @Matches(/^[A-Za-z0-9_.:-]{0,32}$/, { message: 'KEY_PREFIX must be 0-32 characters of A-Z a-z 0-9 _ . : -' })
  KEY_PREFIX = 'tb:';

  @IsOptional()
  @IsString()
  @Matches(/^\S{16,}$/, { message: 'ADMIN_TOKEN must be at least 16 characters without spaces' })
  ADMIN_TOKEN?: string;

  @IsIn(LOG_LEVELS)
  LOG_LEVEL: LogLevel = 'info';

  /**
   * Most slot-hash fields one script call drains from expired slots: bounds how long one call keeps
   * Redis busy: about 5 µs a field on the machine of docs/benchmarks.md (15-20 µs on the slower VM of
   * its earlier runs), so 100 stays between 0.5 and 2 ms.
   */
  @IntSetting(1, 5000)
  EXPIRE_CHUNK = 100;

  /** How long a write's answer is kept under its Idempotency-Key: a repeat within it applies nothing. */
  @IntSetting(60, 30 * 86_400)
  IDEMPOTENCY_TTL_SEC = 86_400;

  @BoolSetting()
  SCHEDULER_ENABLED = true;

  @IntSetting(100, 3_600_000)
  SCHEDULER_INTERVAL_MS = 1000;

  /**
   * API keys a client may send as X-Api-Key: comma-separated, each 16-256 printable characters. A
   * configured key identifies its client (for rate limits); an unknown key is refused (401).
   */
  @ValidateBy({
    name: 'isApiKeyList',
    validator: {
      validate: isApiKeyList,
      defaultMessage: () => 'API_KEYS must be comma-separated keys of 16-256 printable characters (no comma)',
    },
  })
  API_KEYS = '';

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

  /** Sustained write requests per second per client (configured API key, else address) in this instance; 0 turns limiting off. */
  @IntSetting(0, 1_000_000)
  RATE_LIMIT_PER_SEC = 0;

  /** Most write requests per client within one second; 0 means twice RATE_LIMIT_PER_SEC. */
  @IntSetting(0, 10_000_000)
  RATE_LIMIT_BURST = 0;

  @IntSetting(1, 10_000_000)
  RATE_LIMIT_MAX_CLIENTS = 50_000;

  /** Counter precisions: comma-separated positive integers of seconds (1 to 31536000), no repeats. */
  @ValidateBy({
    name: 'isPrecisionList',
    validator: {
      validate: isPrecisionList,
      defaultMessage: () =>
        'COUNTER_PRECISIONS must be comma-separated positive integers of seconds (1-31536000), each once',
    },
  })
  COUNTER_PRECISIONS = '1,5,60,300,3600,18000,86400';

  /** Samples (slices) kept per counter precision: the retention of precision p is COUNTER_SAMPLES x p. */
  @IntSetting(1, 10_000)
  COUNTER_SAMPLES = 120;

  /** Buckets the known-counters index is split into (each its own Cluster hash tag). Changing it hides existing counters. */
  @IntSetting(1, 1024)
  COUNTER_INDEX_BUCKETS = 16;

  /** Time between two passes of the counters cleaner (one pass of the article's one-minute cycle). */
  @IntSetting(100, 3_600_000)
  COUNTER_CLEAN_INTERVAL_MS = 60_000;

  /** Most index entries one cleaner script call visits (bounds how long Redis is blocked). */
  @IntSetting(1, 10_000)
  COUNTER_CLEAN_BATCH = 100;

  /** How often access times aggregated in process are flushed to Redis (one pipeline per flush). */
  @IntSetting(50, 60_000)
  STATS_FLUSH_INTERVAL_MS = 1000;

  /** Longest a graceful shutdown may take before the process exits anyway (code 1). */
  @IntSetting(100, 600_000)
  SHUTDOWN_TIMEOUT_MS = 10_000;
}

function isPrecisionList(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  const parts = value.split(',').map((part) => part.trim());
  if (!parts.every((part) => /^[1-9][0-9]{0,7}$/.test(part) && Number(part) <= 31_536_000)) return false;
  return new Set(parts.map(Number)).size === parts.length;
}

/** Validates the environment; throws one error naming every bad variable (the process stops at boot). */
/** API_KEYS: comma-separated keys, each 16-256 characters with no comma or whitespace. */
export function parseApiKeys(value: string): string[] {
  return value
    .split(',')
    .map((key) => key.trim())
    .filter((key) => key.length > 0);
}

export function isApiKeyList(value: unknown): boolean {
  return typeof value === 'string' && parseApiKeys(value).every((key) => /^[\x21-\x2b\x2d-\x7e]{16,256}$/.test(key));
}

/** TRUST_PROXY as Fastify's trustProxy option: false, a hop count, or a list of addresses/CIDRs. */
export function trustProxyOf(config: AppConfig): false | number | string[] {
  const value = config.TRUST_PROXY.trim();
  if (value === '') return false;
  if (/^\d+$/.test(value)) return Number(value);
  return value.split(',').map((part) => part.trim());
}

function isTrustProxy(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  if (value.trim() === '') return true;
  if (/^\d+$/.test(value.trim())) return Number(value) >= 1 && Number(value) <= 10;
  return value
    .split(',')
    .every((part) => isIP(part.trim().split('/')[0]) !== 0 && /^[^/]+(\/\d{1,3})?$/.test(part.trim()));
}

export function validateConfig(env: Record<string, unknown>): AppConfig {
  const known = new Set(Object.keys(new AppConfig()));
  const present = Object.fromEntries(
    Object.entries(env).filter(([k, v]) => known.has(k) && v !== undefined && v !== ''),
  );
  const config = plainToInstance(AppConfig, present, { exposeDefaultValues: true });
  const errors = validateSync(config, { whitelist: false, forbidUnknownValues: false });
  if (errors.length > 0) {
    const lines = errors.map((e) => `${e.property}: ${Object.values(e.constraints ?? {}).join('; ')}`);
    throw new Error(`Invalid configuration:\n  ${lines.join('\n  ')}`);
  }
  return config;
}
