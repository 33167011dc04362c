import { InvalidInputError } from '../../../common/errors';
import { leaguesOption, leaguesProblem } from './leagues.option';
import type { BoardSettings } from '../board-option';
import { sumBoardSettings } from '../../../../test/support/board-settings';

const SETTING = { window: 'week', size: 30, tiers: ['bronze', 'silver', 'gold'], promote: 3, relegate: 3 };
const board = (over: Partial<BoardSettings> = {}) =>
  sumBoardSettings(
    { leagues: SETTING },
    { shards: 1, calendarWindows: ['week'], holds: { views: false, segments: false, actors: false }, ...over },
  );

describe('the leagues option', () => {
  it('takes a setting at its bounds and names what is wrong with another', () => {
    expect(leaguesProblem(SETTING)).toBe('');
    expect(leaguesProblem({ ...SETTING, size: 1000, promote: 1000, relegate: 0 })).toBe('');
    expect(leaguesProblem({ ...SETTING, size: 1 })).toMatch(/size/);
    expect(leaguesProblem({ ...SETTING, size: 1001 })).toMatch(/size/);
    expect(leaguesProblem({ ...SETTING, promote: 31 })).toMatch(/promote/);
    expect(leaguesProblem({ ...SETTING, tiers: [] })).toMatch(/tiers/);
    expect(leaguesProblem({ ...SETTING, tiers: Array.from({ length: 21 }, (_, i) => `t${i}`) })).toMatch(/tiers/);
    expect(leaguesProblem({ ...SETTING, tiers: ['a', 'a'] })).toMatch(/differ/);
    expect(leaguesProblem({ ...SETTING, extra: 1 })).toMatch(/extra/);
  });

  it('refuses (400) a board it does not go with, naming why', () => {
    expect(() => leaguesOption.check!(board())).not.toThrow();
    expect(() => leaguesOption.check!(board({ shards: 64 }))).not.toThrow();
    const refusal = (over: object) => {
      try {
        leaguesOption.check!(board(over));
      } catch (error) {
        expect(error).toBeInstanceOf(InvalidInputError);
        return (error as Error).message;
      }
      return '';
    };
    expect(refusal({ holds: { views: false, segments: true, actors: false } })).toMatch(/segments/);
    expect(refusal({ aggregate: 'max' })).toMatch(/sum/);
    expect(refusal({ calendarWindows: [] })).toMatch(/calendar window/);
  });

  it('reads back what it stores', () => {
    expect(leaguesOption.fromStored({ leagues: JSON.stringify(SETTING) })).toEqual({ leagues: SETTING });
    expect(leaguesOption.fromReply({ leagues: SETTING })).toEqual({ leagues: SETTING });
    expect(leaguesOption.fromStored({})).toEqual({});
  });
});
