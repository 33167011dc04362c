import { readdirSync, readFileSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import calculateSlot from 'cluster-key-slot';
import { PreparedBoard } from '../ranking/core/board';
import { RankingKeys } from '../ranking/core/ranking.keys';
import { declaredKeyCount, IDEM_LIBRARY } from './scripts';
import { IDEM_FIELDS } from './idempotency';
import { ARGS_MODULE, FunctionLibrary, LibraryFunction } from './function-library';
import { RANKING, RANKING_SLICES } from '../ranking/ranking.functions';

const SRC = join(__dirname, '..');

/** Every library exported as `{ library, functions }` by a `*.functions.ts` registry of any feature. */
function collectLibraries(): Array<{
  library: FunctionLibrary;
  functions: Record<string, LibraryFunction<never, unknown>>;
}> {
  const registries = readdirSync(SRC, { recursive: true, encoding: 'utf8' }).filter((file) =>
    file.endsWith('.functions.ts'),
  );
  return registries.flatMap((file) =>
    Object.values(
      jest.requireActual<
        Record<string, { library?: FunctionLibrary; functions?: Record<string, LibraryFunction<never, unknown>> }>
      >(join(SRC, file)),
    ).flatMap((exported) =>
      Array.isArray(exported?.library?.modules) && exported.functions
        ? [{ library: exported.library, functions: exported.functions }]
        : [],
    ),
  );
}

const LIBRARIES = collectLibraries();

/** The Lua modules of every function library, and the shared argument reader every library starts with. */
function collectFunctionModules(): string[] {
  return [ARGS_MODULE, ...LIBRARIES.flatMap(({ library }) => library.modules)];
}

const FUNCTION_MODULES = collectFunctionModules();

describe('Lua files', () => {
  it('uses every .lua file under src as a module of a function library', () => {
    const used = new Set(FUNCTION_MODULES);
    const onDisk = readdirSync(SRC, { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.lua'));
    expect(onDisk.length).toBeGreaterThan(0);
    for (const file of onDisk) expect(used).toContain(join(SRC, file));
  });

  // The named contract (issue #46): a call's keys and args are its handler's (its `keys`, `args`), and
  // the shared modules take what they need of them as named records (call_lib's CALL, bind_windows'
  // windows), never as offsets into global KEYS / ARGV. No file names those globals any more.
  it.each([...new Set(FUNCTION_MODULES)].map((f) => [f]))('%s reads no KEYS or ARGV', (file) => {
    expect(codeOf(readFileSync(file, 'utf8'))).not.toMatch(/\b(KEYS|ARGV)\b/);
  });

  // The reader (functions/args.lua) is the one place that knows where an argument is: the header, its
  // windows (by the names of RECORD_FIELDS.header_window), a contract's names and records. Every other
  // module, the shared ones of every library (idem_lib) among them, hands the call's args to it and
  // indexes none (`args[#args + 1]`: a command's own list).
  it.each([...new Set(FUNCTION_MODULES)].filter((f) => f !== ARGS_MODULE).map((f) => [f]))(
    '%s reads no call argument by its place',
    (file) => {
      expect(codeOf(readFileSync(file, 'utf8'))).not.toMatch(/\bargs\[(?!#args\b)/);
    },
  );

  // idem_lib reads a write's idempotency arguments by the names the calls send them by (IDEM_FIELDS).
  it('idem_lib reads the idempotency fields by the names of IDEM_FIELDS', () => {
    const code = codeOf(readFileSync(IDEM_LIBRARY, 'utf8'));
    const read = new Set([...code.matchAll(/\bfields\.(\w+)/g)].map((match) => match[1]));
    expect([...read].sort()).toEqual([...IDEM_FIELDS].sort());
  });

  it.each([...new Set(FUNCTION_MODULES)].map((f) => [f]))('%s never reads the server clock', (file) => {
    expect(readFileSync(file, 'utf8')).not.toMatch(/['"]TIME['"]/);
  });
});

/** A function module's header: the KEYS count, each key, the reply and the args documented. */
function expectHeader(source: string, numberOfKeys: number | 'dynamic'): void {
  expect(declaredKeyCount(source)).toBe(numberOfKeys);
  const documentedKeys = new Set([...source.matchAll(/^-- KEYS\[(\d+)\]/gm)].map((m) => Number(m[1])));
  if (numberOfKeys === 'dynamic') {
    expect(documentedKeys.size).toBeGreaterThan(0);
  } else {
    expect([...documentedKeys].sort((a, b) => a - b)).toEqual(Array.from({ length: numberOfKeys }, (_, i) => i + 1));
  }
  expect(source).toMatch(/^-- Reply:/m);
  expect(source).toMatch(/^-- ARGV\[1\]|^-- \(no ARGV\)/m);
}

/**
 * A named function's module (its definition has a contract): its header documents its keys, args and
 * reply by name; the handler binds its call (in a library with call_lib), its keys by name and its
 * args through the reader in its first lines, its own or a shared start's (SHARED_STARTS), and answers
 * through reader.answer; its code reads no KEYS, ARGV or args[n].
 */
function expectNamedHandler(
  source: string,
  handler: string,
  numberOfKeys: number | 'dynamic',
  bindsCall: boolean,
): void {
  expect(source).toMatch(/^-- Keys: /m);
  expect(source).toMatch(/^-- Args \(reader\.read_call/m);
  expect(source).toMatch(/^-- Reply \(reader\.answer/m);
  // A dynamic key count: the fixed keys it starts with (keys[1] at least), the rest read by the modules.
  const keys =
    typeof numberOfKeys === 'number'
      ? Array.from({ length: numberOfKeys }, (_, i) => `keys\\[${i + 1}\\]`).join(', ')
      : 'keys\\[1\\](?:, keys\\[\\d+\\])*';
  const first = [
    `local function ${handler}\\(keys, args\\)`,
    ...(bindsCall ? ['  call_state\\.begin_call\\(keys, args\\)'] : []),
    `  local \\w+(?:, \\w+)* = ${keys}`,
    // `_`: a function that reads nothing of the header (a delete on no clock); no names: nor any argument.
    // A third name: where a contract's records start (`rest`).
    `  (?:local (?:header|_), arg(?:, \\w+)? = )?reader\\.read_call\\(args, CALLS\\.${handler}\\)`,
  ];
  const own = new RegExp(`^${first.join('\n')}$`, 'm');
  // Or the same lines with the bind and the read as one (call_lib's begin_named_call).
  const named = new RegExp(
    `^${first[0]}\n${first[2]}\n  (?:local (?:header|_), arg(?:, \\w+)? = )?call_state\\.begin_named_call\\(keys, args, CALLS\\.${handler}\\)$`,
    'm',
  );
  const opening = !bindsCall || own.test(source) ? own : named.test(source) ? named : sharedStart(handler);
  expect(source).toMatch(opening);
  expect(source).toMatch(new RegExp(`reader\\.answer\\(CALLS\\.${handler},`));
  expect(codeOf(source)).not.toMatch(/\b(KEYS|ARGV)\b|\bargs\[/);
}

/**
 * The shared starts a handler may open with instead of its own first lines (`<module>.<start>(keys,
 * args, CALLS.<handler>)`), by the file defining each: every one binds the call first and reads its args
 * through the reader, as a handler's own first lines do, or hands them first to another of them.
 */
const SHARED_STARTS: Record<string, string> = {
  'call_state.begin_named_call': join(SRC, 'ranking', 'core', 'lua', 'call_lib.lua'),
  'board_write.begin_board_call': join(SRC, 'ranking', 'core', 'lua', 'board_write_lib.lua'),
  'board_write.begin_board_write': join(SRC, 'ranking', 'core', 'lua', 'board_write_lib.lua'),
  'snapshot.begin_read': join(SRC, 'ranking', 'options', 'snapshots', 'snapshot_lib.lua'),
  'shown.begin_history': join(SRC, 'ranking', 'options', 'snapshots', 'snapshot_shown_lib.lua'),
  'moderation.begin_state_write': join(SRC, 'ranking', 'options', 'moderation', 'moderation_lib.lua'),
  'ingest.ingest_begin': join(SRC, 'ingest', 'lua', 'ingest_lib.lua'),
};

const escaped = (text: string) => text.replace(/[.()[\]]/g, '\\$&');

/** A handler opening with a shared start: its keys by name (those it reads), then the start's answer. */
function sharedStart(handler: string): RegExp {
  const keysLine = '(?:  local \\w+(?:, \\w+)* = keys\\[\\d+\\](?:, keys\\[\\d+\\])*\\n)?';
  const starts = Object.keys(SHARED_STARTS).map(escaped).join('|');
  return new RegExp(
    `^local function ${handler}\\(keys, args\\)\\n${keysLine}(?:  --.*\\n)*` +
      `  local (refused|answer), header, arg(?:, \\w+)* = (?:${starts})\\(keys, args, CALLS\\.${handler}\\)\\n` +
      '  if \\1 then return \\1 end$',
    'm',
  );
}

const FUNCTIONS = LIBRARIES.flatMap(({ functions }) => Object.values(functions));

/** Lua source without its comments (headers name ARGV positions). */
function codeOf(source: string): string {
  return source.replace(/--.*$/gm, '');
}

describe('function libraries', () => {
  it('finds every feature library, and each ranking function of a slice under a name of its own', () => {
    expect(LIBRARIES.map(({ library }) => library.name.replace(/_[0-9a-f]{8}$/, '')).sort()).toEqual([
      'tb_access',
      'tb_counters',
      'tb_ingest',
      'tb_ranking',
      'tb_stats',
    ]);
    const declared = RANKING_SLICES.reduce((sum, [, Part]) => sum + Object.keys(Part.definitions).length, 0);
    expect(Object.keys(RANKING.functions)).toHaveLength(declared);
    // Metrics and traces name a call by `name`: one per definition, over every library.
    const names = FUNCTIONS.map((fn) => fn.name);
    expect(new Set(names).size).toBe(names.length);
  });

  it.each(LIBRARIES.map(({ library }) => [library.name, library] as const))(
    '%s: its main chunk declares under 40 names (every module is a block of its own)',
    (_, library) => {
      expect(mainChunkLocals(library.source)).toBeLessThan(MAIN_CHUNK_LOCALS_MAX);
    },
  );

  it("docs/architecture.md states the main chunk's names as each library counts them", () => {
    const doc = readFileSync(join(SRC, '..', 'docs', 'architecture.md'), 'utf8').replace(/\s+/g, ' ');
    const counts = new Set(LIBRARIES.map(({ library }) => mainChunkLocals(library.source)));
    expect(counts.size).toBe(1);
    expect(doc).toContain(`the main chunk (Lua allows 200 locals) holds ${[...counts][0]} names`);
  });

  it.each(FUNCTIONS.map((fn) => [fn.redisName, fn] as const))(
    '%s: its module <handler>.lua declares the keys it is called with, and it binds its call first',
    (_, fn) => {
      const module = fn.library.modules.find((path) => basename(path) === `${fn.handler}.lua`);
      expect(module).toBeDefined();
      const source = readFileSync(module ?? '', 'utf8');
      expect(source).not.toMatch(/^#!/m);
      // The shared modules read the call's state (call_lib): a function that did not bind its own call
      // first would run on the previous call's keys. Without call_lib nothing binds them.
      const bindsCall = fn.library.modules.some((path) => basename(path) === 'call_lib.lua');
      if (fn.contract !== undefined) {
        expectNamedHandler(source, fn.handler, fn.numberOfKeys, bindsCall);
        return;
      }
      expectHeader(source, fn.numberOfKeys);
      if (bindsCall) {
        expect(source).toMatch(
          new RegExp(`^local function ${fn.handler}\\(keys, args\\)\n  call_state\\.begin_call\\(keys, args\\)$`, 'm'),
        );
        return;
      }
      // No call_lib: nothing binds the call, so the function's code reads its own keys and args.
      expect(source).toMatch(new RegExp(`^local function ${fn.handler}\\(keys, args\\)$`, 'm'));
      expect(codeOf(source)).not.toMatch(/\b(KEYS|ARGV)\b/);
    },
  );
});

describe('the shared starts of a named handler', () => {
  it.each(Object.entries(SHARED_STARTS))(
    '%s binds the call first and reads its args through the reader, or first hands them to another start',
    (name, file) => {
      const [table, start] = name.split('.');
      const source = readFileSync(file, 'utf8');
      const head = `^local function ${start}\\(keys, args, contract\\)\\n`;
      const own = new RegExp(
        `${head}  (?:call_state\\.)?begin_call\\(keys, args\\)\\n  local header, arg(?:, \\w+)* = reader\\.read_call\\(args, contract\\)$` +
          `|${head}  local header, arg(?:, \\w+)* = call_state\\.begin_named_call\\(keys, args, contract\\)$`,
        'm',
      );
      const handed = new RegExp(
        `${head}  local refused, header, arg(?:, \\w+)* = ([\\w.]+)\\(keys, args, contract\\)\\n  if refused then return refused end$`,
        'm',
      ).exec(source)?.[1];
      if (handed === undefined) {
        expect(source).toMatch(own);
        return;
      }
      const other = handed.includes('.') ? handed : `${table}.${handed}`;
      expect(Object.keys(SHARED_STARTS).filter((known) => known !== name)).toContain(other);
    },
  );

  it('is the first thing a handler opening with one does', () => {
    const start = sharedStart('h');
    const opened =
      'local function h(keys, args)\n  local cfg_key = keys[1]\n  local refused, header, arg = board_write.begin_board_call(keys, args, CALLS.h)\n  if refused then return refused end\n';
    expect(opened).toMatch(start);
    expect(opened.replace('keys[1]\n', "keys[1]\n  redis.call('DEL', cfg_key)\n")).not.toMatch(start);
    expect(opened.replace('CALLS.h', 'CALLS.other')).not.toMatch(start);
    expect(opened.replace('board_write.begin_board_call', 'board_write.settled_tops')).not.toMatch(start);
  });
});

describe('ranking keys share one Cluster slot per call', () => {
  const names = ['posts', 'a', 'x.y:z-1_2', 'Z'.repeat(64)];
  it.each(names)('board %s', (name) => {
    const keys = new RankingKeys('tb:').board(name);
    const board = new PreparedBoard(
      {
        name,
        version: 'v',
        views: [],
        shards: 1,
        maxItems: null,
        windows: [
          { name: '1h', periodSec: 3600, intervalSec: 60, createdAtMs: 0 },
          { name: '7d', periodSec: 604800, intervalSec: 86400, createdAtMs: 0 },
        ],
      },
      (shard) => new RankingKeys('tb:').board(name, shard),
    );
    const all = [
      ...board.allKeys,
      ...board.incrementKeys,
      keys.slot('1h', 1_700_000_000),
      keys.slot('7d', 0),
      keys.cfg(),
      keys.likes(),
    ];
    expect(new Set(all.map((key) => calculateSlot(key))).size).toBe(1);
  });

  it.each(names)('sharded board %s: each shard on one slot of its own tag', (name) => {
    const builder = new RankingKeys('tb:');
    const board = new PreparedBoard(
      {
        name,
        version: 'v',
        views: [],
        shards: 8,
        maxItems: null,
        windows: [{ name: '1h', periodSec: 3600, intervalSec: 60, createdAtMs: 0 }],
      },
      (shard) => builder.board(name, shard),
    );
    expect(board.shards).toHaveLength(8);
    for (const shard of board.shards) {
      const all = [...shard.allKeys, ...shard.incrementKeys, shard.keys.slot('1h', 60)];
      expect(new Set(all.map((key) => calculateSlot(key))).size).toBe(1);
    }
    expect(new Set(board.shards.map((shard) => shard.keys.tag)).size).toBe(8);
    expect(board.shards[0].keys.tag).toBe(builder.board(name).tag);
  });

  it('puts different boards under different tags', () => {
    const builder = new RankingKeys('tb:');
    expect(builder.board('a').cfg()).toBe('{tb:board:a}:cfg');
    expect(builder.board('a').slot('24h', 3600)).toBe('{tb:board:a}:24h:slot:3600');
    expect(builder.board('b').tag).not.toBe(builder.board('a').tag);
    expect(builder.board('a', 3).cfg()).toBe('{tb:board:a/3}:cfg');
  });
});

/**
 * Lua compiles a chunk with at most 200 locals; the main chunk holds the contracts, the table of module
 * tables and the names a module declares, each module's tables and own locals living in its block
 * (src/redis/lua-modules.ts).
 */
const MAIN_CHUNK_LOCALS_MAX = 40;

/** The names the library's main chunk declares: top-level `local` lines outside the handlers' do-blocks. */
function mainChunkLocals(source: string): number {
  let inBlock = false;
  let count = 0;
  for (const line of source.split('\n')) {
    if (line.startsWith('do -- ')) inBlock = true;
    else if (line.startsWith('end -- ')) inBlock = false;
    else if (!inBlock && line.startsWith('local ')) {
      const declared = line.startsWith('local function ') ? 'x' : line.slice(6).split('=')[0];
      count += declared.split(',').length;
    }
  }
  return count;
}

/** What a Lua file may call without declaring it: Lua's and Redis' own functions. */
const LUA_GLOBALS = new Set(
  'redis cjson math string table tonumber tostring ipairs pairs unpack type error pcall next select bit struct cmsgpack assert setmetatable getmetatable rawget rawset'.split(
    ' ',
  ),
);

const LUA_KEYWORDS = new Set(['function', 'if', 'and', 'or', 'not', 'return', 'in', 'elseif', 'until', 'while']);

/** Where each name is first declared in `code`: `local` names, functions' parameters and loop variables. */
function firstDeclarations(code: string): Map<string, number> {
  const first = new Map<string, number>();
  const declare = (names: string, at: number) => {
    for (const name of names.split(',').map((n) => n.trim())) first.set(name, Math.min(first.get(name) ?? at, at));
  };
  for (const match of code.matchAll(/\blocal\s+function\s+(\w+)/g)) declare(match[1], match.index);
  for (const match of code.matchAll(/\blocal\s+(?!function)([\w\s,]+?)\s*(?:=|\n)/g)) declare(match[1], match.index);
  for (const match of code.matchAll(/\bfunction\s*[\w.:]*\s*\(([^)]*)\)/g)) declare(match[1], match.index);
  for (const match of code.matchAll(/\bfor\s+([\w\s,]+?)\s+(?:in|=)/g)) declare(match[1], match.index);
  return first;
}

describe('Lua names', () => {
  // A call of a name not declared before it reads a global, which Redis refuses only when the call runs.
  it.each([...new Set(FUNCTION_MODULES)].map((f) => [relative(SRC, f), f]))(
    '%s calls only names it declared before, a module table or Lua and Redis functions',
    (_, file) => {
      const code = readFileSync(file, 'utf8')
        .split('\n')
        .map((line) => line.replace(/'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"/g, "''").replace(/--.*$/, ''))
        .join('\n');
      const declared = firstDeclarations(code);
      const undeclared = [...code.matchAll(/(?<![.:\w])([A-Za-z_]\w*)\s*\(/g)]
        .filter(([, name]) => !LUA_GLOBALS.has(name) && !LUA_KEYWORDS.has(name))
        .filter((match) => (declared.get(match[1]) ?? Infinity) > match.index)
        .map((match) => `${match[1]} (line ${code.slice(0, match.index).split('\n').length})`);
      expect(undeclared).toEqual([]);
    },
  );
});
