import { readFileSync } from 'node:fs';
import { basename } from 'node:path';

/**
 * The Lua files of a function library and how they fit together. A file is one of two kinds, told by
 * its first lines (comments, before any other line):
 *
 *   -- module: window                  a shared module: one table of that name,
 *   -- declares: KEYS, ARGV            (rare) main-chunk names it assigns besides its table,
 *   -- requires: call_state, ties      the modules it uses (their tables, or names they declare);
 *
 * or, without `-- module:`, a handler file (its `-- requires:` line alone): the registered functions
 * it defines. Each file's text is a `do` block of its own, so its locals are not the main chunk's
 * (Lua allows 200 locals per function, the main chunk included): a shared module keeps its private
 * functions and state as locals and ends with its exports, `window.expire_window = expire_window`
 * (an option's module: one `hooks.export_all(groups, { 'assign', assign, ... })`), which other files
 * call as `window.expire_window(...)`. A file's block binds its own table and the
 * tables it requires as its locals (function-library.ts blockPrologue), so the main chunk's names do
 * not grow with the modules. The assembler orders the shared modules
 * from their `requires` (dependencies first, ties by name, so the list a library gives is a set),
 * then the handler files by name, and refuses a cycle, a required module the library does not hold,
 * and a use of a module's table (or declared name) the file does not declare, or of a field the
 * module does not export: a renamed or missing function would otherwise fail only when called.
 */
export interface LuaModule {
  path: string;
  /** Its file name, which the assembled source and error locations name. */
  file: string;
  /** Its text, without the trailing newline. */
  text: string;
  /** The module's table (a shared module); undefined for a handler file. */
  table?: string;
  declares: string[];
  requires: string[];
  /** The fields its table gets (`<table>.<field> = `, `function <table>.<field>(` or `hooks.export_all(<table>, { '<field>', … })`). */
  exports: Set<string>;
}

const HEADER = /^-- (module|declares|requires): (.*)$/;

export function readLuaModule(path: string): LuaModule {
  const text = readFileSync(path, 'utf8').replace(/\n$/, '');
  if (text.startsWith('#!')) throw new Error(`${path}: a module has no #! line (the library has one)`);
  const module: LuaModule = { path, file: basename(path), text, declares: [], requires: [], exports: new Set() };
  for (const line of text.split('\n')) {
    const header = HEADER.exec(line);
    if (!header) break;
    const names = header[2].split(',').map((name) => name.trim());
    if (header[1] === 'module') module.table = names[0];
    else module[header[1] as 'declares' | 'requires'].push(...names);
  }
  if (module.table !== undefined) {
    const exported = new RegExp(`^(?:${module.table}\\.(\\w+) =|function ${module.table}\\.(\\w+)\\()`, 'gm');
    for (const match of text.matchAll(exported)) module.exports.add(match[1] ?? match[2]);
    // An option's module lists its fields in one call, names then values (hooks_lib's export_all).
    const listed = new RegExp(`^hooks\\.export_all\\(${module.table}, \\{([^}]*)\\}\\)`, 'gm');
    for (const [, list] of text.matchAll(listed))
      for (const [, name] of list.matchAll(/'(\w+)'/g)) module.exports.add(name);
  }
  return module;
}

/** The library's files in assembly order: shared modules by their dependencies, then handler files by name. */
export function orderModules(library: string, modules: readonly LuaModule[]): LuaModule[] {
  const byTable = new Map<string, LuaModule>();
  for (const module of modules.filter((m) => m.table !== undefined)) {
    if (byTable.has(module.table ?? '')) throw new Error(`${library}: two modules named "${module.table}"`);
    byTable.set(module.table ?? '', module);
  }
  const named = usesPattern(byTable.values());
  for (const module of modules) {
    for (const needed of module.requires) {
      if (!byTable.has(needed)) {
        throw new Error(`${library}: ${module.file} requires "${needed}", which no module of the library is`);
      }
    }
    checkUses(library, module, byTable, named);
  }
  const ordered: LuaModule[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (module: LuaModule, path: string[]) => {
    const table = module.table ?? '';
    if (state.get(table) === 'done') return;
    if (state.get(table) === 'visiting') {
      throw new Error(`${library}: modules require each other: ${[...path, table].join(' -> ')}`);
    }
    state.set(table, 'visiting');
    for (const needed of [...module.requires].sort()) visit(byTable.get(needed) as LuaModule, [...path, table]);
    state.set(table, 'done');
    ordered.push(module);
  };
  for (const table of [...byTable.keys()].sort()) visit(byTable.get(table) as LuaModule, []);
  const handlers = modules.filter((m) => m.table === undefined).sort((a, b) => a.file.localeCompare(b.file));
  return [...ordered, ...handlers];
}

/** Lua code of `text` without its comments, roughly: what the use checks read. */
function codeOf(text: string): string {
  return text.replace(/--.*$/gm, '');
}

/**
 * The uses in `code` of the names `named` matches (another module's table or declared name) that no
 * `.`, `:` or word character precedes nor a word character follows (not a field, a method or part of a
 * longer name), each with the fields read off it (`name.field`): one scan of the file for every module.
 */
function usesOf(code: string, named: RegExp): Map<string, string[]> {
  const uses = new Map<string, string[]>();
  for (const [, name, field] of code.matchAll(named)) {
    const fields = uses.get(name) ?? [];
    if (field !== undefined) fields.push(field);
    uses.set(name, fields);
  }
  return uses;
}

/** What usesOf finds in a file of a library whose modules are `modules`: their tables and declared names. */
function usesPattern(modules: Iterable<LuaModule>): RegExp {
  const names = [...modules].flatMap((module) => [module.table ?? '', ...module.declares]).filter(Boolean);
  return new RegExp(`(?<![.:\\w])(${names.join('|')})(?!\\w)(?:\\.(\\w+))?`, 'g');
}

/** Refuses a use of another module's table or declared names that `module` does not require, or of a field never exported. */
function checkUses(library: string, module: LuaModule, byTable: ReadonlyMap<string, LuaModule>, named: RegExp): void {
  const uses = usesOf(codeOf(module.text), named);
  for (const [table, other] of byTable) {
    if (other === module) continue;
    const fields = uses.get(table) ?? [];
    const declared = other.declares.some((name) => uses.has(name));
    if ((fields.length > 0 || declared) && !module.requires.includes(table)) {
      throw new Error(`${library}: ${module.file} uses module "${table}" without declaring it (-- requires: ${table})`);
    }
    const missing = fields.find((field) => !other.exports.has(field));
    if (missing !== undefined) {
      throw new Error(`${library}: ${module.file} calls ${table}.${missing}, which ${other.file} does not export`);
    }
  }
}
