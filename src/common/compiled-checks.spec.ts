import 'reflect-metadata';
import fc from 'fast-check';
import { BadRequestException, DynamicModule, Type } from '@nestjs/common';
import { getMetadataStorage } from 'class-validator';
import { AppModule } from '../app.module';
import { IncrementCounterDto } from '../counters/dto/counter.dto';
import { BatchIncrementDto, IncrementDto, ItemParams, HistoryQuery } from '../ranking/dto/item.dto';
import { RecordDto } from '../stats/dto/stats.dto';
import { compiledCheckOf, DtoClass, FieldRule, FieldRules, RegisteredCheck, registeredChecks } from './compiled-checks';
import { createReferenceValidationPipe } from '../edge/validation';

/*
 * Every DTO with a compiled check registers itself (@CompiledValidation); loading the app module loads
 * every controller and so every DTO. This spec walks that registry: no hand-kept list of DTOs.
 */
const registered = registeredChecks().map((entry): [string, RegisteredCheck] => [entry.type.name, entry]);
const reference = createReferenceValidationPipe();

/** What class-validator (the reference pipe, same options as the app's) makes of an input. */
async function referenceOf(type: DtoClass, input: unknown): Promise<{ accepted: boolean; value?: unknown }> {
  try {
    // The pipe validates route params, queries and bodies alike; only 'custom' would be skipped.
    const value = await reference.transform(structuredClone(input), { type: 'body', metatype: type, data: '' });
    return { accepted: true, value };
  } catch (error) {
    if (error instanceof BadRequestException) return { accepted: false };
    throw error;
  }
}

/** The double next to `x` towards +Infinity (1) or -Infinity (-1): n + 1 and n - 1 of a float bound. */
function nextDouble(x: number, direction: 1 | -1): number {
  if (x === 0) return direction * Number.MIN_VALUE;
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  // The bits of a double, read as a signed integer, grow with its magnitude on both sides of zero.
  view.setBigInt64(0, view.getBigInt64(0) + (x > 0 === direction > 0 ? 1n : -1n));
  return view.getFloat64(0);
}

/** n - 1, n and n + 1 in the rule's own arithmetic. */
function around(rule: FieldRule, n: number): number[] {
  return rule.kind === 'finite' ? [nextDouble(n, -1), n, nextDouble(n, 1)] : [n - 1, n, n + 1];
}

function boundsOf(rule: FieldRule) {
  switch (rule.kind) {
    case 'string':
      return rule.length;
    case 'array':
    case 'list':
      return rule.entries;
    case 'flag':
      return { min: undefined, max: undefined };
    default:
      return rule.range;
  }
}

/** Numbers at every edge of a rule's limits (and around zero when zero is refused). */
function edgeNumbers(rule: Exclude<FieldRule, { kind: 'flag' }>): number[] {
  const { min, max } =
    rule.kind === 'string' ? rule.length : rule.kind === 'array' || rule.kind === 'list' ? rule.entries : rule.range;
  return [...around(rule, min), ...around(rule, max), ...(rule.kind === 'int' && rule.nonZero ? around(rule, 0) : [])];
}

/** A value the rule accepts. */
function validValue(rule: FieldRule): unknown {
  switch (rule.kind) {
    case 'string':
      return 'x'.repeat(Math.max(1, rule.length.min));
    case 'int': {
      const { min, max } = rule.range;
      const value = rule.nonZero && min <= 1 && max >= 1 ? 1 : Math.min(max, Math.max(min, 0));
      return rule.fromQuery ? String(value) : value;
    }
    case 'finite':
      return Math.min(rule.range.max, Math.max(rule.range.min, 0));
    case 'array':
      return Array.from({ length: Math.max(1, rule.entries.min) }, () => validObject(rule.fields));
    case 'list':
      return Array.from({ length: Math.max(1, rule.entries.min) }, () => validValue(rule.item));
    case 'flag':
      return 'true';
  }
}

