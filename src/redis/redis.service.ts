import { Inject, Injectable, Logger, OnApplicationShutdown, OnModuleInit, Optional } from '@nestjs/common';
import Redis, { Cluster } from 'ioredis';
import calculateSlot from 'cluster-key-slot';
import { Clock } from '../common/clock';
import { COMMON_MESSAGES } from '../common/common.messages';
import { RedisBusyError, RedisUnavailableError } from '../common/errors';
import { isRedisTimeoutError, isRedisUnavailableError, plainRedisReason } from '../common/redis-errors';
import { withDeadline } from './deadline';
import { clusterConnection, natMapOf, nodeOptions } from './redis-options';
import { RedisSettings } from './redis.settings';

export type RedisClient = Redis | Cluster;

/**
 * A connection the embedding app owns (TrendboardModule's `redis` option): used instead of one made
 * from REDIS_URL / REDIS_CLUSTER_NODES, and left open at shutdown (its owner closes it).
 */
export const REDIS_CLIENT = Symbol('trendboard redis client');

/** Sees each timed command: its name, how long until its reply (or error), and the error if any. */
export type CommandObserver = (command: string, durationMs: number, error?: unknown) => void;

/**
 * The one Redis connection of the process (single node or Cluster), its key prefix and its state (down,
 * busy, the command deadline). It fails fast while Redis is away (no offline queue, a command timeout)
 * so requests get 503 at once, and reconnects by itself. Function libraries: RedisFunctions.
 */
@Injectable()
export class RedisService implements OnModuleInit, OnApplicationShutdown {
  readonly client: RedisClient;
  /** Every key of this service starts with it (KEY_PREFIX); each feature names its keys from it. */
  readonly prefix: string;
  /** Calls a function call may take to cross snapshot boundaries (CROSSING_CALLS_PER_REQUEST; RedisFunctions). */
  readonly crossingCallsPerRequest: number;
  private readonly logger = new Logger('Redis');
  private readonly beforeClose: Array<() => Promise<void>> = [];
  /** Clock time the current outage began; undefined while connected. */
  private downSinceMs?: number;
  private readonly commandTimeoutMs: number;
  private readonly maxPendingCommands: number;
  private commandObserver?: CommandObserver;
  /** False for a connection given by the embedding app: it closes it itself. */
  private readonly ownsClient: boolean;

  constructor(
    settings: RedisSettings,
    private readonly clock: Clock,
    @Optional() @Inject(REDIS_CLIENT) given?: RedisClient,
  ) {
    this.prefix = settings.keyPrefix;
    this.crossingCallsPerRequest = settings.crossingCallsPerRequest;
    this.commandTimeoutMs = settings.commandTimeoutMs;
    this.maxPendingCommands = settings.maxPendingCommands;
    this.ownsClient = given === undefined;
    this.client = given ?? connectionOf(settings);
    this.client.on('error', (error: Error) => this.connectionLost(error.message));
    this.client.on('ready', () => this.connectionBack());
  }

  /** Boot waits briefly for the first connection; a Redis that is down does not stop the process (ready is 503). */
  async onModuleInit(): Promise<void> {
    const connected = await this.waitUntilReady(2000);
    if (!connected) this.connectionLost('not reachable yet at boot');
  }

  /** Runs `listener` the next time the connection becomes ready (a start-up step that found Redis away retries then). */
  onceReady(listener: () => void): void {
    this.client.once('ready', listener);
  }

