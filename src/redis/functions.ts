import { Command } from 'ioredis';
import type { ChainableCommander, Cluster, Redis } from 'ioredis';
import { WindowDrainingError } from '../common/errors';
import { CROSSING_CALLS_PER_REQUEST } from '../common/limits';
import { FunctionLibrary, LibraryFunction, locateError } from './function-library';
import { pruneVersions, stampedSource } from './library-versions';
import type { ScriptArg, ScriptCall } from './scripts';

export type FunctionClient = Redis | Cluster;

/**
 * What Redis (7.0 to 7.4) answers to FCALL / FCALL_RO of a function it does not hold: never loaded
 * there, lost in a FUNCTION FLUSH or a FLUSHALL, or a node (a promoted replica, a new master) that
 * never got it.
 */
export const FUNCTION_MISSING = /^ERR Function not found\b/;

export function isFunctionMissing(error: unknown): boolean {
  return error instanceof Error && FUNCTION_MISSING.test(error.message);
}

/** The nodes a library must be loaded on: the node itself, or every master of a Cluster (replicas get it by replication). */
export function mastersOf(client: FunctionClient): Redis[] {
  return 'isCluster' in client && client.isCluster ? (client as Cluster).nodes('master') : [client as Redis];
}

/**
 * FUNCTION LOAD REPLACE of every library on every master, one round trip per node (a pipeline): the
 * same source loaded twice, by two instances starting at once, is one atomic replace after another
 * and ends the same. Each load is stamped with `nowMs` (wall time: stamps of instances are compared),
 * and the node's stale versions of the libraries then go (pruneVersions, src/redis/library-versions.ts).
 * Throws when a node refused (unreachable, a compile error: a bug), naming it.
 */
export async function loadLibraries(
  client: FunctionClient,
  libraries: readonly FunctionLibrary[],
  nowMs = Date.now(),
): Promise<number> {
  const nodes = mastersOf(client);
  if (nodes.length === 0) throw new Error('no Redis master known yet to load function libraries on');
  if (libraries.length === 0) return nodes.length;
  await Promise.all(
    nodes.map(async (node) => {
      const pipeline = node.pipeline();
      for (const library of libraries) pipeline.function('LOAD', 'REPLACE', stampedSource(library, nowMs));
      const results = (await pipeline.exec()) ?? [];
      const failed = results.findIndex(([error]) => error);
      const error = results[failed]?.[0];
      if (error) {
        const message = locateError(libraries[failed], error.message);
        throw new Error(
          `FUNCTION LOAD of ${libraries[failed].name} on ${node.options.host}:${node.options.port}: ${message}`,
        );
      }
      await pruneVersions(node, libraries, nowMs);
    }),
  );
  return nodes.length;
}

/**
 * Reloads happening now, per client and library: every call that finds the function missing at the
 * same moment (a flush under load) waits for one reload instead of sending one each.
 */
const reloading = new WeakMap<FunctionClient, Map<string, Promise<string | undefined>>>();

/**
 * Loads `library` on every master, once however many calls ask at the same time. Never throws: it
 * answers why the load failed (e.g. a master still down during a failover), for the retry's error.
 */
export function reloadLibrary(client: FunctionClient, library: FunctionLibrary): Promise<string | undefined> {
  let pending = reloading.get(client);
  if (!pending) reloading.set(client, (pending = new Map()));
  const running = pending.get(library.name);
  if (running) return running;
  const reload = loadLibraries(client, [library]).then(
    () => undefined,
    (error: unknown) => (error instanceof Error ? error.message : String(error)),
  );
  const done = reload.finally(() => pending.delete(library.name));
  pending.set(library.name, done);
  return done;
}

/** FCALL's arguments after the function name: numkeys, keys, args (a fixed key count is checked). */
export function fcallArgs(fn: LibraryFunction<never, unknown>, call: ScriptCall): [number, ...ScriptArg[]] {
  if (fn.numberOfKeys !== 'dynamic' && call.keys.length !== fn.numberOfKeys) {
    throw new Error(`${fn.redisName} takes ${fn.numberOfKeys} keys, was given ${call.keys.length}`);
  }
  return [call.keys.length, ...call.keys, ...call.args];
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
