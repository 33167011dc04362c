import type { RedisOptions } from 'ioredis';

export interface RedisClientSettings {
  commandTimeoutMs: number;
  autoPipelining: boolean;
  /** REDIS_RECONNECT_MAX_MS. */
  reconnectMaxMs: number;
}

/** ioredis' wait before its `attempt`-th reconnection: `attempt` tenths of the longest wait, at most that. */
export const reconnectDelay =
  (maxMs: number) =>
  (attempt: number): number =>
    Math.min((attempt * maxMs) / 10, maxMs);

/**
 * How much longer than REDIS_COMMAND_TIMEOUT_MS ioredis' own command timeout is. The service times each
 * call itself (withDeadline: from the call, so a wait behind an auto-pipeline counts, and a stalled event
 * loop is not taken for a silent Redis); ioredis' timer only frees commands Redis never answers.
 */
export const BACKSTOP_TIMEOUT_FACTOR = 10;

/**
 * How long a disconnected stream may take to close before ioredis destroys it. The service disconnects
 * only when QUIT failed (Redis away): the stream is then already closed or dead, and ioredis' default
 * 2 s timer for it would keep an embedding app's process from exiting after its app closed.
 */
export const DISCONNECT_TIMEOUT_MS = 100;

/**
 * Options of one node's connection. No offline queue and no retries: while Redis is away a command
 * fails at once (503) instead of waiting.
 */
export function nodeOptions(settings: RedisClientSettings): RedisOptions {
  return {
    enableOfflineQueue: false,
    commandTimeout: settings.commandTimeoutMs * BACKSTOP_TIMEOUT_FACTOR,
    connectTimeout: 2000,
    disconnectTimeout: DISCONNECT_TIMEOUT_MS,
    maxRetriesPerRequest: 0,
    enableAutoPipelining: settings.autoPipelining,
    retryStrategy: reconnectDelay(settings.reconnectMaxMs),
  };
}
