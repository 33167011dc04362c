import 'reflect-metadata';
import fc from 'fast-check';
import { ArgumentMetadata } from '@nestjs/common';
import { CounterParams, IncrementCounterDto } from '../counters/dto/counter.dto';
import { BoardParams } from '../ranking/dto/board.dto';
import {
  AroundQuery,
  BatchIncrementDto,
  IncrementDto,
  ItemParams,
  LikeDto,
  LikeParams,
  TopQuery,
  WindowQuery,
} from '../ranking/dto/item.dto';
import { RecordDto, StatsParams } from '../stats/dto/stats.dto';
import { createReferenceValidationPipe, fastCheckOf } from './validation';

const reference = createReferenceValidationPipe();

/** Values near every rule's edges, valid and not. */
const anyValue = fc.oneof(
  fc.constantFrom(
    undefined,
    null,
    '',
    ' ',
    'a',
    'posts',
    'a b',
    'x{y}',
    'é',
    'a/b',
    '\u0000',
    'x'.repeat(64),
    'x'.repeat(65),
    'x'.repeat(128),
    'x'.repeat(129),
  ),
  fc.constantFrom(
    '0',
    '1',
    '-1',
    '10',
    '1000',
    '1001',
    '100',
    '101',
    '1e3',
    '01',
    ' 5',
    '1000000',
    '1000001',
    '999999999999999999',
  ),
  fc.constantFrom(
    0,
    -0,
    1,
    -1,
    1.5,
    1_000_000,
    1_000_001,
    -1_000_000,
    -1_000_001,
    Number.NaN,
    Infinity,
    1e21,
    1e100,
    -1e100,
    1e101,
    9_999_999_999,
    10_000_000_000,
  ),
  fc.constantFrom('GET /boards/:board/top', 'GET /boards/{board}/top', 'x'.repeat(200), 'x'.repeat(201), 'a\tb', 'a%b'),
  fc.double(),
  fc.string({ maxLength: 140 }),
  fc.integer({ min: -2_000_000, max: 2_000_000 }),
  fc.constant([1]),
  fc.constant({}),
  fc.boolean(),
);

/** Objects with any subset of the keys (plus a stray one), and objects with all of them. */
function objectOf(keys: string[]) {
  return fc.oneof(
    fc.dictionary(fc.constantFrom(...keys, 'extra'), anyValue, { maxKeys: keys.length + 1 }),
    fc.record(Object.fromEntries(keys.map((key) => [key, anyValue]))),
  );
}

/** A batch entry class-validator accepts, so batches of them reach the comparison often. */
const validBatchItem = fc.record({
  item: fc.constantFrom('a', 'posts', 'a/b c'),
  amount: fc.integer({ min: -1_000_000, max: 1_000_000 }).filter((n) => n !== 0),
});

const cases: Array<[string, new () => object, ArgumentMetadata['type'], fc.Arbitrary<unknown>]> = [
  ['ItemParams', ItemParams, 'param', objectOf(['board', 'item'])],
  ['LikeParams', LikeParams, 'param', objectOf(['board', 'item', 'userId'])],
  ['BoardParams', BoardParams, 'param', objectOf(['board'])],
  [
    'IncrementDto',
    IncrementDto,
    'body',
    fc.oneof(fc.constant(undefined), fc.constant(null), objectOf(['amount']), anyValue),
  ],
  ['LikeDto', LikeDto, 'body', objectOf(['userId'])],
  ['WindowQuery', WindowQuery, 'query', objectOf(['window'])],
  ['TopQuery', TopQuery, 'query', objectOf(['window', 'limit', 'offset'])],
  ['AroundQuery', AroundQuery, 'query', objectOf(['window', 'radius'])],
  ['CounterParams', CounterParams, 'param', objectOf(['name'])],
  [
    'IncrementCounterDto',
    IncrementCounterDto,
    'body',
    fc.oneof(fc.constant(undefined), fc.constant(null), objectOf(['count', 'at']), anyValue),
  ],
  ['StatsParams', StatsParams, 'param', objectOf(['context', 'type'])],
  [
    'RecordDto',
    RecordDto,
    'body',
    fc.oneof(fc.constant(undefined), objectOf(['value']), fc.record({ value: fc.double() }), anyValue),
  ],
  [
    'BatchIncrementDto',
    BatchIncrementDto,
    'body',
    fc.oneof(
      fc.record({ items: fc.array(fc.oneof(validBatchItem, objectOf(['item', 'amount'])), { maxLength: 4 }) }),
      fc.record({ items: fc.array(validBatchItem, { minLength: 1, maxLength: 4 }) }),
      objectOf(['items']),
    ),
  ],
];

describe('compiled checks agree with class-validator', () => {
  it.each(cases)(
    '%s: whatever the fast check accepts, class-validator accepts with the same value',
    async (_, type, kind, input) => {
      const check = fastCheckOf(type)!;
      expect(check).toBeDefined();
      let accepted = 0;
      await fc.assert(
        fc.asyncProperty(input, async (value) => {
          const fast = check(structuredClone(value));
          if (fast === undefined) return;
          accepted++;
          const slow = await reference.transform(structuredClone(value), { type: kind, metatype: type, data: '' });
          expect(fast).toBeInstanceOf(type);
          expect(fast).toEqual(slow);
        }),
        { numRuns: 400 },
      );
      expect(accepted).toBeGreaterThan(0);
    },
  );

  it('accepts the common valid requests without class-validator', () => {
    expect(fastCheckOf(ItemParams)!({ board: 'posts', item: 'a/b c' })).toEqual(
      Object.assign(new ItemParams(), { board: 'posts', item: 'a/b c' }),
    );
    expect(fastCheckOf(IncrementDto)!(undefined)).toBeInstanceOf(IncrementDto);
    expect(fastCheckOf(TopQuery)!({ limit: '10', window: '24h' })).toEqual(
      Object.assign(new TopQuery(), { window: '24h', limit: 10 }),
    );
    const batch = fastCheckOf(BatchIncrementDto)!({
      items: Array.from({ length: 1000 }, (_, i) => ({ item: `i${i}`, amount: 1 })),
    }) as BatchIncrementDto;
    expect(batch.items).toHaveLength(1000);
    expect(fastCheckOf(IncrementDto)!({ amount: 0 })).toBeUndefined();
    expect(fastCheckOf(IncrementCounterDto)!({ count: 5 })).toEqual(
      Object.assign(new IncrementCounterDto(), { count: 5 }),
    );
    expect(fastCheckOf(IncrementCounterDto)!({ count: 0 })).toBeUndefined();
    expect(fastCheckOf(StatsParams)!({ context: 'GET /boards/:board/top', type: 'AccessTime' })).toBeInstanceOf(
      StatsParams,
    );
    expect(fastCheckOf(RecordDto)!({ value: 0.42 })).toEqual(Object.assign(new RecordDto(), { value: 0.42 }));
    expect(fastCheckOf(RecordDto)!({ value: Number.NaN })).toBeUndefined();
  });
});
