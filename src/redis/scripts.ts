import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ClientContext, Redis, RedisCommander, Result } from 'ioredis';

export type ScriptArg = string | number;

/**
 * The command a script registers on the ioredis client. Each feature declares its scripts' commands
 * once, by module augmentation of ioredis' RedisCommander in its `*.scripts.ts`, so the client, the
 * Cluster client and pipelines all know them and no call needs a cast.
 */
export type ScriptCommand<Context extends ClientContext> = (...keysAndArgs: ScriptArg[]) => Result<unknown, Context>;

/** Every declared script command: by convention their names start with `tb`. */
export type ScriptCommandName = Extract<keyof RedisCommander, `tb${string}`>;

/** The keys and arguments of one script call, in the order the script's header names them. */
export interface ScriptCall {
  keys: string[];
  args: ScriptArg[];
}

/** One Lua script: its file, the libraries prepended to it, and how many KEYS it takes. */
export interface ScriptDefinition {
  name: ScriptCommandName;
  /** Absolute path of the `.lua` file. */
  file: string;
  /** Absolute paths of library files prepended (functions shared by several scripts). */
  libraries?: string[];
  /** Fixed number of KEYS, or 'dynamic' when numkeys is sent first. */
  numberOfKeys: number | 'dynamic';
}

/**
 * A script and its typed contract: `build` is the one place its KEYS and ARGV are made from domain
 * values, `decode` the one place its reply is checked and read (throwing ScriptReplyError on any
 * other shape).
 */
export interface Script<In, Out> extends ScriptDefinition {
  build(input: In): ScriptCall;
  decode(reply: unknown, input: In): Out;
}

/** Declares a script: its input and output types are read off `build` and `decode`. */
export function typedScript<In, Out>(script: Script<In, Out>): Script<In, Out> {
  return script;
}

/** Any script of a registry, whatever its input and output. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a registry holds scripts of every signature
export type AnyScript = Script<any, unknown>;

/** Library shared by every feature: checked derivation of sibling keys inside a script. */
export const KEYS_LIBRARY = join(__dirname, 'scripts', 'keys_lib.lua');
/** Retry-safe writes: a library of write scripts and a module of function libraries that write (needs keys_lib). */
export const IDEM_LIBRARY = join(__dirname, 'scripts', 'idem_lib.lua');
/** Libraries of every idempotent write script. */
export const WRITE_LIBRARIES = [KEYS_LIBRARY, IDEM_LIBRARY];

/**
 * The script's source with its libraries prepended. A first line `#!lua flags=...` of the script file
 * stays first: Redis reads script flags only from there.
 */
export function loadScriptSource(definition: ScriptDefinition): string {
  const libraries = (definition.libraries ?? []).map((path) => readFileSync(path, 'utf8'));
  const source = readFileSync(definition.file, 'utf8');
  const shebang = /^#!.*\n/.exec(source)?.[0] ?? '';
  return shebang + [...libraries, source.slice(shebang.length)].join('\n');
}

/** The arguments of the script's command: numkeys first for dynamic scripts. */
export function commandArgs(definition: ScriptDefinition, call: ScriptCall): ScriptArg[] {
  if (definition.numberOfKeys === 'dynamic') return [call.keys.length, ...call.keys, ...call.args];
  if (call.keys.length !== definition.numberOfKeys) {
    throw new Error(`${definition.name} takes ${definition.numberOfKeys} keys, was given ${call.keys.length}`);
  }
  return [...call.keys, ...call.args];
}

/** Registers a script's command on a client; ioredis runs it by EVALSHA and falls back to EVAL on NOSCRIPT. */
export function defineScript(client: Pick<Redis, 'defineCommand'>, definition: ScriptDefinition): void {
  const numberOfKeys = definition.numberOfKeys === 'dynamic' ? undefined : definition.numberOfKeys;
  client.defineCommand(definition.name, { lua: loadScriptSource(definition), numberOfKeys });
}

/** Runs a script registered on `client` (a node, a Cluster): build, send, decode. */
export async function callScript<In, Out>(client: RedisCommander, script: Script<In, Out>, input: In): Promise<Out> {
  const reply: unknown = await client[script.name](...commandArgs(script, script.build(input)));
  return script.decode(reply, input);
}

/** Reads the `-- KEYS: n|dynamic` line of a script header. */
export function declaredKeyCount(luaSource: string): number | 'dynamic' | undefined {
  const match = /^-- KEYS: (\d+|dynamic)\b/m.exec(luaSource);
  if (!match) return undefined;
  return match[1] === 'dynamic' ? 'dynamic' : Number(match[1]);
}
