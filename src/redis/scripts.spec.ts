import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import calculateSlot from 'cluster-key-slot';
import { PreparedBoard } from '../ranking/core/board';
import { RankingKeys } from '../ranking/core/ranking.keys';
import { declaredKeyCount, ScriptDefinition } from './scripts';
import { ARGS_MODULE, FunctionLibrary } from './function-library';

const SRC = join(__dirname, '..');

/** Every `*.scripts.ts` registry of every feature, found on disk: a new feature's scripts are checked without a list to keep. */
function collectScripts(): ScriptDefinition[] {
  const registries = readdirSync(SRC, { recursive: true, encoding: 'utf8' }).filter((file) =>
    file.endsWith('.scripts.ts'),
  );
  return registries.flatMap((file) =>
    Object.values(jest.requireActual<Record<string, unknown>>(join(SRC, file)))
      .filter(
        (exported): exported is Record<string, ScriptDefinition> => typeof exported === 'object' && exported !== null,
      )
      .flatMap((registry) => Object.values(registry).filter((entry) => typeof entry?.file === 'string')),
  );
}

const ALL_SCRIPTS = collectScripts();

/**
 * The Lua modules of every function library exported as `{ library }` by a `*.functions.ts` registry,
 * and the shared argument reader every library starts with.
 */
function collectFunctionModules(): string[] {
  const registries = readdirSync(SRC, { recursive: true, encoding: 'utf8' }).filter((file) =>
    file.endsWith('.functions.ts'),
  );
  const libraries = registries.flatMap((file) =>
    Object.values(jest.requireActual<Record<string, { library?: FunctionLibrary }>>(join(SRC, file)))
      .map((exported) => exported?.library)
      .filter((library): library is FunctionLibrary => Array.isArray(library?.modules)),
  );
  return [ARGS_MODULE, ...libraries.flatMap((library) => library.modules)];
}

const FUNCTION_MODULES = collectFunctionModules();

describe('script registries', () => {
  it('finds every feature registry', () => {
    expect(new Set(ALL_SCRIPTS.map((s) => s.name.replace(/^tb([A-Z][a-z]+).*/, '$1')))).toEqual(
      new Set(['Rank', 'Counter', 'Stats', 'Api', 'Ingest']),
    );
  });

  it('registers every .lua file under src as a script, a script library or a function module, and names each command once', () => {
    const used = new Set([...ALL_SCRIPTS.flatMap((s) => [s.file, ...(s.libraries ?? [])]), ...FUNCTION_MODULES]);
    const onDisk = readdirSync(SRC, { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.lua'));
    expect(onDisk.length).toBeGreaterThan(0);
    for (const file of onDisk) expect(used).toContain(join(SRC, file));
    expect(new Set(ALL_SCRIPTS.map((s) => s.name)).size).toBe(ALL_SCRIPTS.length);
  });
});

describe('Lua script headers', () => {
  it.each(ALL_SCRIPTS.map((s) => [s.name, s] as const))(
    '%s declares the KEYS count it is registered with',
    (_, script) => {
      const source = readFileSync(script.file, 'utf8');
      expect(declaredKeyCount(source)).toBe(script.numberOfKeys);
      const documentedKeys = new Set([...source.matchAll(/^-- KEYS\[(\d+)\]/gm)].map((m) => Number(m[1])));
      if (script.numberOfKeys === 'dynamic') {
        expect(documentedKeys.size).toBeGreaterThan(0);
      } else {
        expect([...documentedKeys].sort((a, b) => a - b)).toEqual(
          Array.from({ length: script.numberOfKeys }, (_, i) => i + 1),
        );
      }
      expect(source).toMatch(/^-- Reply:/m);
      expect(source).toMatch(/^-- ARGV\[1\]|^-- \(no ARGV\)/m);
    },
  );

  const luaFiles = [...ALL_SCRIPTS.flatMap((s) => [s.file, ...(s.libraries ?? [])]), ...FUNCTION_MODULES];
  it.each(luaFiles.map((f) => [f]))('%s never reads the server clock', (file) => {
    expect(readFileSync(file, 'utf8')).not.toMatch(/['"]TIME['"]/);
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
