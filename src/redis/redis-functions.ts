import { Injectable, Logger, OnModuleInit } from '@nestjs/common';
import type { ChainableCommander } from 'ioredis';
import { traceRedisCall } from '../tracing/tracing';
import type { FunctionLibrary, LibraryFunction } from './function-library';
import { FunctionLibraries, LibrariesState } from './function-loader';
import { callFunction, queueFunction } from './functions';
import { RedisService } from './redis.service';

/**
 * The function libraries of the process on the one connection: each feature's store defines its
 * library here and calls its functions through here. Libraries are loaded on every master at module
 * init and after each reconnection (a node restarted without persistence has none); between those, a
 * call that finds its function missing reloads its library once (callFunction). Every call is traced
 * and runs within the connection's command deadline.
 */
@Injectable()
export class RedisFunctions implements OnModuleInit {
  private readonly logger = new Logger('RedisFunctions');
  private readonly libraries: FunctionLibraries;
  /** Set once onModuleInit ran: from then on a new connection or a new library loads libraries at once. */
  private initialised = false;

  constructor(private readonly redis: RedisService) {
    this.libraries = new FunctionLibraries(redis.client);
    // Before init, onModuleInit loads them.
    redis.client.on('ready', () => {
      if (this.initialised) void this.load();
    });
  }

  /** Boot waits briefly for the first connection (as RedisService does, at the same time) and loads the libraries. */
  async onModuleInit(): Promise<void> {
    const connected = await this.redis.waitUntilReady(2000);
    this.initialised = true;
    if (connected) await this.load();
  }

  /**
   * Adds function libraries (each feature's store, in its constructor). They are loaded on every
   * master at module init, after each reconnection, and at once when added later.
   */
  define(libraries: readonly FunctionLibrary[]): void {
    this.libraries.define(libraries);
    if (this.initialised && this.redis.client.status === 'ready') void this.load();
  }

  /** Whether every defined library is loaded: readiness waits for it (a call before would pay a reload). */
  get state(): LibrariesState {
    return this.libraries.status;
  }

  /** For readiness: the libraries' state, after loading them again (at most once a second) if they are not loaded. */
  ensureLoaded(minIntervalMs = 1000): Promise<LibrariesState> {
    return this.libraries.loadIfMissing(minIntervalMs);
  }

  /** Runs a function of a defined library: build, FCALL / FCALL_RO (reloading its library once if missing), decode. */
  call<In, Out>(fn: LibraryFunction<In, Out>, input: In): Promise<Out> {
    return traceRedisCall(
      fn.name,
      () => fn.build(input).keys[0],
      () => this.redis.timed(callFunction(this.redis.client, fn, input, this.redis.crossingCallsPerRequest), fn.name),
    );
  }

  /** Queues a function call on a pipeline; decode its reply with `fn.decode` once the pipeline ran. */
  queue<In>(pipeline: ChainableCommander, fn: LibraryFunction<In, unknown>, input: In): void {
    queueFunction(pipeline, fn, input);
  }

  /** Loads the libraries (logging a failure: readiness reports it until a later load succeeds). */
  private async load(): Promise<void> {
    if (this.libraries.names.length === 0) return;
    const state = await this.libraries.load();
    if (!state.loaded) this.logger.error(`function libraries not loaded: ${state.reason}`);
  }
}
