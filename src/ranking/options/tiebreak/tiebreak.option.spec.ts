import { fieldErrorsOf } from '../../../../test/support/dto-errors';
import { InvalidInputError } from '../../../common/errors';
import { mergeListings, rankRows } from '../../core/shard-math';
import { checkOptions, OPTION_LUA_MODULES, optionsFromReply, optionsFromStored, optionsView } from '../registry';
import { TIEBREAK_BOUND } from './tiebreak.limits';
import { tiebreakMark, tiebreakMarkOrder, tiebreakOfMark, tiebreakOption, TiebreakProperty } from './tiebreak.option';

/** The option's PUT field alone, as the board DTO declares it. */
const errorsOf = fieldErrorsOf('tiebreak', TiebreakProperty());

describe('the tiebreak option', () => {
  it('takes { order: desc | asc } or nothing; refuses null, other orders and other fields', () => {
    expect(errorsOf({})).toEqual([]);
    expect(errorsOf({ tiebreak: { order: 'asc' } })).toEqual([]);
    expect(errorsOf({ tiebreak: { order: 'desc' } })).toEqual([]);
    expect(errorsOf({ tiebreak: { order: 'up' } })).toEqual([expect.stringMatching(/tiebreak must be an object/)]);
    expect(errorsOf({ tiebreak: { order: 'asc', extra: 1 } })).not.toEqual([]);
    expect(errorsOf({ tiebreak: 'asc' })).not.toEqual([]);
    expect(errorsOf({ tiebreak: null })).not.toEqual([]);
  });

  it('is stored, answered and shown when set', () => {
    expect(optionsFromStored({ tiebreak: 'asc' })).toMatchObject({ tiebreak: { order: 'asc' } });
    expect(optionsFromStored({})).not.toHaveProperty('tiebreak');
    expect(optionsFromReply('tbRankBoardPut', '{"ties":"shared","tiebreak":{"order":"desc"}}')).toMatchObject({
      tiebreak: { order: 'desc' },
    });
    expect(optionsFromReply('tbRankBoardPut', '{"ties":"shared"}')).not.toHaveProperty('tiebreak');
    expect(() => optionsFromReply('tbRankBoardPut', '{"ties":"shared","tiebreak":{"order":"up"}}')).toThrow(/"up"/);
    expect(optionsView({ ties: 'shared', tiebreak: { order: 'asc' } })).toEqual({ tiebreak: { order: 'asc' } });
    expect(OPTION_LUA_MODULES).toEqual(expect.arrayContaining([...tiebreakOption.luaModules]));
  });

  it('refuses a sum board with INVALID_INPUT; takes order asc and ties first', () => {
    const check = (aggregate: string, options: Record<string, unknown>) => () =>
      checkOptions({ name: 'b', aggregate, options });
    const tiebreak = { order: 'desc' };
    expect(check('sum', { tiebreak })).toThrow(InvalidInputError);
    expect(check('min', { tiebreak, order: 'asc' })).not.toThrow();
    // Most points, then fastest time, then whoever got there first.
    expect(check('max', { tiebreak, ties: 'first' })).not.toThrow();
    expect(check('min', { tiebreak, ties: 'first', order: 'asc' })).not.toThrow();
    for (const aggregate of ['max', 'min', 'last']) expect(check(aggregate, { tiebreak })).not.toThrow();
  });

  it('marks are fixed-width, greater for the better tiebreak, and give the tiebreak back exactly', () => {
    for (const order of ['desc', 'asc'] as const) {
      const values = [-TIEBREAK_BOUND, -1, 0, 1, 999_999_999_999_999, TIEBREAK_BOUND];
      const marks = values.map((value) => tiebreakMark(order, value));
      expect(new Set(marks.map((mark) => mark.length))).toEqual(new Set([16]));
      values.forEach((value, i) => expect(tiebreakOfMark(order, marks[i])).toBe(value));
      const sorted = [...marks].sort();
      expect(sorted).toEqual(order === 'desc' ? marks : [...marks].reverse());
    }
    expect(tiebreakOfMark('desc', '')).toBeUndefined();
    // A ties: first row's mark: the tiebreak's digits, then its tie mark and id.
    expect(tiebreakOfMark('asc', `${tiebreakMark('asc', -7)}999999999999998item`)).toBe(-7);
  });

  it('merges shards by (score, mark) and ranks equal pairs alike, equal scores apart', () => {
    const mark = (value: number) => tiebreakMark('desc', value);
    const merged = mergeListings([
      [
        { item: 'a', score: 5, tie: mark(1) },
        { item: 'c', score: 5, tie: mark(0) },
      ],
      [
        { item: 'b', score: 5, tie: mark(1) },
        { item: 'd', score: 4, tie: mark(9) },
      ],
    ]);
    expect(merged.map((row) => row.item)).toEqual(['b', 'a', 'c', 'd']);
    expect(rankRows(merged, 0, 0).map((row) => row.rank)).toEqual([1, 1, 3, 4]);
  });

  it('on an order asc board keeps marks the other way, so the ascending merge lists the better tiebreak first', () => {
    expect(tiebreakMarkOrder({ tiebreak: { order: 'asc' } })).toBe('asc');
    expect(tiebreakMarkOrder({ tiebreak: { order: 'asc' }, order: 'asc' })).toBe('desc');
    expect(tiebreakMarkOrder({ tiebreak: { order: 'desc' }, order: 'asc' })).toBe('asc');
    expect(tiebreakMarkOrder({ order: 'asc' })).toBeUndefined();
    // Lowest time, then the earliest date (tiebreak asc).
    const mark = (value: number) =>
      tiebreakMark(tiebreakMarkOrder({ tiebreak: { order: 'asc' }, order: 'asc' })!, value);
    const merged = mergeListings(
      [
        [
          { item: 'b', score: 5, tie: mark(2) },
          { item: 'd', score: 6, tie: mark(0) },
        ],
        [
          { item: 'a', score: 5, tie: mark(2) },
          { item: 'c', score: 5, tie: mark(3) },
        ],
      ],
      true,
    );
    expect(merged.map((row) => row.item)).toEqual(['a', 'b', 'c', 'd']);
    expect(rankRows(merged, 0, 0).map((row) => row.rank)).toEqual([1, 1, 3, 4]);
  });
});
