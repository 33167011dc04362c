import type { Redis } from 'ioredis';
import type { FunctionLibrary } from './function-library';

/**
 * Other versions of a library a node keeps whatever their age: the newest by load time. Two app
 * versions on one Redis (a rolling upgrade) and a third deployed before the first is gone keep
 * calling their own functions.
 */
export const KEPT_OTHER_VERSIONS = 2;

/** Any version loaded (or reloaded) within this long is kept too: an instance of it is alive. */
export const KEPT_LOADED_WITHIN_MS = 24 * 60 * 60 * 1000;

/**
 * A node that holds a library's version with a stamp younger than this is not sent it again (mustLoad):
 * its code is the same (the version is derived from it). An older stamp is refreshed by a load
 * (REPLACE), so a version stays at least KEPT_LOADED_WITHIN_MS - RESTAMP_AFTER_MS after any start.
 */
export const RESTAMP_AFTER_MS = 60 * 60 * 1000;

/** `<name>_<8 hex>`: the versioned name of every library (libraryVersion). */
const VERSIONED = /^(.*)_[0-9a-f]{8}$/;

/** The function a loaded library carries beside its own: its description says when it was loaded. */
export function stampName(library: FunctionLibrary): string {
  return `${library.name}__loaded`;
}

/**
 * The source FUNCTION LOAD sends: the library's, plus a function stamped with the load time (unix ms,
 * wall time: loads of different instances are compared), which pruneVersions reads from FUNCTION
 * LIST. Appended last, so every line of the library keeps its number (locateError).
 */
export function stampedSource(library: FunctionLibrary, nowMs: number): string {
  const stamp = Math.floor(nowMs);
  return (
    library.source +
    `redis.register_function{function_name = '${stampName(library)}', callback = function() return ${stamp} end, ` +
    `flags = { 'no-writes' }, description = 'loaded_at_ms=${stamp}'}\n`
  );
}

/** A library as FUNCTION LIST shows it: its name and its load stamp (undefined: loaded before stamps). */
export interface ListedVersion {
  name: string;
  loadedAtMs: number | undefined;
}

/**
 * The versions of `library` a node may drop: of the other `<name>_<8 hex>` libraries, those past the
 * KEPT_OTHER_VERSIONS newest by load time (unstamped ones count as oldest) and loaded longer than
 * KEPT_LOADED_WITHIN_MS ago (or never stamped). An instance whose version was dropped all the same
 * (still running after days with more versions deployed since) reloads it on its next call.
 */
export function staleVersions(library: FunctionLibrary, listed: readonly ListedVersion[], nowMs: number): string[] {
  const bare = VERSIONED.exec(library.name)?.[1];
  if (bare === undefined) return [];
  const others = listed
    .filter(({ name }) => name !== library.name && VERSIONED.exec(name)?.[1] === bare)
    .sort((a, b) => (b.loadedAtMs ?? -Infinity) - (a.loadedAtMs ?? -Infinity));
  return others
    .slice(KEPT_OTHER_VERSIONS)
    .filter(({ loadedAtMs }) => loadedAtMs === undefined || nowMs - loadedAtMs > KEPT_LOADED_WITHIN_MS)
    .map(({ name }) => name);
}

/** FUNCTION LIST's reply as name → value pairs, each entry a flat array. */
function fieldsOf(entry: unknown): Map<string, unknown> {
  const fields = new Map<string, unknown>();
  if (!Array.isArray(entry)) return fields;
  for (let i = 0; i + 1 < entry.length; i += 2) fields.set(String(entry[i]), entry[i + 1]);
  return fields;
}

/** A listed library's stamp: the `loaded_at_ms=` description of its `<name>__loaded` function. */
function loadedAtOf(name: string, functions: unknown): number | undefined {
  for (const fn of Array.isArray(functions) ? functions : []) {
    const fields = fieldsOf(fn);
    if (fields.get('name') !== `${name}__loaded`) continue;
    const stamp = /^loaded_at_ms=(\d+)$/.exec(String(fields.get('description')));
    return stamp ? Number(stamp[1]) : undefined;
  }
  return undefined;
}

/** The FUNCTION LIST pattern of every version of `library`: `<name>_*`. */
function versionsPattern(library: FunctionLibrary): string {
  return `${VERSIONED.exec(library.name)?.[1] ?? library.name}_*`;
}

/** A FUNCTION LIST reply as its libraries' names and stamps. */
function listedOf(reply: unknown): ListedVersion[] {
  return (Array.isArray(reply) ? reply : []).map((entry) => {
    const fields = fieldsOf(entry);
    const name = String(fields.get('library_name'));
    return { name, loadedAtMs: loadedAtOf(name, fields.get('functions')) };
  });
}

/** Every version of each library on one node, as FUNCTION LIST shows them: one round trip for all. */
export async function listedVersions(node: Redis, libraries: readonly FunctionLibrary[]): Promise<ListedVersion[][]> {
  const pipeline = node.pipeline();
  for (const library of libraries) pipeline.call('FUNCTION', 'LIST', 'LIBRARYNAME', versionsPattern(library));
  const results = (await pipeline.exec()) ?? [];
  return results.map(([error, reply]) => {
    if (error) throw error;
    return listedOf(reply);
  });
}

/**
 * Whether `library` must be sent to a node whose versions of it are `listed`: unless the node holds
 * this very version (same name, hence same code) stamped less than RESTAMP_AFTER_MS before `nowMs`.
 * An unstamped one (loaded before stamps) is loaded again, which stamps it.
 */
export function mustLoad(library: FunctionLibrary, listed: readonly ListedVersion[], nowMs: number): boolean {
  const held = listed.find(({ name }) => name === library.name);
  return held?.loadedAtMs === undefined || nowMs - held.loadedAtMs >= RESTAMP_AFTER_MS;
}

/**
 * Drops the stale versions of each library on one node (after loading the current ones there), from
 * `listed`, each library's versions as listedVersions read them before the load (which adds or
 * restamps only the library's own version, never one staleVersions may drop). Two instances pruning at
 * once may both delete one version: the second's "Library not found" is no error.
 */
export async function pruneVersions(
  node: Redis,
  libraries: readonly FunctionLibrary[],
  listed: readonly ListedVersion[][],
  nowMs: number,
): Promise<string[]> {
  const dropped: string[] = [];
  for (const [i, library] of libraries.entries()) {
    for (const name of staleVersions(library, listed[i], nowMs)) {
      await node.call('FUNCTION', 'DELETE', name).catch((error: unknown) => {
        if (!(error instanceof Error && /library not found/i.test(error.message))) throw error;
      });
      dropped.push(name);
    }
  }
  return dropped;
}
