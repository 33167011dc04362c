import { join } from 'node:path';

export type ScriptArg = string | number;

/** The keys and arguments of one function call, in the order its module's header names them. */
export interface ScriptCall {
  keys: string[];
  args: ScriptArg[];
}

/** Module shared by every library: checked derivation of sibling keys inside a function. */
export const KEYS_LIBRARY = join(__dirname, 'scripts', 'keys_lib.lua');
/** Retry-safe writes: a module of every function library that writes (after keys_lib). */
export const IDEM_LIBRARY = join(__dirname, 'scripts', 'idem_lib.lua');

/** Reads the `-- KEYS: n|dynamic` line of a Lua module's header. */
export function declaredKeyCount(luaSource: string): number | 'dynamic' | undefined {
  const match = /^-- KEYS: (\d+|dynamic)\b/m.exec(luaSource);
  if (!match) return undefined;
  return match[1] === 'dynamic' ? 'dynamic' : Number(match[1]);
}
