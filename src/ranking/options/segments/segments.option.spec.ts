import { InvalidInputError } from '../../../common/errors';
import { checkOptions, OPTION_LUA_MODULES, optionsFromReply, optionsView } from '../registry';
import { segmentsOf, segmentsOption } from './segments.option';
import type { BoardSettings } from '../board-option';
import { expectWholeNumberKept, sumBoardSettings } from '../../../../test/support/board-settings';

const board = (segmentsMax: number | undefined, more: Partial<BoardSettings> = {}) =>
  sumBoardSettings({ segmentsMax }, more);

describe('the segments option', () => {
  it("reads a PUT's segments (omitted: the stored setting stays)", () => {
    expect(segmentsOf({ max: 5 })).toEqual({ segmentsMax: 5 });
    expect(segmentsOf(undefined)).toEqual({ segmentsMax: undefined });
  });

  it('keeps segments.max in the config hash and board_put answer, and shows it as the PUT names it', () => {
    expectWholeNumberKept(segmentsOption, 'segmentsMax');
    expect(optionsFromReply('fn', '{"ties":"shared"}')).not.toHaveProperty('segmentsMax');
    expect(optionsView({ segmentsMax: 7 })).toMatchObject({ segments: { max: 7 } });
    expect(optionsView({})).not.toHaveProperty('segments');
    expect(optionsView({ segmentsMax: 7 })).not.toHaveProperty('segmentsMax');
  });

  it('refuses segments on a board not summing events or keeping an all-time window', () => {
    expect(() => checkOptions(board(5))).not.toThrow();
    expect(() => checkOptions(board(undefined, { aggregate: 'max', allTimeWindow: 'all' }))).not.toThrow();
    expect(() => checkOptions(board(5, { aggregate: 'max' }))).toThrow(/segments are kept for sum boards only/);
    expect(() => checkOptions(board(5, { allTimeWindow: 'all' }))).toThrow(InvalidInputError);
    expect(() => checkOptions(board(5, { allTimeWindow: 'all' }))).toThrow(/its segments would then grow/);
  });

  it('loads its Lua modules into the board libraries', () => {
    expect(OPTION_LUA_MODULES).toEqual(expect.arrayContaining([...segmentsOption.luaModules]));
    expect(segmentsOption.luaModules).toHaveLength(4);
  });
});
