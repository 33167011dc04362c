/**
 * Each board option in a folder of its own (issue #46): the registry's line for it is the one export of
 * `src/ranking/options/<folder>/<folder>.option.ts`, every Lua module it loads lives in that folder, and
 * every folder under src/ranking/options/ is one registered option (a board option, a window option of
 * the window registry, or one of each), so no option lives half elsewhere.
 */
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { BoardOption } from './board-option';
import { BOARD_OPTIONS, optionsOfPut } from './registry';
import type { WindowOption } from './window-option';
import { WINDOW_OPTIONS } from './window-registry';

const OPTIONS = __dirname;

const folders = readdirSync(OPTIONS, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name)
  .sort();

/** The registered board options `<folder>/<folder>.option.ts` exports. */
function optionsOfFolder(folder: string): Array<BoardOption<object>> {
  return BOARD_OPTIONS.filter((option) => exportsOf(folder).includes(option));
}

/** The registered window options `<folder>/<folder>.option.ts` exports. */
function windowOptionsOfFolder(folder: string): Array<WindowOption<object>> {
  return WINDOW_OPTIONS.filter((option) => exportsOf(folder).includes(option));
}

function exportsOf(folder: string): unknown[] {
  const file = join(OPTIONS, folder, `${folder}.option.ts`);
  return existsSync(file) ? Object.values(jest.requireActual<Record<string, unknown>>(file)) : [];
}

describe('the board options, each in a folder of its own (issue #46)', () => {
  it('registers the options of the issue and the next wave', () => {
    const names = BOARD_OPTIONS.map((option) => option.name);
    const existing = ['ties', 'segments', 'actors', 'aggregate', 'calendar', 'item-data', 'views', 'snapshots'];
    const nextWave = ['order', 'tiebreak', 'leagues', 'groups', 'moderation', 'metrics'];
    expect(names).toEqual(expect.arrayContaining([...existing, ...nextWave]));
    expect(new Set(names).size).toBe(names.length);
  });

  it.each(folders)('%s/ holds one registered option, exported by its <folder>.option.ts', (folder) => {
    const held = { board: optionsOfFolder(folder).length, window: windowOptionsOfFolder(folder).length };
    expect([held.board, held.window]).toContainEqual(1);
    expect(Math.max(held.board, held.window)).toBe(1);
  });

  it('finds every registered window option in one folder', () => {
    expect(folders.flatMap(windowOptionsOfFolder)).toHaveLength(WINDOW_OPTIONS.length);
  });

  it('finds every registered option in one folder, with every Lua module it loads there', () => {
    const placed = folders.flatMap((folder) => optionsOfFolder(folder).map((option) => [option, folder] as const));
    expect(placed).toHaveLength(BOARD_OPTIONS.length);
    const strays = placed.flatMap(([option, folder]) =>
      option.luaModules
        .filter((module) => dirname(module) !== join(OPTIONS, folder))
        .map((module) => `${option.name}: ${module}`),
    );
    expect(strays).toEqual([]);
  });

  it("reads each option's setting from a board PUT body, nested ones by the option itself", () => {
    const body = { ties: 'first', aggregate: 'sum', actors: { capPerItem: 3 }, segments: { max: 5 } } as const;
    expect(optionsOfPut(body)).toMatchObject({ ties: 'first', aggregate: 'sum', actors: true, capPerItem: 3 });
    expect(optionsOfPut(body)).toMatchObject({ segmentsMax: 5 });
    expect(optionsOfPut({ actors: false })).toMatchObject({ actors: false, capPerItem: 0 });
    const omitted = optionsOfPut({});
    expect(Object.values(omitted).filter((value) => value !== undefined)).toEqual([]);
    expect(omitted).not.toHaveProperty('segments');
  });
});