/** An object holding a valid value in every required field (the optional ones absent). */
function validObject(fields: FieldRules): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(fields)
      .filter(([, rule]) => !rule.optional)
      .map(([key, rule]) => [key, validValue(rule)]),
  );
}

/** `object` with `key` set to `value`, or without it when `value` is undefined (absent). */
function withField(object: Record<string, unknown>, key: string, value: unknown): Record<string, unknown> {
  const copy = { ...object };
  if (value === undefined) delete copy[key];
  else copy[key] = value;
  return copy;
}

/** Values of one field at and around every limit the rule reads, plus absent, null and a wrong type. */
function edgeValues(rule: FieldRule): unknown[] {
  const absent = [undefined, null];
  switch (rule.kind) {
    case 'string':
      return [
        ...absent,
        5,
        ...edgeNumbers(rule)
          .filter((n) => n >= 0)
          .map((n) => 'x'.repeat(n)),
      ];
    case 'int': {
      const numbers = [...edgeNumbers(rule), rule.range.min + 0.5];
      return rule.fromQuery
        ? [...absent, 'x', ...numbers.map(String)]
        : [...absent, String(validValue(rule)), ...numbers];
    }
    case 'finite':
      return [...absent, '0', Number.NaN, Infinity, -Infinity, ...edgeNumbers(rule)];
    case 'array': {
      const entry = validObject(rule.fields);
      const lengths = edgeNumbers(rule).filter((n) => n >= 0);
      const entryEdges = Object.entries(rule.fields).flatMap(([key, entryRule]) =>
        edgeValues(entryRule).map((value) => [withField(entry, key, value)]),
      );
      return [...absent, 'x', [5], ...lengths.map((n) => new Array(n).fill(entry)), ...entryEdges];
    }
    case 'list': {
      const item = validValue(rule.item);
      const lengths = edgeNumbers(rule).filter((n) => n >= 0);
      return [...absent, 'x', ...lengths.map((n) => new Array(n).fill(item)), ...edgeValues(rule.item).map((v) => [v])];
    }
    case 'flag':
      return [...absent, 'true', 'false', '1', '0', '2', 'yes', '', true, false, 1];
  }
}

function describeValue(value: unknown): string {
  if (Array.isArray(value))
    return `[${value.length} entries: ${describeValue(value[0])}${value.length > 1 ? ', ...' : ''}]`;
  const text = typeof value === 'string' && value.length > 12 ? `'${value[0]}' x ${value.length}` : undefined;
  return text ?? (Number.isNaN(value) ? 'NaN' : (JSON.stringify(value) ?? String(value)));
}

/** Inputs at the edges of every limit of a DTO: one field at an edge, the others valid. */
function edgeInputs({ fields }: RegisteredCheck): Array<[string, unknown]> {
  const base = validObject(fields);
  const inputs: Array<[string, unknown]> = [
    ['no body', undefined],
    ['a null body', null],
    ['every required field valid', base],
    ['a stray field', { ...base, stray: 1 }],
  ];
  for (const [key, rule] of Object.entries(fields))
    for (const value of edgeValues(rule))
      inputs.push([`${key} = ${describeValue(value)}`, withField(base, key, value)]);
  return inputs;
}

/** The bounds a field's OpenAPI schema (@ApiProperty) documents, in the terms of its rule. */
function documentedBounds(type: DtoClass, key: string, rule: FieldRule) {
  const schema = Reflect.getMetadata('swagger/apiModelProperties', type.prototype, key) ?? {};
  switch (rule.kind) {
    case 'string':
      return { min: schema.minLength, max: schema.maxLength };
    case 'array':
    case 'list':
      return { min: schema.minItems, max: schema.maxItems };
    case 'flag':
      return { min: undefined, max: undefined };
    default:
      return { min: schema.minimum, max: schema.maximum };
  }
}

/** Properties class-validator checks on a class (own and inherited). */
function validatedProperties(type: DtoClass): string[] {
  const metadata = getMetadataStorage().getTargetValidationMetadatas(type, '', true, false);
  return [...new Set(metadata.map((m) => m.propertyName))].sort();
}

