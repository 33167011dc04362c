import { IsIn, IsOptional, IsString, Matches, ValidateBy } from 'class-validator';
import { BoolSetting, IntSettings, IntSettingsTable, SHARED_INT_SETTINGS, validateSettings } from './settings';
import { isPrecisionList } from './config-rules';
import { CROSSING_CALLS_PER_REQUEST as DEFAULT_CROSSING_CALLS } from './limits';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** AppConfig's integer settings: bounds and default of each. */
const APP_INT_SETTINGS = {
  PORT: { min: 0, max: 65535, byDefault: 3000 },
  REDIS_COMMAND_TIMEOUT_MS: { min: 50, max: 60000, byDefault: 500 },

  /**
   * While Redis is away, ioredis connects again after `attempt` tenths of this (ms), at most this: the
   * longest an outage outlasts Redis' return by. Tests set it low to see many attempts fail quickly.
   */
  REDIS_RECONNECT_MAX_MS: { min: 10, max: 60_000, byDefault: 1000 },

  /**
   * Item increments to one board shard that arrive together go to Redis as one script call, each
   * with its own answer (common/coalescer.ts): a request waits at most this long for a call under
   * way to its shard (ms; 0: every increment is its own call). An idle service adds no delay.
   */
  WRITE_COALESCE_MS: { min: 0, max: 10, byDefault: 1 },

  /**
   * Load shedding: commands this instance has sent to Redis and not yet had answered, timed-out ones
   * included (ioredis keeps a command queued until its answer arrives). While that many are unanswered,
   * a request that needs Redis answers 503 REDIS_BUSY at once and sends nothing, so commands abandoned by
   * a client timeout cannot pile up in Redis.
   */
  REDIS_MAX_PENDING_COMMANDS: SHARED_INT_SETTINGS.REDIS_MAX_PENDING_COMMANDS,

  /**
   * Calls one function call may take to cross the snapshot boundaries it meets (a listing a call);
   * past it the request is a 503 WINDOW_DRAINING with nothing applied (the next request goes on).
   */
  CROSSING_CALLS_PER_REQUEST: { min: 1, max: 10_000, byDefault: DEFAULT_CROSSING_CALLS },

  /**
   * Most slot-hash fields one script call drains from expired slots: bounds how long one call keeps
   * Redis busy: about 5 µs a field on the machine of docs/benchmarks.md (15-20 µs on the slower VM of
   * its earlier runs), so 100 stays between 0.5 and 2 ms.
   */
  EXPIRE_CHUNK: { min: 1, max: 5000, byDefault: 100 },

  /**
   * Most cost units one write call may weigh (src/ranking/core/write-cost.ts: one unit is one plain
   * batch entry in one window): a batch whose call on some shard would weigh more is refused whole,
   * 422 REQUEST_TOO_COSTLY, before anything is applied, and a board whose single write would weigh more
   * is refused when declared, 400 BOARD_WRITE_TOO_COSTLY. The default is the ~5 ms call budget at the
   * 2.0-2.7 µs a unit the worst-case write rows measured (docs/security.md): 1 800 units, about 4.9 ms.
   * A call of one entry always goes (an item write is never refused for its cost: its board was bounded
   * when declared, or was declared before the bound and keeps its writes).
   */
  WRITE_COST_PER_CALL: { min: 100, max: 1_000_000, byDefault: 1800 },

  /**
   * Ranks one lookup may count (ids x shards for board ranks on a sharded board, x3 on `ties: first`;
   * about 3 µs of Redis each): past it a lookup is 422 REQUEST_TOO_COSTLY. The default keeps a lookup
   * near 20 ms of Redis; 64 000 takes the 1 000 ids a lookup may name on 64 shards (about 200 ms).
   */
  LOOKUP_COUNTS_PER_REQUEST: { min: 1000, max: 1_000_000, byDefault: 6000 },

  /** How long a write's answer is kept under its Idempotency-Key: a repeat within it applies nothing. */
  IDEMPOTENCY_TTL_SEC: { min: 60, max: 30 * 86_400, byDefault: 86_400 },
  SCHEDULER_INTERVAL_MS: { min: 100, max: 3_600_000, byDefault: 1000 },

  /** Most due boards one claim takes (a pass claims again while claims come back full). */
  SCHEDULER_CLAIM_BATCH: { min: 1, max: 10_000, byDefault: 100 },

  /**
   * How long a claimed board stays with the instance that claimed it: past it, another instance may
   * visit it (the claimer crashed or lost Redis). Far above a batch's visits (milliseconds each).
   */
  SCHEDULER_LEASE_MS: { min: 1000, max: 3_600_000, byDefault: 30_000 },

  /**
   * Every this long one instance (fleet-wide) enters every registered board that has no due entry into
   * the due index, spread over the next interval: it heals an entry lost with a crashed instance
   * between a write and its index update, and moves boards of the registry set kept before paging.
   */
  SCHEDULER_SWEEP_INTERVAL_MS: { min: 60_000, max: 7 * 86_400_000, byDefault: 3_600_000 },

  /** Sustained write requests per second per client (API key, else address) in this instance; 0 turns limiting off. */
  RATE_LIMIT_PER_SEC: { min: 0, max: 1_000_000, byDefault: 0 },

  /** Most write requests per client within one second; 0 means twice RATE_LIMIT_PER_SEC. */
  RATE_LIMIT_BURST: { min: 0, max: 10_000_000, byDefault: 0 },

  /** Sustained read requests per second per client (API key, else address) in this instance; 0 turns limiting off. */
  READ_RATE_LIMIT_PER_SEC: { min: 0, max: 1_000_000, byDefault: 0 },

  /** Most read requests per client within one second; 0 means twice READ_RATE_LIMIT_PER_SEC. */
  READ_RATE_LIMIT_BURST: { min: 0, max: 10_000_000, byDefault: 0 },
  RATE_LIMIT_MAX_CLIENTS: SHARED_INT_SETTINGS.RATE_LIMIT_MAX_CLIENTS,

  /**
   * Quotas on growth: the most new entries of each kind one client (a configured API key, else an
   * address) may create per QUOTA_INTERVAL_SEC, in this instance (a token bucket: the whole quota at
   * once, refilled over the interval). 0 turns that quota off. Existing entries are never refused.
   */
  QUOTA_INTERVAL_SEC: { min: 60, max: 30 * 86_400, byDefault: 3600 },

  /** New board items per client per interval (an item no window of its board holds). */
  QUOTA_NEW_ITEMS: { min: 0, max: 100_000_000, byDefault: 10_000 },

  /** New likes per client per interval (a user id liking an item it holds no like of). */
  QUOTA_NEW_LIKE_USERS: { min: 0, max: 100_000_000, byDefault: 10_000 },

  /** New counters per client per interval. */
  QUOTA_NEW_COUNTERS: { min: 0, max: 100_000_000, byDefault: 100 },

  /** New stats context/type pairs per client per interval. */
  QUOTA_NEW_STATS_PAIRS: { min: 0, max: 100_000_000, byDefault: 100 },

  /**
   * Answers of writes with an Idempotency-Key Redis stores per client per interval (each kept
   * IDEMPOTENCY_TTL_SEC): one per keyed write on an unsharded board, 1 + the shards it touches on a
   * sharded one; a replay stores none. On a Cluster a write without a key counts 1/1440 per call (its
   * service-made key's answer, kept RESEND_GUARD_MS). Beyond it a write is 429 before anything is
   * applied (a keyed one's stored answers still replay).
   */
  QUOTA_IDEMPOTENT_ANSWERS: { min: 0, max: 100_000_000, byDefault: 10_000 },

  /**
   * New actor contributions per client per interval: an actor's first event on an item in one slot of
   * one window (a board's, or a segment's), each a hash field and two index members in Redis (about
   * 430 B with a unique view). A write that would make more is 429 before anything is applied.
   */
  QUOTA_NEW_ACTOR_ENTRIES: { min: 0, max: 100_000_000, byDefault: 100_000 },

  /**
   * New segment entries per client per interval: an item's first amount in one slot of one window of a
   * segment (a slot hash field, and a results member when new to the window); a segment new on a shard
   * also counts its keys there (2 per window, 4 per view). Beyond it 429.
   */
  QUOTA_NEW_SEGMENT_ENTRIES: { min: 0, max: 100_000_000, byDefault: 100_000 },

  /**
   * Bytes of item data per client per interval: what a write adds to the item's stored data (a
   * replacement of the same length or shorter adds none). Beyond it 429 before anything is stored.
   */
  QUOTA_ITEM_DATA_BYTES: { min: 0, max: 1_000_000_000, byDefault: 10_000_000 },

  /** Most live counters (0: no cap), kept per index bucket as ceil(MAX_COUNTERS / COUNTER_INDEX_BUCKETS). */
  MAX_COUNTERS: { min: 0, max: 1_000_000_000, byDefault: 100_000 },

  /** Most stats context/type pairs recorded in the current or previous hour (0: no cap). */
  MAX_STATS_PAIRS: { min: 0, max: 1_000_000_000, byDefault: 100_000 },

  /** Time between two passes of the stats index pruner (drops pairs not recorded this or last hour). */
  STATS_INDEX_PRUNE_INTERVAL_MS: { min: 100, max: 3_600_000, byDefault: 60_000 },

  /** Most stats index entries one pruner script call removes (bounds how long Redis is blocked). */
  STATS_INDEX_PRUNE_BATCH: { min: 1, max: 10_000, byDefault: 500 },

  /** Samples (slices) kept per counter precision: the retention of precision p is COUNTER_SAMPLES x p. */
  COUNTER_SAMPLES: { min: 1, max: 10_000, byDefault: 120 },

  /** Buckets the known-counters index is split into (each its own Cluster hash tag). Changing it hides existing counters. */
  COUNTER_INDEX_BUCKETS: { min: 1, max: 1024, byDefault: 16 },

  /** Time between two passes of the counters cleaner (one pass of the article's one-minute cycle). */
  COUNTER_CLEAN_INTERVAL_MS: { min: 100, max: 3_600_000, byDefault: 60_000 },

  /** Most index entries one cleaner script call visits (bounds how long Redis is blocked). */
  COUNTER_CLEAN_BATCH: { min: 1, max: 10_000, byDefault: 100 },

  /** How often access times aggregated in process are flushed to Redis (one pipeline per flush). */
  STATS_FLUSH_INTERVAL_MS: { min: 50, max: 60_000, byDefault: 1000 },

  /** Longest a graceful shutdown may take before the process exits anyway (code 1). */
  SHUTDOWN_TIMEOUT_MS: { min: 100, max: 600_000, byDefault: 10_000 },
} as const satisfies IntSettingsTable;

/**
 * The settings the modules without a settings class of their own read (the edge, access, live, ingest
 * and tracing have theirs), validated at boot. Nothing else reads process.env.
 */
export class AppConfig extends IntSettings(APP_INT_SETTINGS) {
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

  @IsIn(LOG_LEVELS)
  LOG_LEVEL: LogLevel = 'info';

  @BoolSetting()
  SCHEDULER_ENABLED = true;

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

  /**
   * When set, GET /metrics needs `Authorization: Bearer <METRICS_TOKEN>` (401 without, 403 wrong).
   * Unset, /metrics is public (a scraper on a private network needs nothing); set it wherever the
   * port is reachable from outside.
   */
  @IsOptional()
  @Matches(/^\S{16,}$/, { message: 'METRICS_TOKEN must be at least 16 characters without spaces' })
  METRICS_TOKEN?: string;
}

/** Validates the environment; throws one error naming every bad variable (the process stops at boot). */
export function validateConfig(env: Record<string, unknown>): AppConfig {
  return validateSettings(AppConfig, env);
}
