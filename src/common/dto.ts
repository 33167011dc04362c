import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional, ApiPropertyOptions } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import {
  IsDefined,
  IsIn,
  IsInt,
  IsNumber,
  IsObject,
  Matches,
  Max,
  Min,
  NotEquals,
  registerDecorator,
  ValidateBy,
  ValidateIf,
  ValidateNested,
  ValidationOptions,
} from 'class-validator';
import { COMMON_MESSAGES } from './common.messages';
import { DURATION_RULE, isDuration } from './duration';
import { InvalidInputError } from './errors';
import {
  Bounds,
  DEFAULT_LIST_PAGE_ITEMS,
  DURATION_SEC,
  ID_LENGTH_CHARS,
  NAME_LENGTH_CHARS,
  PAGE_LIMIT_ITEMS,
  PAGE_OFFSET_ITEMS,
  UNIX_SEC,
} from './limits';
import { ID_PATTERN, ID_RULE, NAME_PATTERN, NAME_RULE, toNfc } from './names';

/*
 * Stacks of decorators: applyDecorators applies them in the order listed, which is the order
 * class-validator registers and, with stopAtFirstError, checks them: the type check comes first.
 */

/** A name that goes into Redis key names (board, window, counter...). */
export const IsName = (options?: ValidationOptions) =>
  Matches(NAME_PATTERN, { message: `$property must be ${NAME_RULE}`, ...options });

/** An item or user id: a member or field, never a key name; NFC before it is checked (toNfc). */
export const IsId = (options?: ValidationOptions) =>
  applyDecorators(ToNfc(), Matches(ID_PATTERN, { message: `$property must be ${ID_RULE}`, ...options }));

/** Ids (one, or a list) in NFC; anything else stays as is for the validators to refuse. */
const ToNfc = () =>
  Transform(({ value }: { value: unknown }) =>
    typeof value === 'string'
      ? toNfc(value)
      : Array.isArray(value)
        ? value.map((id: unknown) => (typeof id === 'string' ? toNfc(id) : id))
        : value,
  );

/**
 * An optional field: absent skips its rules, null is refused naming the field. (IsOptional would take
 * null for absent, and the default would apply to a client's mistake.)
 */
export const IsOptionalNotNull = () =>
  applyDecorators(
    ValidateIf((_, value) => value !== undefined),
    IsDefined({ message: '$property must not be null' }),
  );

/** An optional field taking one of `values` (null refused), with its schema (applied in the order listed). */
export const OptionalEnumProperty = (values: readonly string[], description: string) =>
  applyDecorators(
    IsIn(values, { message: `$property must be one of ${values.join(', ')}` }),
    IsOptionalNotNull(),
    ApiPropertyOptional({ enum: values, description }),
  );

/**
 * A mode of a board as the board PUT takes it (OptionalEnumProperty: one of `modes`, `put` describes it)
 * and as the board view shows it (only when it is one of `shown`, `view` describes it): the two
 * decorators of one setting, declared together.
 */
export function modeProperties(
  modes: readonly string[],
  put: string,
  shown: readonly string[],
  view: string,
): { put: () => PropertyDecorator; view: () => PropertyDecorator } {
  return {
    put: () => OptionalEnumProperty(modes, put),
    view: () => ApiPropertyOptional({ enum: shown, description: view }),
  };
}

/**
 * An optional object field of class `Dto` (null refused, `notObject` the refusal of anything else), its
 * fields validated by Dto's own rules, with its schema (applied in the order listed).
 */
const OptionalObjectProperty = (Dto: new () => object, notObject: string, description: string) =>
  applyDecorators(
    ApiPropertyOptional({ type: Dto, description }),
    IsOptionalNotNull(),
    IsObject({ message: notObject }),
    ValidateNested(),
    Type(() => Dto),
  );

/**
 * A setting of class `Dto` as the board PUT takes it (an optional object field, OptionalObjectProperty:
 * `notObject` refuses anything else, `put` describes it) and as the board view shows it (`view`: when it
 * is there): the two decorators of one setting, declared together.
 */
export function settingProperties(
  Dto: new () => object,
  notObject: string,
  put: string,
  view: string,
): { put: () => PropertyDecorator; view: () => PropertyDecorator } {
  return {
    put: () => OptionalObjectProperty(Dto, notObject, put),
    view: () => ApiPropertyOptional({ type: Dto, description: view }),
  };
}

/**
 * An optional field checked whole by `validate` (null refused; `message` says why a value is refused),
 * with its schema (applied in the order listed).
 */
export const OptionalCheckedProperty = (
  name: string,
  validate: (value: unknown) => boolean,
  message: (value: unknown) => string,
  schema: ApiPropertyOptions,
) =>
  applyDecorators(
    ValidateBy({ name, validator: { validate, defaultMessage: (args) => message(args?.value) } }),
    IsOptionalNotNull(),
    ApiPropertyOptional(schema),
  );

const nameSchema = (description: string, example: string): ApiPropertyOptions => ({
  description: `${description}: ${NAME_RULE}`,
  example,
  minLength: NAME_LENGTH_CHARS.min,
  maxLength: NAME_LENGTH_CHARS.max,
  pattern: NAME_PATTERN.source,
});

/** A required name (board, counter, stats type...) and its OpenAPI schema. */
export const NameProperty = (description: string, example: string) =>
  applyDecorators(ApiProperty(nameSchema(description, example)), IsName());

