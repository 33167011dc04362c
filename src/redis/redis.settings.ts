import { AppConfig } from '../common/config';
import { settingsFrom } from '../common/settings';

/**
 * The settings the connection reads (docs/configuration.md), taken once from the validated
 * configuration: RedisService names these, never AppConfig.
 */
export class RedisSettings extends settingsFrom((config: AppConfig) => ({
  /** REDIS_URL: the single node (unused when clusterNodes is set). */
  url: config.REDIS_URL,
  /** REDIS_CLUSTER_NODES: comma-separated host:port seeds of a Cluster. */
  clusterNodes: config.REDIS_CLUSTER_NODES,
  /** REDIS_CLUSTER_NAT_MAP: comma-separated announced=reachable host:port pairs. */
  clusterNatMap: config.REDIS_CLUSTER_NAT_MAP,
  /** REDIS_COMMAND_TIMEOUT_MS: a command's deadline. */
  commandTimeoutMs: config.REDIS_COMMAND_TIMEOUT_MS,
  /** REDIS_RECONNECT_MAX_MS: the longest wait between reconnection attempts. */
  reconnectMaxMs: config.REDIS_RECONNECT_MAX_MS,
  /** REDIS_AUTO_PIPELINING (single node only). */
  autoPipelining: config.REDIS_AUTO_PIPELINING,
  /** REDIS_MAX_PENDING_COMMANDS: unanswered commands at which new work is shed. */
  maxPendingCommands: config.REDIS_MAX_PENDING_COMMANDS,
  /** KEY_PREFIX: every key of this service starts with it. */
  keyPrefix: config.KEY_PREFIX,
  /** CROSSING_CALLS_PER_REQUEST: calls a function call may take to cross snapshot boundaries (callFunction). */
  crossingCallsPerRequest: config.CROSSING_CALLS_PER_REQUEST,
})) {}
