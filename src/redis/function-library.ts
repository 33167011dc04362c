import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { HEADER_WINDOW_FIELDS } from './function-args';
import { LuaModule, orderModules, readLuaModule } from './lua-modules';
import type { ScriptCall } from './scripts';

/** The shared argument reader (read_header, read_records): every library starts with it. */
export const ARGS_MODULE = join(__dirname, 'functions', 'args.lua');

/** Flags Redis 7.0 knows for a function; `no-writes` makes it callable with FCALL_RO (and on replicas). */
export type FunctionFlag = 'no-writes' | 'allow-oom' | 'allow-stale' | 'no-cluster' | 'allow-cross-slot-keys';

/**
 * One function of a library and its typed contract, as a Script has today: `build` is the one place its
 * keys and args are made from domain values, `decode` the one place its reply is checked and read.
 */
export interface FunctionDefinition<In, Out> {
  /**
   * The call's name in metrics, traces and reply errors (e.g. tbRankIncrement): one per definition and
   * the same in every version of its library, unlike `redisName`.
   */
  name: string;
  /** The Lua local function (defined by one of the library's modules) that handles a call. */
  handler: string;
  flags?: readonly FunctionFlag[];
  /** Fixed number of keys (checked before sending), or 'dynamic'. */
  numberOfKeys: number | 'dynamic';
  /**
   * Written to the connection at once, never into ioredis' auto-pipeline, whatever its size (see
   * SEND_ALONE_MIN_ARGS): for calls that arrive many at a time, each with work for Redis (a batch per
   * HTTP request), which the one auto-pipeline in flight would make wait in rounds.
   */
  sendAlone?: boolean;
  /**
   * Its named contract (src/redis/function-args.ts): the names of its own arguments after the header
   * and of its reply's fields, emitted into the library as CALLS.<handler> so the Lua reads
   * (reader.read_call) and answers (reader.answer) by the names TypeScript writes and decodes by.
   * Absent: a function still on positional arguments and reply.
   */
  contract?: CallContract;
  build(input: In): ScriptCall;
  decode(reply: unknown, input: In): Out;
}

