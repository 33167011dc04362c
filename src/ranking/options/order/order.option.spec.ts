import { fieldErrorsOf } from '../../../../test/support/dto-errors';
import { InvalidInputError } from '../../../common/errors';
import { mergeListings } from '../../core/shard-math';
import * as registry from '../registry';
import { orderOption, OrderProperty } from './order.option';

/** The option's PUT field alone, as the board DTO declares it. */
const errorsOf = fieldErrorsOf('order', OrderProperty());

describe('the order option', () => {
  it('takes desc or asc, or nothing; refuses null and other values', () => {
    expect(errorsOf({})).toEqual([]);
    expect(errorsOf({ order: 'asc' })).toEqual([]);
    expect(errorsOf({ order: 'desc' })).toEqual([]);
    expect(errorsOf({ order: 'up' })).toEqual(['order must be one of desc, asc']);
    expect(errorsOf({ order: null })).not.toEqual([]);
  });

  it('is stored, answered and shown only when asc', () => {
    expect(registry.optionsFromStored({ order: 'asc' })).toMatchObject({ order: 'asc' });
    expect(registry.optionsFromStored({})).not.toHaveProperty('order');
    expect(registry.optionsFromReply('tbRankBoardPut', '{"ties":"shared","order":"asc"}')).toMatchObject({
      order: 'asc',
    });
    expect(registry.optionsFromReply('tbRankBoardPut', '{"ties":"shared","order":"desc"}')).not.toHaveProperty('order');
    expect(() => registry.optionsFromReply('tbRankBoardPut', '{"ties":"shared","order":"up"}')).toThrow(/"up"/);
    expect(registry.optionsView({ ties: 'shared', order: 'asc' })).toEqual({ order: 'asc' });
    expect(registry.optionsView({ ties: 'shared', order: 'desc' })).toEqual({});
    expect(registry.ascendingScores({ ties: 'shared', order: 'asc' })).toBe(true);
    expect(registry.ascendingScores({ ties: 'shared' })).toBe(false);
    expect(registry.COSTLIEST_OPTIONS).not.toHaveProperty('order');
    expect(registry.OPTION_LUA_MODULES).toEqual(expect.arrayContaining([...orderOption.luaModules]));
  });

  it('refuses asc on a sum board and with ties first, with INVALID_INPUT', () => {
    const check = (aggregate: string, options: Record<string, unknown>) => () =>
      registry.checkOptions({ name: 'b', aggregate, options });
    expect(check('sum', { order: 'asc' })).toThrow(InvalidInputError);
    expect(check('sum', { order: 'asc' })).toThrow(/aggregates by sum/);
    expect(check('max', { order: 'asc', ties: 'first' })).toThrow(/ties first/);
    // With a tiebreak the pair order keeps the strict one, in either board order.
    expect(check('min', { order: 'asc', ties: 'first', tiebreak: { order: 'asc' } })).not.toThrow();
    for (const aggregate of ['max', 'min', 'last']) expect(check(aggregate, { order: 'asc' })).not.toThrow();
    expect(check('sum', { order: 'desc', ties: 'first' })).not.toThrow();
  });

  it("merges shards' pages lowest first, equal scores in ascending byte order of id (the reverse of desc)", () => {
    const shardA = [
      { item: 'a', score: -1 },
      { item: 'c', score: 4 },
    ];
    const shardB = [
      { item: 'b', score: 0 },
      { item: 'd', score: 4 },
    ];
    const ascending = mergeListings([shardA, shardB], true).map((row) => row.item);
    expect(ascending).toEqual(['a', 'b', 'c', 'd']);
    expect(mergeListings([shardA.reverse(), shardB.reverse()]).map((row) => row.item)).toEqual(
      [...ascending].reverse(),
    );
  });
});
