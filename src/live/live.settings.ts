import { IntSetting, SHARED_INT_SETTINGS, SharedIntSetting, validateSettings } from '../common/settings';

/** The settings the live streams read (docs/history-and-live.md), validated when the app is built. */
export class LiveSettings {
  /**
   * Live stream (GET /boards/:board/stream): how often an instance polls the change versions of the
   * boards its clients watch, so at most one event per board per this many ms.
   */
  @IntSetting(20, 60_000)
  STREAM_COALESCE_MS = 250;

  /**
   * Most live streams one instance serves (503 STREAM_CAPACITY beyond), and never more than half of
   * HTTP_MAX_CONNECTIONS: probes and ordinary requests always find a connection.
   */
  @IntSetting(1, 1_000_000)
  STREAM_MAX_STREAMS = 2000;

  /** Most live streams of one client (API key, else address) per instance (429 STREAM_LIMIT beyond). */
  @IntSetting(1, 1_000_000)
  STREAM_MAX_PER_CLIENT = 32;

  /**
   * Most distinct segments the streams of one board watch on one instance (429 STREAM_SEGMENT_LIMIT for
   * a stream of another): each watched segment is a top read over every shard at each change, so
   * streams on thousands of segments would turn every write into thousands of reads.
   */
  @IntSetting(1, 10_000)
  STREAM_MAX_SEGMENTS_PER_BOARD = 16;

  /** A live stream ends this long after it opened; the client reconnects with a fresh snapshot. */
  @IntSetting(10_000, 86_400_000)
  STREAM_MAX_LIFETIME_MS = 1_800_000;

  /** A live stream whose client took none of the bytes sent for this long is cut (a stalled reader). */
  @IntSetting(1000, 3_600_000)
  STREAM_IDLE_TIMEOUT_MS = 60_000;

  /** Shared with the Redis client: the poller yields at a share of it. */
  @SharedIntSetting('REDIS_MAX_PENDING_COMMANDS')
  REDIS_MAX_PENDING_COMMANDS = SHARED_INT_SETTINGS.REDIS_MAX_PENDING_COMMANDS.byDefault;

  /** Shared with the HTTP edge: streams take at most half of the connections. */
  @SharedIntSetting('HTTP_MAX_CONNECTIONS')
  HTTP_MAX_CONNECTIONS = SHARED_INT_SETTINGS.HTTP_MAX_CONNECTIONS.byDefault;
}

/** Validates the live streams' settings; throws one error naming every bad variable. */
export function validateLiveSettings(env: Record<string, unknown>): LiveSettings {
  return validateSettings(LiveSettings, env);
}