  /** Resolves true once connected (or already), false after `timeoutMs`. */
  waitUntilReady(timeoutMs: number): Promise<boolean> {
    if (this.client.status === 'ready') return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (ready: boolean) => {
        clearTimeout(timer);
        this.client.off('ready', onReady);
        resolve(ready);
      };
      const onReady = () => done(true);
      const timer = setTimeout(() => done(false), timeoutMs);
      this.client.on('ready', onReady);
    });
  }

  /** Told of every command that goes through `timed` (its duration and error): /metrics. */
  observeCommands(observer: CommandObserver): void {
    this.commandObserver = observer;
  }

  /**
   * A command's reply within REDIS_COMMAND_TIMEOUT_MS, else "Command timed out" (503): every call to
   * Redis on a request's path goes through here (see withDeadline for why not ioredis' own timer).
   * `command` names it for the observer: a function's name, else "command". A connection away (not
   * ready yet, or lost: ioredis' "Stream isn't writeable…") rejects with RedisUnavailableError.
   */
  timed<T>(pending: Promise<T>, command = 'command'): Promise<T> {
    const deadlined = withDeadline(pending, this.commandTimeoutMs).catch(typedUnavailable);
    const observer = this.commandObserver;
    if (!observer) return deadlined;
    const startedMs = performance.now();
    return deadlined.then(
      (value) => {
        observer(command, performance.now() - startedMs);
        return value;
      },
      (error: unknown) => {
        observer(command, performance.now() - startedMs, error);
        throw error;
      },
    );
  }

  /**
   * Positions of `keys` grouped by the Redis node serving them: one group on a single node; on a Cluster
   * by ioredis' slot map (a key whose slot it does not know yet gets a group of its own). The map may be
   * stale: a caller must cope with a node refusing a key it no longer serves.
   */
  groupByNode(keys: string[]): number[][] {
    if (!(this.client instanceof Cluster)) return [keys.map((_, i) => i)];
    const { slots } = this.client;
    const groups = new Map<string, number[]>();
    keys.forEach((key, i) => {
      const node = slots[calculateSlot(key)]?.[0] ?? `unknown:${i}`;
      const group = groups.get(node);
      if (group) group.push(i);
      else groups.set(node, [i]);
    });
    return [...groups.values()];
  }

  /**
   * Commands sent and not yet answered, over every connection: ioredis keeps a command in its connection's
   * queue until Redis answers it, even after the command timed out on the client.
   */
  pendingCommands(): number {
    // Auto-pipelined commands wait for the next event-loop turn before they reach a connection's queue.
    const queued = this.client.autoPipelineQueueSize;
    if (!(this.client instanceof Cluster)) return queued + this.client.commandQueue.length;
    return this.client.nodes().reduce((sum, node) => sum + node.commandQueue.length, queued);
  }

  /** True from a lost connection until it is back: jobs failing meanwhile need not log each failure. */
  get down(): boolean {
    return this.downSinceMs !== undefined;
  }

  /** True while REDIS_MAX_PENDING_COMMANDS or more commands are unanswered: new work is shed (503 REDIS_BUSY). */
  get busy(): boolean {
    return this.pendingCommands() >= this.maxPendingCommands;
  }

  /** Throws RedisBusyError while busy: for a read that sends many commands, before each of them. */
  admit(): void {
    const pending = this.pendingCommands();
    if (pending >= this.maxPendingCommands) throw new RedisBusyError(COMMON_MESSAGES.redisBusy(pending));
  }

  async ping(timeoutMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('Command timed out')), timeoutMs);
    });
    try {
      await Promise.race([this.client.ping(), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Registers a last write (e.g. a buffer flush) to run at shutdown just before the connection closes.
   * Nest closes the HTTP server before this hook, so every finished request is already buffered.
   */
  flushBeforeClose(flush: () => Promise<void>): void {
    this.beforeClose.push(flush);
  }

  async onApplicationShutdown(): Promise<void> {
    for (const flush of this.beforeClose) {
      try {
        await flush();
      } catch (error) {
        this.logger.warn(`flush at shutdown failed: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    if (!this.ownsClient) return;
    try {
      const ended = new Promise((resolve) => this.client.once('end', resolve));
      // QUIT is never auto-pipelined: a PING is, behind anything still queued, so it drains the queue first.
      await this.client.ping().catch(() => undefined);
      await this.client.quit();
      await ended;
    } catch {
      this.client.disconnect();
    }
  }

  /**
   * An outage logs one error when it starts and one line when Redis is back: ioredis reports every
   * failed reconnection attempt (several a second), which would say nothing new.
   */
  private connectionLost(reason: string): void {
    if (this.downSinceMs !== undefined) return;
    this.downSinceMs = this.clock.nowMs();
    this.logger.error(
      `Redis connection lost: ${plainRedisReason(reason)}; requests that need Redis answer 503 until it is back`,
    );
  }

  private connectionBack(): void {
    if (this.downSinceMs === undefined) return;
    const downMs = this.clock.nowMs() - this.downSinceMs;
    this.downSinceMs = undefined;
    this.logger.log(`Redis connection back after ${(downMs / 1000).toFixed(1)} s`);
  }
}

/** ioredis' words for a connection away, as the library's typed error (a timeout keeps its own meaning: it may have run). */
function typedUnavailable(error: unknown): never {
  if (isRedisTimeoutError(error) || !isRedisUnavailableError(error)) throw error;
  throw new RedisUnavailableError(COMMON_MESSAGES.redisUnavailable(), error);
}

/** The service's own connection, from REDIS_URL or REDIS_CLUSTER_NODES. */
function connectionOf(settings: RedisSettings): RedisClient {
  const cluster = settings.clusterNodes;
  // Not auto-pipelined on a Cluster: ioredis groups auto-pipelines by the first argument, which for a
  // script with a dynamic key count is the count, not a key.
  const options = nodeOptions({
    commandTimeoutMs: settings.commandTimeoutMs,
    autoPipelining: !cluster && settings.autoPipelining,
    reconnectMaxMs: settings.reconnectMaxMs,
  });
  if (!cluster) return new Redis(settings.url, options);
  const nodes = cluster.split(',').map((node) => {
    const [host, port] = node.split(':');
    return { host, port: Number(port) };
  });
  return clusterConnection(nodes, options, natMapOf(settings.clusterNatMap));
}