/** An optional name (a window) and its OpenAPI schema. */
export const OptionalNameProperty = (description: string, example: string) =>
  applyDecorators(ApiPropertyOptional(nameSchema(description, example)), IsOptionalNotNull(), IsName());

/** A required item or user id and its OpenAPI schema. */
export const IdProperty = (description: string, example: string) =>
  applyDecorators(
    ApiProperty({
      description: `${description}: ${ID_RULE}`,
      example,
      minLength: ID_LENGTH_CHARS.min,
      maxLength: ID_LENGTH_CHARS.max,
    }),
    IsId(),
  );

/**
 * An optional integer within `range` and its OpenAPI schema; `nonZero` also refuses 0, `fromQuery`
 * reads it from the query string.
 */
export const OptionalIntProperty = (
  range: Bounds,
  schema: ApiPropertyOptions = {},
  options: { nonZero?: boolean; fromQuery?: boolean } = {},
) =>
  applyDecorators(
    ApiPropertyOptional({
      type: 'integer',
      minimum: range.min,
      maximum: range.max,
      ...(options.nonZero ? { not: { enum: [0] } } : {}),
      ...schema,
    }),
    IsOptionalNotNull(),
    ...(options.fromQuery ? [ToInt()] : []),
    IsInt(),
    ...(options.nonZero ? [NotEquals(0, { message: '$property must not be zero' })] : []),
    Min(range.min),
    Max(range.max),
  );

/** An optional time in unix seconds (fractions allowed) and its OpenAPI schema. */
export const OptionalUnixTimeProperty = (description: string) =>
  applyDecorators(
    ApiPropertyOptional({
      type: Number,
      minimum: UNIX_SEC.min,
      maximum: UNIX_SEC.max,
      description,
      example: 1_700_000_000.5,
    }),
    IsOptionalNotNull(),
    IsNumber(
      { allowNaN: false, allowInfinity: false },
      { message: '$property must be a time in unix seconds (a number, fractions allowed)' },
    ),
    Min(UNIX_SEC.min),
    Max(UNIX_SEC.max),
  );

/** A duration: a positive integer of seconds, or a string like 30s, 5m, 1h, 7d. */
export function IsDuration(options?: ValidationOptions): PropertyDecorator {
  return (target: object, propertyName: string | symbol) =>
    registerDecorator({
      name: 'isDuration',
      target: target.constructor,
      propertyName: String(propertyName),
      options: { message: `$property must be a duration: positive ${DURATION_RULE}`, ...options },
      validator: { validate: (value: unknown) => isDuration(value) },
    });
}

const DURATION_SCHEMA = {
  oneOf: [
    { type: 'integer', minimum: DURATION_SEC.min, maximum: DURATION_SEC.max },
    { type: 'string', pattern: '^[1-9][0-9]*[smhd]?$' },
  ],
};

/** An optional duration (a window's, a view's) and its OpenAPI schema. */
export const OptionalDurationProperty = (description: string, example: string) =>
  applyDecorators(ApiPropertyOptional({ description, example, ...DURATION_SCHEMA }), IsOptionalNotNull(), IsDuration());

/** Query-string integer: "12" becomes 12; anything else stays as is for the validators to refuse. */
export const ToInt = () =>
  Transform(({ value }) => (typeof value === 'string' && /^-?\d+$/.test(value) ? Number(value) : value));

/** Query-string boolean: "true"/"1" and "false"/"0"; anything else stays as is for the validators to refuse. */
export const ToBool = () =>
  Transform(({ value }) =>
    value === 'true' || value === '1' ? true : value === 'false' || value === '0' ? false : value,
  );

/** A page's optional `limit` from the query string. */
export const PageLimit = (defaultItems: number) =>
  OptionalIntProperty(PAGE_LIMIT_ITEMS, { default: defaultItems }, { fromQuery: true });

/** A page's optional `offset` from the query string. */
export const PageOffset = () => OptionalIntProperty(PAGE_OFFSET_ITEMS, { default: 0 }, { fromQuery: true });

/** Paging of the admin and list routes (counters, stats pairs). */
export class PageQuery {
  @PageLimit(DEFAULT_LIST_PAGE_ITEMS)
  limit?: number;

  @PageOffset()
  offset?: number;
}

/** Paging of a list sorted by name (boards, counters): `offset`, or `cursor` (the previous page's nextCursor). */
export class NamePageQuery extends PageQuery {
  @OptionalNameProperty(
    "List the names after this one (the previous page's nextCursor); not with offset. Stable while entries come and go",
    'posts',
  )
  cursor?: string;
}

/** A name page from its query: a cursor and an offset together are refused (400). */
export function namePage(query: NamePageQuery): { offset: number; limit: number; cursor?: string } {
  if (query.cursor !== undefined && query.offset !== undefined)
    throw new InvalidInputError(COMMON_MESSAGES.offsetWithCursor);
  return { offset: query.offset ?? 0, limit: query.limit ?? DEFAULT_LIST_PAGE_ITEMS, cursor: query.cursor };
}

/** The cursor of a paged list's next page: the last name of a full page, null at the end. */
export const NextCursorProperty = () =>
  ApiProperty({
    type: String,
    nullable: true,
    description: 'The last name of this page when it is full: send it as `cursor` for the next page; null at the end',
  });
