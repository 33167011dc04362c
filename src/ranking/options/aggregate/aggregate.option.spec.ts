import { fieldErrorsOf } from '../../../../test/support/dto-errors';
import { InvalidInputError } from '../../../common/errors';
import { entryCost } from '../../core/write-cost';
import { OPTION_LUA_MODULES, optionsView, optionsWriteCostPerPlace } from '../registry';
import { type Aggregate, aggregateOf } from './aggregate';
import { AggregateProperty, checkAggregate } from './aggregate.option';
import { MAX_AGGREGATE_SLOTS } from './aggregate.limits';

/** The option's PUT field alone, as the board DTO declares it. */
const errorsOf = fieldErrorsOf('aggregate', AggregateProperty());

const hour = { name: '1h', periodSec: 3600, intervalSec: 60 };
const refusal = (board: Partial<Parameters<typeof checkAggregate>[0]>) => {
  try {
    checkAggregate({ name: 'b', aggregate: 'max', hasViews: false, windows: [hour], ...board });
  } catch (error) {
    return error instanceof InvalidInputError ? error.message : `not refused as input: ${String(error)}`;
  }
  return undefined;
};

describe('the aggregate option', () => {
  it('takes sum, max, min or last, or nothing; refuses null and other values', () => {
    expect(errorsOf({})).toEqual([]);
    for (const aggregate of ['sum', 'max', 'min', 'last']) expect(errorsOf({ aggregate })).toEqual([]);
    expect(errorsOf({ aggregate: 'avg' })).toEqual(['aggregate must be one of sum, max, min, last']);
    expect(errorsOf({ aggregate: null })).not.toEqual([]);
  });

  it('reads a stored aggregate: absent is sum, an unknown one fails', () => {
    expect(aggregateOf(undefined)).toBe('sum');
    expect(aggregateOf('last')).toBe('last');
    expect(() => aggregateOf('avg')).toThrow(/"avg"/);
  });

  it('refuses views and rolling windows of more than MAX_AGGREGATE_SLOTS slots beside max, min or last', () => {
    const wide = { name: 'wide', periodSec: (MAX_AGGREGATE_SLOTS + 1) * 60, intervalSec: 60 };
    expect(refusal({})).toBeUndefined();
    expect(refusal({ aggregate: 'sum', hasViews: true, windows: [wide] })).toBeUndefined();
    expect(refusal({ hasViews: true })).toMatch(/^views .* weigh sums/);
    expect(refusal({ windows: [hour, wide] })).toMatch(/^windows\.wide: .* at most 1000 slots/);
    expect(refusal({ windows: [{ ...wide, calendar: {} }] })).toBeUndefined();
  });

  it('weighs a score on max / min (2.5 a place) and last (3.5), a sum place 1', () => {
    expect(optionsWriteCostPerPlace({ ties: 'shared' })).toBe(0);
    expect(optionsWriteCostPerPlace({ ties: 'shared', aggregate: 'sum' })).toBe(0);
    const place = (aggregate: Aggregate) => entryCost({}, { windows: [0], views: [], ties: 'shared', aggregate });
    expect([place('sum'), place('max'), place('min'), place('last')]).toEqual([1, 2.5, 2.5, 3.5]);
  });

  it('is shown by the board itself, not as an option field; its module is loaded on boards', () => {
    expect(optionsView({ ties: 'shared', aggregate: 'max' })).not.toHaveProperty('aggregate');
    expect(OPTION_LUA_MODULES.some((path) => path.endsWith('options/aggregate/aggregate_lib.lua'))).toBe(true);
  });
});
