import { Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import Redis, { ChainableCommander, Cluster } from 'ioredis';
import { Clock } from '../common/clock';
import { AppConfig } from '../common/config';
import { nodeOptions } from './redis-options';
import { callScript, commandArgs, defineScript, Script, ScriptDefinition } from './scripts';

export type RedisClient = Redis | Cluster;

/**
 * The one Redis connection of the process (single node or Cluster). It fails fast while Redis is away
 * (no offline queue, a command timeout) so requests get 503 at once, and reconnects by itself.
 */
@Injectable()
export class RedisService implements OnModuleInit, OnApplicationShutdown {
  readonly client: RedisClient;
  /** Every key of this service starts with it (KEY_PREFIX); each feature names its keys from it. */
  readonly prefix: string;
  private readonly logger = new Logger('Redis');
  private readonly defined = new Set<string>();
  private readonly beforeClose: Array<() => Promise<void>> = [];
  private lastErrorLogMs = 0;

  constructor(
    config: AppConfig,
    private readonly clock: Clock,
  ) {
    this.prefix = config.KEY_PREFIX;
    const cluster = config.REDIS_CLUSTER_NODES;
    // Not auto-pipelined on a Cluster: ioredis groups auto-pipelines by the first argument, which for a
    // script with a dynamic key count is the count, not a key.
    const options = nodeOptions({
      commandTimeoutMs: config.REDIS_COMMAND_TIMEOUT_MS,
      autoPipelining: !cluster && config.REDIS_AUTO_PIPELINING,
    });
    this.client = cluster
      ? new Cluster(
          cluster.split(',').map((node) => {
            const [host, port] = node.split(':');
            return { host, port: Number(port) };
          }),
          {
            enableOfflineQueue: false,
            // Known: ioredis re-sends a command after "Connection is closed" (retryDelayOnFailover), both
            // when it was never sent (a node still connecting: needed) and when its answer was lost (a
            // write then runs twice). Writes with an Idempotency-Key are safe either way (replayed).
            natMap: natMapOf(config.REDIS_CLUSTER_NAT_MAP),
            redisOptions: options,
            clusterRetryStrategy: (attempt) => Math.min(attempt * 100, 1000),
          },
        )
      : new Redis(config.REDIS_URL, options);
    this.client.on('error', (error: Error) => this.logThrottled(error));
  }

  /** Boot waits briefly for the first connection; a Redis that is down does not stop the process (ready is 503). */
  async onModuleInit(): Promise<void> {
    if (!(await this.waitUntilReady(2000)))
      this.logger.warn('Redis is not reachable yet; requests answer 503 until it is');
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

  /** Registers scripts once per process. */
  defineScripts(definitions: ScriptDefinition[]): void {
    for (const definition of definitions) {
      if (this.defined.has(definition.name)) continue;
      defineScript(this.client, definition);
      this.defined.add(definition.name);
    }
  }

  /** Runs a registered script: its builder makes KEYS and ARGV, its decoder checks and reads the reply. */
  call<In, Out>(script: Script<In, Out>, input: In): Promise<Out> {
    return callScript(this.client, script, input);
  }

  /** Queues a script call on a pipeline; decode its reply with `script.decode` once the pipeline ran. */
  queue<In>(pipeline: ChainableCommander, script: Script<In, unknown>, input: In): void {
    pipeline[script.name](...commandArgs(script, script.build(input)));
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

  private logThrottled(error: Error): void {
    const nowMs = this.clock.nowMs();
    if (nowMs - this.lastErrorLogMs < 5000) return;
    this.lastErrorLogMs = nowMs;
    this.logger.warn(`Redis connection problem: ${error.message}`);
  }
}

/** REDIS_CLUSTER_NAT_MAP as ioredis' natMap: announced "host:port" -> the address to connect to. */
export function natMapOf(value: string | undefined): Record<string, { host: string; port: number }> | undefined {
  if (!value) return undefined;
  return Object.fromEntries(
    value.split(',').map((pair) => {
      const [announced, reachable] = pair.split('=');
      const [host, port] = reachable.split(':');
      return [announced, { host, port: Number(port) }];
    }),
  );
}
