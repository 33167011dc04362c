import { Cluster, type Redis, type RedisOptions } from 'ioredis';

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

/** A Cluster node's address as ioredis names it: "host:port". */
type NatMap = Record<string, { host: string; port: number }>;

/** A Cluster connection: `nodes` its start-up nodes, `options` each node's (nodeOptions). */
export function clusterConnection(
  nodes: Array<{ host: string; port: number }>,
  options: RedisOptions,
  natMap?: NatMap,
): Cluster {
  const cluster = new Cluster(nodes, {
    enableOfflineQueue: false,
    // ioredis re-sends a command after "Connection is closed" (retryDelayOnFailover), both when
    // it was never sent (a node still connecting: needed) and when its answer was lost: every
    // write therefore carries a key on a Cluster (IdemCalls), so a second run is a replay.
    natMap,
    redisOptions: options,
    // The Cluster as a whole reconnects as each node does (REDIS_RECONNECT_MAX_MS).
    clusterRetryStrategy: options.retryStrategy,
  });
  if (natMap) findNodesByAnnouncedAddress(cluster, natMap);
  return cluster;
}

interface NodePool {
  getInstanceByKey(key: string): Redis | undefined;
}

function isNodePool(pool: unknown): pool is NodePool {
  return typeof pool === 'object' && pool !== null && typeof Reflect.get(pool, 'getInstanceByKey') === 'function';
}

/**
 * ioredis 5 (redis/ioredis#1582): on MOVED it records the reply's announced address as the node of the
 * slot's whole range while it connects to the NAT-mapped address, so until its slot map is refreshed it
 * finds no connection for the range and sends the range's commands to random nodes, each MOVED again
 * re-recording the announced address: a write re-sent after a lost connection could spend its 16
 * redirections in milliseconds and answer 503. Its node pool is taught to find a node by either address.
 */
function findNodesByAnnouncedAddress(cluster: Cluster, natMap: NatMap): void {
  const pool: unknown = Reflect.get(cluster, 'connectionPool');
  if (!isNodePool(pool)) return;
  const byAddress = pool.getInstanceByKey.bind(pool);
  pool.getInstanceByKey = (key) => {
    const mapped = natMap[key];
    return byAddress(key) ?? (mapped ? byAddress(`${mapped.host}:${mapped.port}`) : undefined);
  };
}

/** REDIS_CLUSTER_NAT_MAP as ioredis' natMap: announced "host:port" -> the address to connect to. */
export function natMapOf(value: string | undefined): NatMap | undefined {
  if (!value) return undefined;
  return Object.fromEntries(
    value.split(',').map((pair) => {
      const [announced, reachable] = pair.split('=');
      const [host, port] = reachable.split(':');
      return [announced, { host, port: Number(port) }];
    }),
  );
}
