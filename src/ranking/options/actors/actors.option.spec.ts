import { InvalidInputError } from '../../../common/errors';
import { checkOptions, OPTION_LUA_MODULES, optionsFromReply, optionsFromStored, optionsView } from '../registry';
import { actorsKept, actorsOption } from './actors.option';
import type { BoardSettings } from '../board-option';
import { sumBoardSettings } from '../../../../test/support/board-settings';

const board = (actors: boolean | undefined, more: Partial<BoardSettings> = {}) => sumBoardSettings({ actors }, more);

describe('the actors option', () => {
  it("reads a PUT's actors: true, false, or an object with a cap (omitted: the stored setting)", () => {
    expect([actorsKept(true), actorsKept(false), actorsKept({ capPerItem: 3 }), actorsKept(undefined)]).toEqual([
      true,
      false,
      true,
      undefined,
    ]);
  });

  it('keeps the setting in the config hash and board_put answer, absent when off', () => {
    expect(optionsFromStored({ actors: '1' })).toMatchObject({ actors: true });
    expect(optionsFromStored({})).not.toHaveProperty('actors');
    expect(optionsFromReply('fn', '{"ties":"shared","actors":true}')).toMatchObject({ actors: true });
    expect(optionsFromReply('fn', '{"ties":"shared","actors":false}')).not.toHaveProperty('actors');
    expect(() => actorsOption.fromReply({ actors: 1 })).toThrow(/actors/);
    expect(optionsView({ actors: true })).toMatchObject({ actors: true });
    expect(optionsView({ actors: false })).not.toHaveProperty('actors');
  });

  it('refuses actors off a sum board or beside an all-time window, and a unique view without them', () => {
    const unique = [{ name: 'u', mode: 'unique' }];
    expect(() => checkOptions(board(true))).not.toThrow();
    expect(() => checkOptions(board(true, { views: unique }))).not.toThrow();
    expect(() => checkOptions(board(false, { aggregate: 'max', allTimeWindow: 'all' }))).not.toThrow();
    expect(() => checkOptions(board(true, { aggregate: 'last' }))).toThrow(/actors: kept for sum boards only/);
    expect(() => checkOptions(board(true, { allTimeWindow: 'all' }))).toThrow(/actors' contributions would then grow/);
    expect(() => checkOptions(board(undefined, { views: unique }))).toThrow(InvalidInputError);
    expect(() => checkOptions(board(false, { views: unique }))).toThrow(/unique view "u" counts distinct actors/);
  });

  it('loads its Lua module into the board libraries', () => {
    expect(OPTION_LUA_MODULES).toEqual(expect.arrayContaining([...actorsOption.luaModules]));
  });
});
