import { readFileSync } from 'node:fs';

/** One Lua script: its file, an optional shared library prepended to it, and how many KEYS it takes. */
export interface ScriptDefinition {
  /** Command name on the ioredis client. */
  name: string;
  /** Absolute path of the `.lua` file. */
  file: string;
  /** Absolute paths of library files prepended (functions shared by several scripts). */
  libraries?: string[];
  /** Fixed number of KEYS, or 'dynamic' when the caller passes numkeys first. */
  numberOfKeys: number | 'dynamic';
}

export function loadScriptSource(definition: ScriptDefinition): string {
  const parts = [...(definition.libraries ?? []), definition.file].map((path) => readFileSync(path, 'utf8'));
  return parts.join('\n');
}

/** Reads the `-- KEYS: n|dynamic` line of a script header. */
export function declaredKeyCount(luaSource: string): number | 'dynamic' | undefined {
  const match = /^-- KEYS: (\d+|dynamic)\b/m.exec(luaSource);
  if (!match) return undefined;
  return match[1] === 'dynamic' ? 'dynamic' : Number(match[1]);
}