/** A function's argument names (after the common header) and reply field names, in wire order. */
export interface CallContract {
  args: readonly string[];
  reply: readonly string[];
  /**
   * Records follow the arguments (recordArgs: a count, then rows of a shape the library declares in
   * `records`, which an argument names): read with reader.record_count and reader.fill_record.
   */
  rest?: boolean;
  /**
   * The function reads its windows' header arguments through window_lib (by their place): reader.read_call
   * leaves them unparsed (header.windows nil; header.window_count set).
   */
  rawWindows?: boolean;
  /**
   * A retry-safe write's counts of what it created (new items, bytes …), answered by idem_lib before
   * the reply's fields and never stored: the Lua builds them by these names (CALLS.<handler>.created,
   * reader.record_of) and TypeScript reads them by the same names (decodeIdempotent).
   */
  created?: readonly string[];
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a library holds functions of every signature
type AnyDefinition = FunctionDefinition<any, any>;

/** What names a function: `name` in metrics, traces and reply errors; `handler` its Lua function. */
export interface FunctionId {
  name: string;
  handler: string;
}

/** A function as a set declares it: its definition once the set has named it (functionSet). */
export type Declared<In, Out> = (id: FunctionId) => FunctionDefinition<In, Out>;

/** A definition before its set names it: a handler is stated only where it is not the key's. */
export type Unnamed<D> = Omit<D, 'name' | 'handler'> & { handler?: string };

/** The definition named: a handler it states wins over the one its key gives. */
export function named<D extends { handler?: string }>(id: FunctionId, definition: D): D & FunctionId {
  return { ...definition, name: id.name, handler: definition.handler ?? id.handler };
}

/**
 * A slice's functions, each named from its key, which is said once: `name` the prefix and the key
 * (tbRank + boardPut: tbRankBoardPut), `handler` the key in snake_case (board_put) unless stated.
 */
export function functionSet<const D extends Record<string, Declared<never, unknown>>>(
  prefix: string,
  declared: D,
): { [K in keyof D]: ReturnType<D[K]> } {
  const entries = Object.entries(declared).map(([key, declare]) => {
    const handler = key.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
    return [key, declare({ name: prefix + key[0].toUpperCase() + key.slice(1), handler })];
  });
  return Object.fromEntries(entries) as { [K in keyof D]: ReturnType<D[K]> };
}

/** Declares a function of a set (functionSet): its input and output types are read off `build` and `decode`. */
export function typedFunction<In, Out>(definition: Unnamed<FunctionDefinition<In, Out>>): Declared<In, Out> {
  return (id) => named(id, definition);
}

/**
 * The Lua modules of `functions` under `dir`, by convention one `<handler>.lua` per handler (two
 * definitions sharing a handler share its module), in the order first named.
 */
export function handlerModules(dir: string, functions: Record<string, AnyDefinition>): string[] {
  return [...new Set(Object.values(functions).map((definition) => join(dir, `${definition.handler}.lua`)))];
}

/** Where a line of an assembled library comes from. */
export interface SourceLine {
  module: string;
  line: number;
}

/** A library as Redis loads it: its versioned name, its assembled source, and where each line came from. */
export interface FunctionLibrary {
  /**
   * `<name>_<version>`, e.g. tb_ranking_3f0a9c12: what FUNCTION LOAD registers and FUNCTION LIST shows.
   * The version is derived from the assembled source (libraryVersion), never written by hand.
   */
  readonly name: string;
  readonly source: string;
  /** Absolute paths of its Lua modules, in the order assembled (orderModules). */
  readonly modules: readonly string[];
  /** The module line behind a line of `source` (1-based, as Redis' `user_function:<line>` counts). */
  locate(line: number): SourceLine | undefined;
}

/** A function bound to its library: what callFunction runs. */
export interface LibraryFunction<In, Out> extends FunctionDefinition<In, Out> {
  readonly library: FunctionLibrary;
  /** The name Redis knows it by: `<library>_<handler>`, so two versions of a library can be loaded side by side. */
  readonly redisName: string;
  /** Declared `no-writes`: sent as FCALL_RO. */
  readonly readOnly: boolean;
}

export type BoundFunctions<F extends Record<string, AnyDefinition>> = {
  [K in keyof F]: F[K] extends FunctionDefinition<infer In, infer Out> ? LibraryFunction<In, Out> : never;
};

export interface LibrarySpec<F extends Record<string, AnyDefinition>> {
  /** Feature name, lower snake case (tb_ranking). */
  name: string;
  /**
   * Absolute paths of the library's Lua files, in any order: shared modules are ordered from their
   * declared `requires`, handler files by name (src/redis/lua-modules.ts); ARGS_MODULE is added.
   */
  modules: readonly string[];
  /**
   * Named field lists of per-request records, emitted as RECORD_FIELDS.<name> for read_records (beside
   * `header_window`, the header's window fields, which every library holds).
   */
  records?: Readonly<Record<string, readonly string[]>>;
  functions: F;
}

const LUA_NAME = /^[a-z][a-z0-9_]*$/;
const LUA_KEYWORDS = new Set(
  'and break do else elseif end false for function if in local nil not or repeat return then true until while'.split(
    ' ',
  ),
);

/**
 * Declares a library: its Lua is the record field lists, then each file as a block of its own,
 * shared modules (ARGS_MODULE among them) as tables in the order their declared dependencies give,
 * then the handler files, each with one registration per function it defines (generated here, so a
 * function's name and flags are written once, in TypeScript). The shared modules are compiled once
 * per load, shared by every function of the library. How a file declares its kind and dependencies:
 * src/redis/lua-modules.ts.
 */
export function defineLibrary<F extends Record<string, AnyDefinition>>(
  spec: LibrarySpec<F>,
): { library: FunctionLibrary; functions: BoundFunctions<F> } {
  if (!LUA_NAME.test(spec.name)) throw new Error(`library name "${spec.name}": lower snake case`);
  if (spec.records?.header_window) throw new Error(`${spec.name}: the record shape header_window is the header's`);
  const ordered = orderModules(spec.name, [...new Set([ARGS_MODULE, ...spec.modules])].map(readLuaModule));
  const assembled = assemble(spec.name, spec, ordered);
  const name = `${spec.name}_${libraryVersion(assembled.source(spec.name))}`;
  const modules = ordered.map(({ path }) => path);
  const library: FunctionLibrary = { name, source: assembled.source(name), modules, locate: assembled.locate };
  const functions = Object.fromEntries(
    Object.entries(spec.functions).map(([key, definition]) => [
      key,
      {
        ...definition,
        library,
        redisName: `${name}_${definition.handler}`,
        readOnly: definition.flags?.includes('no-writes') ?? false,
      },
    ]),
  ) as BoundFunctions<F>; // Object.fromEntries loses the keys; each entry is built from its own definition above
  return { library, functions };
}

/**
 * The version of a library: 8 hex digits of the SHA-256 of its source assembled under its bare name,
 * without the #! line. Any change of a module's text, a record field list, a handler or its flags
 * gives a new name, so instances running the old and the new code each call their own functions
 * during a rolling upgrade; the same code gives the same name on every instance.
 */
export function libraryVersion(source: string): string {
  return createHash('sha256')
    .update(source.slice(source.indexOf('\n') + 1))
    .digest('hex')
    .slice(0, 8);
}

/**
 * The library's source under any name (the name is in its first lines and its registrations only), and
 * where its lines come from.
 */
function assemble(
  bareName: string,
  spec: LibrarySpec<Record<string, AnyDefinition>>,
  modules: readonly LuaModule[],
): { source: (name: string) => string; locate: (line: number) => SourceLine | undefined } {
  const { add, source, locate } = librarySource();
  add((name) => `-- ${name}: assembled by src/redis/function-library.ts; edit the modules, not this text.`);
  add(`local RECORD_FIELDS = ${luaRecordFields({ header_window: HEADER_WINDOW_NAMES, ...spec.records })}`);
  add(`local CALLS = ${luaContracts(spec.functions)}`);
  add(`local ${MODULE_TABLES} = {}`);
  const registered = registrations(bareName, spec.functions, modules);
  for (const module of modules) {
    // Every file is a block of its own (see lua-modules.ts): its table and the tables it requires are
    // locals of its block, bound from MODULE_TABLES, so the main chunk (whose locals Lua caps at 200)
    // holds a fixed few names however many modules the library has. A handler is registered inside its block.
    if (module.declares.length > 0) add(`local ${module.declares.join(', ')}`);
    add(`do -- ${module.file}`);
    const prologue = blockPrologue(module);
    if (prologue !== '') add(prologue);
    add(module.text, module.file);
    const defined = new Set(module.table === undefined ? localFunctions(module.text) : []);
    for (const [handler, registration] of registered) {
      if (!defined.has(handler)) continue;
      add(registration);
      registered.delete(handler);
    }
    add(`end -- ${module.file}`);
  }
  for (const handler of registered.keys())
    throw new Error(`${bareName}: handler ${handler} is defined in a shared module`);
  return { source, locate };
}

/** A line, or lines, of a library's source; a function of the library's name where it names it. */
type SourcePart = string | ((name: string) => string);

/**
 * A library's source as it is assembled: its parts, added after its `#!lua` line, and where the parts
 * taken from a module start (a module's text is one part, its lines counted, never split).
 */
function librarySource() {
  const parts: SourcePart[] = [(name) => `#!lua name=${name}`];
  const texts: Array<{ first: number; lines: number; module: string }> = [];
  let lines = 1;
  return {
    add(part: SourcePart, module?: string): void {
      const count = typeof part === 'string' ? lineCount(part) : 1;
      if (module !== undefined) texts.push({ first: lines + 1, lines: count, module });
      parts.push(part);
      lines += count;
    },
    source: (name: string) => parts.map((part) => (typeof part === 'string' ? part : part(name))).join('\n') + '\n',
    locate(line: number): SourceLine | undefined {
      const text = texts.find(({ first, lines: count }) => line >= first && line < first + count);
      return text === undefined ? undefined : { module: text.module, line: line - text.first + 1 };
    },
  };
}

/** How many lines `text` holds (one more than its newlines). */
function lineCount(text: string): number {
  let count = 1;
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) count++;
  return count;
}

