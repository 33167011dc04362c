/**
 * The Lua core (src/ranking/core/lua) names no board option (issue #46): options plug in through
 * hooks_lib's hooks and call_lib's config_field_add, and the core iterates what they registered. So
 * its code (comments aside) uses no option's module, reads no option's config field by name, and
 * branches on no option's setting (an aggregate's mode); its modules require no option's module.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BOARD_OPTIONS } from '../options/registry';

const CORE = join(__dirname, 'lua');
const OPTIONS = join(__dirname, '..', 'options');

/** Lua source without its comments. */
const codeOf = (source: string) => source.replace(/--.*$/gm, '');

function luaFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? luaFiles(join(dir, entry.name)) : entry.name.endsWith('.lua') ? [join(dir, entry.name)] : [],
  );
}

const optionSources = luaFiles(OPTIONS).map((path) => readFileSync(path, 'utf8'));

/** The modules the options' Lua files declare (`-- module: <name>`). */
const optionModules = optionSources.flatMap((source) => [...source.matchAll(/^-- module: (\w+)$/gm)].map((m) => m[1]));

/** The config fields the options name: their board fields and those their modules add to the call's config. */
const optionFields = [
  ...BOARD_OPTIONS.flatMap((option) => option.fields as readonly string[]),
  ...optionSources.flatMap((source) => [...source.matchAll(/config_field_add\('(\w+)'/g)].map((m) => m[1])),
];

/** Every option's name, as the registry and the Lua hooks spell it. */
const optionNames = BOARD_OPTIONS.map((option) => option.name).flatMap((name) => [name, name.replace(/-/g, '_')]);

/** What the aggregate option's modes are (the core branched on them once). */
const MODES = ['sum', 'max', 'min', 'last'];

const core = readdirSync(CORE)
  .filter((name) => name.endsWith('.lua'))
  .map((name) => [name, readFileSync(join(CORE, name), 'utf8')] as const);

describe('the Lua core names no board option', () => {
  it('finds the options, their modules and their fields', () => {
    expect(core.length).toBeGreaterThan(5);
    expect(optionModules).toEqual(expect.arrayContaining(['aggregate', 'board_views', 'snapshot', 'actor_log']));
    expect(optionFields).toEqual(expect.arrayContaining(['aggregate', 'views', 'snapshots', 'actors', 'blockedUntil']));
  });

  it.each(core)('%s: no option module required or called, no option field, name or mode in its code', (_, source) => {
    const requires = /^-- requires: (.*)$/m.exec(source)?.[1]?.split(/,\s*/) ?? [];
    expect(requires.filter((module) => optionModules.includes(module))).toEqual([]);
    const code = codeOf(source).replace(/^local HOT = \{[^}]*\}/m, ''); // hooks_lib's list of hook names
    const found = [
      ...optionModules.filter((module) => new RegExp(`\\b${module}\\.`).test(code)),
      ...[...new Set([...optionFields, ...optionNames, ...MODES])].filter((word) =>
        new RegExp(`['"]${word}['"]|\\b(CONFIG|config)\\.${word}\\b`).test(code),
      ),
    ];
    expect(found).toEqual([]);
  });
});
