import { IntSettings, IntSettingsTable, SHARED_INT_SETTINGS, validateSettings } from '../common/settings';

/** The live streams' integer settings: bounds and default of each. */
const LIVE_INT_SETTINGS = {
  /**
   * Live stream (GET /boards/:board/stream): how often an instance polls the change versions of the
   * boards its clients watch, so at most one event per board per this many ms.
   */
  STREAM_COALESCE_MS: { min: 20, max: 60_000, byDefault: 250 },

  /**
   * Most live streams one instance serves (503 STREAM_CAPACITY beyond), and never more than half of
   * HTTP_MAX_CONNECTIONS: probes and ordinary requests always find a connection.
   */
  STREAM_MAX_STREAMS: { min: 1, max: 1_000_000, byDefault: 2000 },

  /** Most live streams of one client (API key, else address) per instance (429 STREAM_LIMIT beyond). */
  STREAM_MAX_PER_CLIENT: { min: 1, max: 1_000_000, byDefault: 32 },

  /**
   * Most distinct segments the streams of one board watch on one instance (429 STREAM_SEGMENT_LIMIT for
   * a stream of another): each watched segment is a top read over every shard at each change, so
   * streams on thousands of segments would turn every write into thousands of reads.
   */
  STREAM_MAX_SEGMENTS_PER_BOARD: { min: 1, max: 10_000, byDefault: 16 },

  /** A live stream ends this long after it opened; the client reconnects with a fresh snapshot. */
  STREAM_MAX_LIFETIME_MS: { min: 10_000, max: 86_400_000, byDefault: 1_800_000 },

  /** A live stream whose client took none of the bytes sent for this long is cut (a stalled reader). */
  STREAM_IDLE_TIMEOUT_MS: { min: 1000, max: 3_600_000, byDefault: 60_000 },

  /** Shared with the Redis client: the poller yields at a share of it. */
  REDIS_MAX_PENDING_COMMANDS: SHARED_INT_SETTINGS.REDIS_MAX_PENDING_COMMANDS,

  /** Shared with the HTTP edge: streams take at most half of the connections. */
  HTTP_MAX_CONNECTIONS: SHARED_INT_SETTINGS.HTTP_MAX_CONNECTIONS,
} as const satisfies IntSettingsTable;

/** The settings the live streams read (docs/history-and-live.md), validated when the app is built. */
export class LiveSettings extends IntSettings(LIVE_INT_SETTINGS) {}

/** Validates the live streams' settings; throws one error naming every bad variable. */
export function validateLiveSettings(env: Record<string, unknown>): LiveSettings {
  return validateSettings(LiveSettings, env);
}
