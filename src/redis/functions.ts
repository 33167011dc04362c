import type { Cluster, Redis } from 'ioredis';
import { FunctionLibrary, locateError } from './function-library';
import { listedVersions, mustLoad, pruneVersions, stampedSource } from './library-versions';

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
 * Loads every library on every master that does not hold it yet: each node first answers which
 * versions it holds (FUNCTION LIST, one round trip), then gets FUNCTION LOAD REPLACE of the libraries
 * it lacks, or holds with a stamp older than RESTAMP_AFTER_MS (mustLoad), in one more round trip. A
 * version's name is derived from its code, so a node holding that name holds that code: the Lua is not
 * compiled again at each start of an instance. The same source loaded twice, by two instances starting
 * at once, is one atomic replace after another and ends the same. Each load is stamped with `nowMs`
 * (wall time: stamps of instances are compared), and the node's stale versions of the libraries then
 * go (pruneVersions, src/redis/library-versions.ts). Throws when a node refused (unreachable, a compile
 * error: a bug), naming it.
 */
export async function loadLibraries(
  client: FunctionClient,
  libraries: readonly FunctionLibrary[],
  nowMs = Date.now(),
): Promise<number> {
  const nodes = mastersOf(client);
  if (nodes.length === 0) throw new Error('no Redis master known yet to load function libraries on');
  if (libraries.length === 0) return nodes.length;
  await Promise.all(nodes.map((node) => loadOnNode(node, libraries, nowMs)));
  return nodes.length;
}

async function loadOnNode(node: Redis, libraries: readonly FunctionLibrary[], nowMs: number): Promise<void> {
  const listed = await listedVersions(node, libraries);
  const missing = libraries.filter((library, i) => mustLoad(library, listed[i], nowMs));
  if (missing.length > 0) {
    const pipeline = node.pipeline();
    for (const library of missing) pipeline.function('LOAD', 'REPLACE', stampedSource(library, nowMs));
    const results = (await pipeline.exec()) ?? [];
    const failed = results.findIndex(([error]) => error);
    const error = results[failed]?.[0];
    if (error) {
      const message = locateError(missing[failed], error.message);
      throw new Error(
        `FUNCTION LOAD of ${missing[failed].name} on ${node.options.host}:${node.options.port}: ${message}`,
      );
    }
  }
  await pruneVersions(node, libraries, listed, nowMs);
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
