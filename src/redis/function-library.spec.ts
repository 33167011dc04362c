import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HEADER_WINDOW_FIELDS, headerArgs, recordArgs } from './function-args';
import { ARGS_MODULE, defineLibrary, libraryVersion, locateError, typedFunction } from './function-library';
import { intReply } from './replies';

const dir = mkdtempSync(join(tmpdir(), 'tb-fnlib-'));
const moduleFile = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};
const shared = moduleFile(
  'shared.lua',
  '-- module: shared\nlocal function twice(x)\n  return 2 * x\nend\n\nshared.twice = twice\n',
);
const calls = moduleFile(
  'calls.lua',
  '-- requires: shared\nlocal function double(keys, args)\n  return shared.twice(tonumber(args[1]))\nend\n\nlocal function peek(keys, args)\n  return 1\nend\n',
);
const double = typedFunction({
  numberOfKeys: 0,
  build: (n: number) => ({ keys: [], args: [n] }),
  decode: (raw) => intReply('double', raw),
})({ name: 'double', handler: 'double' });

describe('defineLibrary', () => {
  const spec = {
    name: 'tb_demo',
    modules: [shared, calls],
    records: { request: ['item', 'amount'] },
    functions: {
      double,
      doubleAgain: double, // a second decoder of the same Lua function: registered once
      peek: typedFunction({
        flags: ['no-writes'],
        numberOfKeys: 1,
        build: (key: string) => ({ keys: [key], args: [] }),
        decode: (raw): number => intReply('peek', raw),
      })({ name: 'peek', handler: 'peek' }),
    },
  };
  const { library, functions } = defineLibrary(spec);
  const name = library.name;

  it('names the library and its functions with the version, so two versions load side by side', () => {
    expect(library.name).toMatch(/^tb_demo_[0-9a-f]{8}$/);
    expect(functions.double.redisName).toBe(`${name}_double`);
    expect(functions.peek.readOnly).toBe(true);
    expect(functions.double.readOnly).toBe(false);
    expect(library.modules).toEqual([ARGS_MODULE, shared, calls]);
  });

  it('assembles one #!lua header, the record fields, the modules and one registration per handler', () => {
    const lines = library.source.split('\n');
    expect(lines[0]).toBe(`#!lua name=${name}`);
    expect(library.source.match(/^#!/gm)).toHaveLength(1);
    // The header's window fields, by the names headerArgs writes them in, beside the library's own records.
    expect(library.source).toContain(
      "local RECORD_FIELDS = { header_window = { 'period_sec', 'interval_sec', 'created_ms', 'origin_sec' }, request = { 'item', 'amount' } }",
    );
    expect(Object.keys(HEADER_WINDOW_FIELDS)).toEqual(['period_sec', 'interval_sec', 'created_ms', 'origin_sec']);
    expect(library.source).toContain('local function read_header(args, raw_windows)');
    const registrations = lines.filter((line) => line.startsWith('redis.register_function'));
    expect(registrations).toEqual([
      `redis.register_function{function_name = '${name}_double', callback = double, flags = {  }}`,
      `redis.register_function{function_name = '${name}_peek', callback = peek, flags = { 'no-writes' }}`,
    ]);
  });

  it('maps a line of the library back to its module line', () => {
    const lines = library.source.split('\n');
    const at = lines.indexOf('  return shared.twice(tonumber(args[1]))') + 1;
    expect(library.locate(at)).toEqual({ module: 'calls.lua', line: 3 });
    expect(library.locate(1)).toBeUndefined();
    expect(locateError(library, `ERR user_function:${at}: boom script: double, on @user_function:${at}.`)).toBe(
      `ERR user_function:${at} (calls.lua:3): boom script: double, on @user_function:${at} (calls.lua:3).`,
    );
  });

  it('derives the version from the assembled source: stable, and new with any change of a module or a registration', () => {
    expect(defineLibrary(spec).library.name).toBe(name);
    expect(name).toBe(`tb_demo_${libraryVersion(library.source.replaceAll(name, 'tb_demo'))}`);
    const text = readFileSync(shared, 'utf8');
    const edited = moduleFile('shared_edited.lua', text.replace('2 * x', '3 * x'));
    const oneByte = moduleFile('shared_byte.lua', text.replace('2 * x', '2 * y'));
    const names = [edited, oneByte].map((module) => defineLibrary({ ...spec, modules: [module, calls] }).library.name);
    expect(new Set([name, ...names]).size).toBe(3);
    const oom = { ...double, flags: ['allow-oom' as const] };
    const flagged = { ...spec.functions, double: oom, doubleAgain: oom };
    expect(defineLibrary({ ...spec, functions: flagged }).library.name).not.toBe(name);
    expect(defineLibrary({ ...spec, records: { request: ['item'] } }).library.name).not.toBe(name);
  });

  it('refuses a handler no module defines, a module with its own #! line and a name Lua cannot hold', () => {
    const spec = { name: 'tb_demo', modules: [shared], functions: { double } };
    expect(() => defineLibrary(spec)).toThrow(/no module defines "local function double/);
    const shebang = moduleFile('shebang.lua', '#!lua name=x\nlocal function double() end\n');
    expect(() => defineLibrary({ ...spec, modules: [shebang] })).toThrow(/a module has no #! line/);
    expect(() => defineLibrary({ ...spec, name: 'tb-demo' })).toThrow(/lower snake case/);
    expect(() => defineLibrary({ ...spec, records: { header_window: ['item'] } })).toThrow(
      /header_window is the header's/,
    );
    expect(() =>
      defineLibrary({
        ...spec,
        modules: [shared, calls],
        functions: { a: double, b: { ...double, flags: ['no-writes'] } },
      }),
    ).toThrow(/two flag sets/);
    // A contract's fields are written out as `named.<field>` (fill, pack): a Lua keyword cannot be one.
    const named = (field: string) => ({ ...double, contract: { args: [field], reply: ['doubled'] } });
    expect(() => defineLibrary({ ...spec, modules: [shared, calls], functions: { double: named('end') } })).toThrow(
      /contract field "end" is no Lua name/,
    );
    expect(
      defineLibrary({ ...spec, modules: [shared, calls], functions: { double: named('n') } }).library.source,
    ).toMatch(/fill = function\(named, args, at\) named\.n = args\[at \+ 0\] end/);
  });
});

describe('function arguments', () => {
  it('writes the common header: version, now, budget, W, then four per window', () => {
    expect(
      headerArgs({
        version: 'v',
        nowMs: 5_000,
        budget: 64,
        windows: [
          { periodSec: 3600, intervalSec: 60, createdAtMs: 1, originSec: 0 },
          { periodSec: 86_400, intervalSec: 3600, createdAtMs: 2, originSec: 1_699_999_200 },
        ],
      }),
    ).toEqual(['v', 5_000, 64, 2, 3600, 60, 1, 0, 86_400, 3600, 2, 1_699_999_200]);
  });

  it('writes records as a count, then each row in the order of the field list ("" for absent)', () => {
    const fields = ['item', 'amount', 'key'] as const;
    expect(
      recordArgs(fields, [
        { item: 'a', amount: 1, key: 'k' },
        { amount: 2, item: 'b', key: undefined },
      ]),
    ).toEqual([2, 'a', 1, 'k', 'b', 2, '']);
  });
});

describe('Lua modules', () => {
  const library = (modules: string[]) => defineLibrary({ name: 'tb_order', modules, functions: {} }).library;
  const base = moduleFile('base.lua', '-- module: base\nlocal function one() return 1 end\n\nbase.one = one\n');
  const top = moduleFile(
    'top.lua',
    '-- module: top\n-- requires: base\ntop.two = function() return base.one() + 1 end\n',
  );

  it('orders shared modules from their declared requires, whatever order the library lists them in', () => {
    const [a, b] = [library([top, base]), library([base, top])];
    expect(a.modules).toEqual(b.modules);
    expect(a.modules.indexOf(base)).toBeLessThan(a.modules.indexOf(top));
    expect(a.name).toBe(b.name);
    // Each table is a local of its own block and of the blocks requiring it, never of the main chunk.
    expect(a.source).toContain('do -- base.lua\nlocal base = {}; MODULE_TABLES.base = base\n');
    expect(a.source).toContain(
      'do -- top.lua\nlocal top = {}; MODULE_TABLES.top = top; local base = MODULE_TABLES.base\n',
    );
  });

  it('refuses a cycle, a required module the library lacks, an undeclared use and a field never exported', () => {
    const loopA = moduleFile('loop_a.lua', '-- module: loop_a\n-- requires: loop_b\nloop_a.x = 1\n');
    const loopB = moduleFile('loop_b.lua', '-- module: loop_b\n-- requires: loop_a\nloop_b.x = 1\n');
    expect(() => library([loopA, loopB])).toThrow(/modules require each other: loop_a -> loop_b -> loop_a/);
    expect(() => library([top])).toThrow(/top\.lua requires "base", which no module of the library is/);
    const sneaky = moduleFile('sneaky.lua', '-- module: sneaky\nsneaky.x = function() return base.one() end\n');
    expect(() => library([base, sneaky])).toThrow(/sneaky\.lua uses module "base" without declaring it/);
    const typo = moduleFile(
      'typo.lua',
      '-- module: typo\n-- requires: base\ntypo.x = function() return base.on() end\n',
    );
    expect(() => library([base, typo])).toThrow(/typo\.lua calls base\.on, which base\.lua does not export/);
  });

  it("takes the fields an option's module lists in hooks.export_all as exported, and only those", () => {
    const listed = moduleFile(
      'listed.lua',
      "-- module: listed\n-- requires: hooks\nlocal function one() return 1 end\nhooks.export_all(listed, { 'one', one,\n  'ONE', 1 })\n",
    );
    const hooks = moduleFile('hooks.lua', '-- module: hooks\nhooks.export_all = function() end\n');
    const user = (field: string) =>
      moduleFile(
        `user_${field}.lua`,
        `-- module: user\n-- requires: listed\nuser.x = function() return listed.${field}() end\n`,
      );
    expect(library([hooks, listed, user('one')]).modules).toHaveLength(4);
    expect(library([hooks, listed, user('ONE')]).modules).toHaveLength(4);
    expect(() => library([hooks, listed, user('two')])).toThrow(/calls listed\.two, which listed\.lua does not export/);
  });

  it("refuses a use of a module's declared name it does not require, and takes a field or a longer name for none", () => {
    const keys = moduleFile('keys.lua', '-- module: keys\n-- declares: KEY_COUNT\nKEY_COUNT = 2\nkeys.n = 1\n');
    const peek = moduleFile('peek.lua', '-- module: peek\npeek.x = function() return KEY_COUNT end\n');
    expect(() => library([keys, peek])).toThrow(/peek\.lua uses module "keys" without declaring it/);
    const lookalike = moduleFile(
      'lookalike.lua',
      '-- module: lookalike\n-- a comment naming base.one and KEY_COUNT\nlookalike.x = function(t) return t.base, t:KEY_COUNT(), base_one, KEY_COUNTS, my_base.two end\n',
    );
    expect(library([base, keys, lookalike]).modules).toHaveLength(4);
  });
});
