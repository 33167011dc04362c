import type { RedisOptions } from 'ioredis';

export interface RedisClientSettings {
  commandTimeoutMs: number;
  autoPipelining: boolean;
}

/**
 * Options of one node's connection. No offline queue and no retries: while Redis is away a command
 * fails at once (503) instead of waiting.
 *
 * The command timeout bounds how long a request waits for Redis. ioredis keeps one auto-pipeline in
 * flight per connection and starts a command's timer only when its pipeline is sent, so an
 * auto-pipelined command can first wait for the pipeline ahead of it to settle: each gets half the
 * budget, and the whole wait stays within `commandTimeoutMs`.
 */
export function nodeOptions(settings: RedisClientSettings): RedisOptions {
  return {
    enableOfflineQueue: false,
    commandTimeout: settings.autoPipelining
      ? Math.max(1, Math.floor(settings.commandTimeoutMs / 2))
      : settings.commandTimeoutMs,
    connectTimeout: 2000,
    maxRetriesPerRequest: 0,
    enableAutoPipelining: settings.autoPipelining,
    retryStrategy: (attempt) => Math.min(attempt * 100, 1000),
  };
}