/** Every controller of the app, found through the module tree (no hand-kept list). */
function controllersOf(module: Type | DynamicModule, seen = new Set<unknown>()): Type[] {
  if (seen.has(module)) return [];
  seen.add(module);
  const dynamic: Partial<DynamicModule> = 'module' in module ? module : {};
  const type = dynamic.module ?? module;
  const imports: Array<Type | DynamicModule> = [
    ...(Reflect.getMetadata('imports', type) ?? []),
    ...(dynamic.imports ?? []),
  ].filter((m) => m !== undefined && !(m instanceof Promise));
  return [
    ...(Reflect.getMetadata('controllers', type) ?? []),
    ...(dynamic.controllers ?? []),
    ...imports.flatMap((m) => controllersOf(m, seen)),
  ];
}

/** The classes route handlers take as parameters (params, queries, bodies). */
function routeParameterTypes(): Set<unknown> {
  const types = new Set<unknown>();
  for (const controller of controllersOf(AppModule.forRoot())) {
    const proto = controller.prototype;
    for (const name of Object.getOwnPropertyNames(proto))
      for (const type of Reflect.getMetadata('design:paramtypes', proto, name) ?? []) types.add(type);
  }
  return types;
}

/** Values near every rule's edges, valid and not, beside each field's own edge values. */
const anyValue = fc.oneof(
  fc.constantFrom(undefined, null, '', ' ', 'a', 'posts', 'a b', 'x{y}', 'é', 'a/b', '\u0000', 'a\tb', 'a%b'),
  fc.constantFrom('0', '1', '-1', '10', '1e3', '01', ' 5', '999999999999999999', 'GET /boards/:board/top'),
  fc.constantFrom(0, -0, 1, -1, 1.5, Number.NaN, Infinity, 1e21, 1e101),
  fc.double(),
  fc.string({ maxLength: 140 }),
  fc.integer({ min: -2_000_000, max: 2_000_000 }),
  fc.constant([1]),
  fc.constant({}),
  fc.boolean(),
);

/** A field's values: valid ones often enough that whole objects reach the comparison, edges, anything. */
function fieldArbitrary(rule: FieldRule): fc.Arbitrary<unknown> {
  const edges = fc.constantFrom(...edgeValues(rule));
  if (rule.kind !== 'array') return fc.oneof(fc.constant(validValue(rule)), edges, anyValue);
  const entry = fc.oneof(fc.constant(validObject(rule.fields)), objectArbitrary(rule.fields));
  return fc.oneof(fc.array(entry, { maxLength: 4 }), edges, anyValue);
}

/** Objects with every field, with any subset of them, and with a stray field too. */
function objectArbitrary(fields: FieldRules): fc.Arbitrary<Record<string, unknown>> {
  const model = Object.fromEntries(Object.entries(fields).map(([key, rule]) => [key, fieldArbitrary(rule)]));
  const some = fc.record(model, { requiredKeys: [] });
  return fc.oneof(
    fc.record(model),
    some,
    some.chain((object) => anyValue.map((stray) => ({ ...object, stray }))),
  );
}

describe('the compiled checks registry', () => {
  it('holds every DTO a route takes that has a compiled check, and only those', () => {
    const routeTypes = routeParameterTypes();
    const withCheck = [...routeTypes].filter((type) => compiledCheckOf(type) !== undefined);
    expect(withCheck.length).toBeGreaterThan(0);
    expect(new Set(registered.map(([, entry]) => entry.type))).toEqual(new Set(withCheck));
  });
});

