import { AppConfig } from '../common/config';

/**
 * The settings the connection reads (docs/configuration.md), taken once from the validated
 * configuration: RedisService names these, never AppConfig.
 */
export class RedisSettings {
  private constructor(
    /** REDIS_URL: the single node (unused when clusterNodes is set). */
    readonly url: string,
    /** REDIS_CLUSTER_NODES: comma-separated host:port seeds of a Cluster. */
    readonly clusterNodes: string | undefined,
    /** REDIS_CLUSTER_NAT_MAP: comma-separated announced=reachable host:port pairs. */
    readonly clusterNatMap: string | undefined,
    /** REDIS_COMMAND_TIMEOUT_MS: a command's deadline. */
    readonly commandTimeoutMs: number,
    /** REDIS_AUTO_PIPELINING (single node only). */
    readonly autoPipelining: boolean,
    /** REDIS_MAX_PENDING_COMMANDS: unanswered commands at which new work is shed. */
    readonly maxPendingCommands: number,
    /** KEY_PREFIX: every key of this service starts with it. */
    readonly keyPrefix: string,
    /** CROSSING_CALLS_PER_REQUEST: calls a function call may take to cross snapshot boundaries (callFunction). */
    readonly crossingCallsPerRequest: number,
  ) {}

  static from(config: AppConfig): RedisSettings {
    return new RedisSettings(
      config.REDIS_URL,
      config.REDIS_CLUSTER_NODES,
      config.REDIS_CLUSTER_NAT_MAP,
      config.REDIS_COMMAND_TIMEOUT_MS,
      config.REDIS_AUTO_PIPELINING,
      config.REDIS_MAX_PENDING_COMMANDS,
      config.KEY_PREFIX,
      config.CROSSING_CALLS_PER_REQUEST,
    );
  }
}