/** The main-chunk table holding each shared module's table by its name. */
const MODULE_TABLES = 'MODULE_TABLES';

/**
 * A file's first line in its block (empty for a file requiring nothing): its own table (a shared module) made and registered, and the
 * tables it requires bound as locals. The order of modules (orderModules) has registered each of
 * those before, so a module's functions reach another's as an upvalue, as a main-chunk local was.
 */
function blockPrologue(module: LuaModule): string {
  const own =
    module.table === undefined
      ? []
      : [`local ${module.table} = {}; ${MODULE_TABLES}.${module.table} = ${module.table}`];
  const required = [...module.requires].sort();
  const bound =
    required.length === 0
      ? []
      : [`local ${required.join(', ')} = ${required.map((table) => `${MODULE_TABLES}.${table}`).join(', ')}`];
  return [...own, ...bound].join('; ');
}

/**
 * One `redis.register_function` line per handler, by handler, under the library name it is given. Two
 * definitions may share a handler (one Lua function, two decoders): it is registered once, and must
 * carry the same flags.
 */
function registrations(
  name: string,
  functions: Record<string, AnyDefinition>,
  modules: readonly LuaModule[],
): Map<string, SourcePart> {
  const defined = new Set(modules.flatMap(({ text }) => localFunctions(text)));
  const registered = new Map<string, string>();
  const lines = new Map<string, SourcePart>();
  for (const definition of Object.values(functions)) {
    if (!LUA_NAME.test(definition.handler)) throw new Error(`${name}: handler "${definition.handler}" is no Lua name`);
    const flags = (definition.flags ?? []).map((flag) => `'${flag}'`).join(', ');
    const seen = registered.get(definition.handler);
    if (seen !== undefined && seen !== flags) {
      throw new Error(`${name}: ${definition.handler} declared with two flag sets`);
    }
    if (seen !== undefined) continue;
    registered.set(definition.handler, flags);
    if (!defined.has(definition.handler)) {
      throw new Error(`${name}: no module defines "local function ${definition.handler}(keys, args)"`);
    }
    const { handler } = definition;
    lines.set(
      handler,
      (library) =>
        `redis.register_function{function_name = '${library}_${handler}', callback = ${handler}, flags = { ${flags} }}`,
    );
  }
  return lines;
}