describe.each(registered)('compiled check of %s', (_, entry) => {
  it('has cases for exactly the fields class-validator checks', () => {
    expect(Object.keys(entry.fields)).not.toHaveLength(0);
    expect(Object.keys(entry.fields).sort()).toEqual(validatedProperties(entry.type));
    for (const rule of Object.values(entry.fields))
      if (rule.kind === 'array') expect(Object.keys(rule.fields).sort()).toEqual(validatedProperties(rule.entry));
  });

  it('documents in OpenAPI the limits it checks', () => {
    const documented = (type: DtoClass, fields: FieldRules): Array<[string, unknown, unknown]> =>
      Object.entries(fields).flatMap(([key, rule]) => [
        [key, documentedBounds(type, key, rule), boundsOf(rule)],
        ...(rule.kind === 'array' ? documented(rule.entry, rule.fields) : []),
      ]);
    for (const [key, inSchema, checked] of documented(entry.type, entry.fields))
      expect([key, inSchema]).toEqual([key, checked]);
  });

  it('accepts and refuses exactly what class-validator does at every edge of its limits, with the same value', async () => {
    const disagreements: string[] = [];
    for (const [label, input] of edgeInputs(entry)) {
      const compiled = entry.check(structuredClone(input));
      const slow = await referenceOf(entry.type, input);
      if ((compiled !== undefined) !== slow.accepted) {
        disagreements.push(
          `${label}: the compiled check ${compiled ? 'accepts' : 'declines'}, class-validator ${slow.accepted ? 'accepts' : 'refuses'}`,
        );
      } else if (compiled !== undefined) {
        expect(compiled).toBeInstanceOf(entry.type);
        expect(compiled).toEqual(slow.value);
      }
    }
    expect(disagreements).toEqual([]);
  });

  it('builds entries of the entry class', () => {
    for (const [key, rule] of Object.entries(entry.fields)) {
      if (rule.kind !== 'array') continue;
      const built = entry.check(validObject(entry.fields)) as Record<string, unknown[]>;
      for (const item of built[key]) expect(item).toBeInstanceOf(rule.entry);
    }
  });

  it('accepts of random input only what class-validator accepts, with the same value', async () => {
    let accepted = 0;
    const input = fc.oneof(fc.constant(undefined), fc.constant(null), anyValue, objectArbitrary(entry.fields));
    await fc.assert(
      fc.asyncProperty(input, async (value) => {
        const compiled = entry.check(structuredClone(value));
        if (compiled === undefined) return;
        accepted++;
        const slow = await referenceOf(entry.type, value);
        expect(slow.accepted).toBe(true);
        expect(compiled).toBeInstanceOf(entry.type);
        expect(compiled).toEqual(slow.value);
      }),
      { numRuns: 300 },
    );
    expect(accepted).toBeGreaterThan(0);
  });
});

describe('compiled checks on common requests', () => {
  it('accept them without class-validator, and decline what needs its message', () => {
    expect(compiledCheckOf(ItemParams)!({ board: 'posts', item: 'a/b c' })).toEqual(
      Object.assign(new ItemParams(), { board: 'posts', item: 'a/b c' }),
    );
    expect(compiledCheckOf(IncrementDto)!(undefined)).toBeInstanceOf(IncrementDto);
    expect(compiledCheckOf(IncrementDto)!({ amount: 0 })).toBeUndefined();
    expect(compiledCheckOf(IncrementDto)!({ amount: null })).toBeUndefined();
    expect(compiledCheckOf(HistoryQuery)!({ at: '1700000000', window: '24h' })).toEqual(
      Object.assign(new HistoryQuery(), { window: '24h', at: 1_700_000_000 }),
    );
    const batch = compiledCheckOf(BatchIncrementDto)!({ items: [{ item: 'a', amount: 2 }, { item: 'b' }] });
    expect(batch).toEqual(Object.assign(new BatchIncrementDto(), { items: [{ item: 'a', amount: 2 }, { item: 'b' }] }));
    expect(compiledCheckOf(IncrementCounterDto)!({ count: 5 })).toEqual(
      Object.assign(new IncrementCounterDto(), { count: 5 }),
    );
    expect(compiledCheckOf(IncrementCounterDto)!({ at: null })).toBeUndefined();
    expect(compiledCheckOf(RecordDto)!({ value: 0.42 })).toEqual(Object.assign(new RecordDto(), { value: 0.42 }));
    expect(compiledCheckOf(RecordDto)!({ value: Number.NaN })).toBeUndefined();
  });
});
