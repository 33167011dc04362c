import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fieldErrorsOf } from '../../../../test/support/dto-errors';
import { InvalidInputError } from '../../../common/errors';
import { entryCost } from '../../core/write-cost';
import type { BoardSettings } from '../board-option';
import { keptScore, OPTION_LUA_MODULES, optionsView, optionsWriteCostPerPlace, writeMismatch } from '../registry';
import { type Aggregate, aggregateOf } from './aggregate';
import { AggregateProperty, checkAggregate } from './aggregate.option';
import { MAX_AGGREGATE_SLOTS } from './aggregate.limits';

/** The option's PUT field alone, as the board DTO declares it. */
const errorsOf = fieldErrorsOf('aggregate', AggregateProperty());

const hour = { name: '1h', periodSec: 3600, intervalSec: 60 };
const refusal = (board: Partial<BoardSettings>, hasViews = false) => {
  try {
    const holds = { views: hasViews, segments: false, actors: false };
    checkAggregate({ name: 'b', aggregate: 'max', options: {}, holds, windows: [hour], ...board });
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
    expect(refusal({ aggregate: 'sum', windows: [wide] }, true)).toBeUndefined();
    expect(refusal({}, true)).toMatch(/^views .* weigh sums/);
    expect(refusal({ windows: [hour, wide] })).toMatch(/^windows\.wide: .* at most 1000 slots/);
    expect(refusal({ windows: [{ ...wide, calendar: {} }] })).toBeUndefined();
  });

  it('weighs a score on max / min (8 a place) and last (11), a sum place 1', () => {
    expect(optionsWriteCostPerPlace({ ties: 'shared' })).toBe(0);
    expect(optionsWriteCostPerPlace({ ties: 'shared', aggregate: 'sum' })).toBe(0);
    const place = (aggregate: Aggregate) => entryCost({}, { windows: [0], views: [], ties: 'shared', aggregate });
    expect([place('sum'), place('max'), place('min'), place('last')]).toEqual([1, 8, 8, 11]);
  });

  it("is shown in the board's view unless sum; its module is loaded on boards", () => {
    expect(optionsView({ ties: 'shared', aggregate: 'max' })).toMatchObject({ aggregate: 'max' });
    expect(optionsView({ ties: 'shared', aggregate: 'sum' })).not.toHaveProperty('aggregate');
    expect(optionsView({ ties: 'shared' })).not.toHaveProperty('aggregate');
    expect(OPTION_LUA_MODULES.some((path) => path.endsWith('options/aggregate/aggregate_lib.lua'))).toBe(true);
  });

  it('tells the slices what a board keeps instead of sums, and which writes it takes', () => {
    expect(keptScore({})).toBeUndefined();
    const aggregates: Aggregate[] = ['sum', 'max', 'min', 'last'];
    expect(aggregates.map((aggregate) => keptScore({ aggregate }))).toEqual([undefined, 'max', 'min', 'last']);
    const score = { scores: true, write: 'score' };
    const increment = { scores: false, write: 'increment' };
    expect(writeMismatch({}, 'b', increment)).toBeUndefined();
    expect(writeMismatch({ aggregate: 'last' }, 'b', score)).toBeUndefined();
    expect(writeMismatch({}, 'b', score)).toBe(
      'board "b" sums its events: score takes no score (use increment, or a board with aggregate max, min or last)',
    );
    expect(writeMismatch({ aggregate: 'max' }, 'b', increment)).toMatch(
      /^board "b" keeps the max score of each item: increment does not apply/,
    );
  });

  // Issue #46: what a board's aggregate decides is the option's (keptScore, writeMismatch, check, view,
  // costliestAmong): no TypeScript outside the options compares it.
  it('is compared by no code outside the options', () => {
    const src = join(__dirname, '..', '..', '..');
    const files = readdirSync(src, { recursive: true, encoding: 'utf8' }).filter(
      (file) => file.endsWith('.ts') && !file.endsWith('.spec.ts') && !file.startsWith(join('ranking', 'options')),
    );
    const comparing = files.filter((file) =>
      /\baggregate\b[^\n]*[!=]==|[!=]==[^\n]*\baggregate\b/.test(readFileSync(join(src, file), 'utf8')),
    );
    expect(files.length).toBeGreaterThan(100);
    expect(comparing).toEqual([]);
  });
});