/** The names of the `local function <name>(` lines of a Lua file. */
function localFunctions(text: string): string[] {
  return [...text.matchAll(/^local function (\w+)\(/gm)].map((match) => match[1]);
}

/** The header's window fields (HEADER_WINDOW_FIELDS), a record shape every library holds: what the reader binds them by. */
const HEADER_WINDOW_NAMES = Object.keys(HEADER_WINDOW_FIELDS);

function luaRecordFields(records: Readonly<Record<string, readonly string[]>>): string {
  const entries = Object.entries(records).map(([record, fields]) => {
    for (const field of [record, ...fields]) {
      if (!LUA_NAME.test(field)) throw new Error(`record field "${field}" is no Lua name`);
    }
    return `${record} = { ${fields.map((field) => `'${field}'`).join(', ')} }`;
  });
  return `{ ${entries.join(', ')} }`;
}

/**
 * CALLS: each named contract by handler, `{ name, args = {...}, reply = {...}, fill, pack }` (two
 * definitions of a handler share one). `fill` and `pack` are the contract's names written out, one
 * statement a name, for reader.read_call and reader.answer: every named call runs them, and a loop
 * over the name lists costs a hot call (a counter's increment) about twice their instructions.
 */
function luaContracts(functions: Record<string, AnyDefinition>): string {
  const byHandler = new Map<string, string>();
  for (const { handler, contract } of Object.values(functions)) {
    if (contract === undefined) continue;
    const created = contract.created ?? [];
    for (const field of [...contract.args, ...contract.reply, ...created]) {
      // fill and pack name each field as `named.<field>`: a keyword there would not compile.
      if (!LUA_NAME.test(field) || LUA_KEYWORDS.has(field))
        throw new Error(`${handler}: contract field "${field}" is no Lua name`);
    }
    const list = (names: readonly string[]) => `{ ${names.map((n) => `'${n}'`).join(', ')} }`;
    const entry = [
      `${handler} = { name = '${handler}', args = ${list(contract.args)}, reply = ${list(contract.reply)},${created.length > 0 ? ` created = ${list(created)},` : ''}${contract.rest ? ' rest = true,' : ''}${contract.rawWindows ? ' raw_windows = true,' : ''}`,
      `    fill = function(named, args, at) ${contract.args.map((n, i) => `named.${n} = args[at + ${i}]`).join('; ')} end,`,
      `    pack = function(reply, named) local v; ${contract.reply.map((n, i) => `v = named.${n}; if v == nil then return '${n}' end; reply[${i + 1}] = v`).join('; ')} end }`,
    ].join('\n');
    if ((byHandler.get(handler) ?? entry) !== entry) throw new Error(`${handler}: declared with two contracts`);
    byHandler.set(handler, entry);
  }
  return `{\n  ${[...byHandler.values()].join(',\n  ')}\n}`;
}

/**
 * The error Redis answered, with each library line it names (`user_function:<line>`, and a compile
 * error's `at line <line>`) followed by the module line it points to.
 */
export function locateError(library: FunctionLibrary, message: string): string {
  return message.replace(/(user_function:|at line )(\d+)/g, (match, _: string, line: string) => {
    const origin = library.locate(Number(line));
    return origin ? `${match} (${origin.module}:${origin.line})` : match;
  });
}
