import { Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { Command } from 'ioredis';
import type { ChainableCommander } from 'ioredis';
import { WindowDrainingError } from '../common/errors';
import { CROSSING_CALLS_PER_REQUEST } from '../common/limits';
import { traceRedisCall } from '../tracing/tracing';
import { FunctionLibrary, LibraryFunction, locateError } from './function-library';
import { FunctionLibraries, LibrariesState } from './function-loader';
import { FunctionClient, isFunctionMissing, reloadLibrary } from './functions';
import type { ScriptArg, ScriptCall } from './scripts';
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

/** FCALL's arguments after the function name: numkeys, keys, args (a fixed key count is checked). */
export function fcallArgs(fn: LibraryFunction<never, unknown>, call: ScriptCall): [number, ...ScriptArg[]] {
  if (fn.numberOfKeys !== 'dynamic' && call.keys.length !== fn.numberOfKeys) {
    throw new Error(`${fn.redisName} takes ${fn.numberOfKeys} keys, was given ${call.keys.length}`);
  }
  // Sized once and filled: spread into a literal, the array grew as it went (every call passes here).
  const { keys, args } = call;
  const all = new Array<number | ScriptArg>(1 + keys.length + args.length);
  all[0] = keys.length;
  for (let i = 0; i < keys.length; i++) all[1 + i] = keys[i];
  for (let i = 0; i < args.length; i++) all[1 + keys.length + i] = args[i];
  return all as [number, ...ScriptArg[]];
}

/**
 * A call with this many arguments or more (a coalesced call of about 25 increments, a lookup of 60 ids)
 * is written to the connection at once instead of joining ioredis' auto-pipeline, as is every call of
 * a function declared `sendAlone` (the batch increment). ioredis keeps one auto-pipeline in flight per
 * connection and sends the next only once every reply of the last is in: Redis idles between two
 * pipelines, and a long call makes every command behind it wait. Such a call's own write costs little
 * beside its work in Redis; small commands (reads, a coalesced call of a few increments) still share
 * their writes, which saves Redis CPU per request. Measured in docs/benchmarks.md.
 */
export const SEND_ALONE_MIN_ARGS = 64;

function send(client: FunctionClient, fn: LibraryFunction<never, unknown>, args: [number, ...ScriptArg[]]) {
  if ((fn.sendAlone || args.length >= SEND_ALONE_MIN_ARGS) && client.options.enableAutoPipelining) {
    // What ioredis itself does for a command it does not auto-pipeline (utils/Commander.js).
    const command = new Command(fn.readOnly ? 'fcall_ro' : 'fcall', [fn.redisName, ...args], {
      keyPrefix: client.options.keyPrefix,
      replyEncoding: 'utf8',
    });
    void client.sendCommand(command);
    return command.promise as Promise<unknown>;
  }
  return fn.readOnly ? client.fcall_ro(fn.redisName, ...args) : client.fcall(fn.redisName, ...args);
}

/**
 * Runs a function (build, FCALL or FCALL_RO, decode). When the node answers that the function is
 * missing, its library is loaded on every master and the call sent once more: it did not run the
 * first time, so the retry is never a second run; so is a call answering that it left snapshot
 * boundaries to cross (sendCrossing). A Redis error's `user_function:<line>` gains the module line it
 * points to.
 */
export async function callFunction<In, Out>(
  client: FunctionClient,
  fn: LibraryFunction<In, Out>,
  input: In,
  crossingCalls = CROSSING_CALLS_PER_REQUEST,
): Promise<Out> {
  const args = fcallArgs(fn, fn.build(input));
  return fn.decode(await sendCrossing(client, fn, args, crossingCalls), input);
}

/** A script's answer that it crossed some snapshot boundaries and left the rest, having applied nothing. */
function isCrossingLeft(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('TB_CROSSING');
}

/**
 * Sends the call again while it answers that snapshot boundaries are left (each call crosses some
 * and applies nothing until none is left), at most `crossingCalls` times (CROSSING_CALLS_PER_REQUEST).
 */
async function sendCrossing(
  client: FunctionClient,
  fn: LibraryFunction<never, unknown>,
  args: [number, ...ScriptArg[]],
  crossingCalls: number,
) {
  for (let call = 1; ; call++) {
    try {
      return await sendLoaded(client, fn, args);
    } catch (error) {
      if (!isCrossingLeft(error)) throw error;
      if (call >= crossingCalls)
        throw new WindowDrainingError(`snapshot boundaries are still being stored after ${call} calls: retry`);
    }
  }
}

/** Sends the call, loading its library and sending it once more when the node lacks it. */
async function sendLoaded(client: FunctionClient, fn: LibraryFunction<never, unknown>, args: [number, ...ScriptArg[]]) {
  let reply: unknown;
  try {
    reply = await send(client, fn, args);
  } catch (error) {
    if (!isFunctionMissing(error)) throw located(fn.library, error);
    const reloadFailure = await reloadLibrary(client, fn.library);
    try {
      reply = await send(client, fn, args);
    } catch (retryError) {
      const error = located(fn.library, retryError);
      if (reloadFailure && error instanceof Error) error.message += ` (reload failed: ${reloadFailure})`;
      throw error;
    }
  }
  return reply;
}

/** Queues a function call on a pipeline (no reload there: decode its reply with `fn.decode` once the pipeline ran). */
export function queueFunction<In>(pipeline: ChainableCommander, fn: LibraryFunction<In, unknown>, input: In): void {
  const args = fcallArgs(fn, fn.build(input));
  if (fn.readOnly) pipeline.fcall_ro(fn.redisName, ...args);
  else pipeline.fcall(fn.redisName, ...args);
}

function located(library: FunctionLibrary, error: unknown): unknown {
  if (error instanceof Error) error.message = locateError(library, error.message);
  return error;
}
