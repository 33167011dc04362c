import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { applyDecorators } from '@nestjs/common';
import { IsDefined, IsInt, Matches, Max, Min, registerDecorator, ValidateIf, ValidationOptions } from 'class-validator';
import { isDuration } from './duration';
import { ID_PATTERN, ID_RULE, NAME_PATTERN, NAME_RULE } from './names';

/** A name that goes into Redis key names (board, window, counter...). */
export const IsName = (options?: ValidationOptions) =>
  Matches(NAME_PATTERN, { message: `$property must be ${NAME_RULE}`, ...options });

/** An item or user id: a member or field, never a key name. */
export const IsId = (options?: ValidationOptions) =>
  Matches(ID_PATTERN, { message: `$property must be ${ID_RULE}`, ...options });

/**
 * An optional field: absent skips its rules, null is refused naming the field. (IsOptional would take
 * null for absent, and the default would apply to a client's mistake.)
 */
export const IsOptionalNotNull = () =>
  applyDecorators(
    ValidateIf((_, value) => value !== undefined),
    IsDefined({ message: '$property must not be null' }),
  );

/** A duration: a positive integer of seconds, or a string like 30s, 5m, 1h, 7d. */
export function IsDuration(options?: ValidationOptions): PropertyDecorator {
  return (target: object, propertyName: string | symbol) =>
    registerDecorator({
      name: 'isDuration',
      target: target.constructor,
      propertyName: String(propertyName),
      options: { message: '$property must be a duration: positive seconds, or like 30s, 5m, 1h, 7d', ...options },
      validator: { validate: (value: unknown) => isDuration(value) },
    });
}

/** Query-string integer: "12" becomes 12; anything else stays as is for the validators to refuse. */
export const ToInt = () =>
  Transform(({ value }) => (typeof value === 'string' && /^-?\d+$/.test(value) ? Number(value) : value));

/** Query-string boolean: "true"/"1" and "false"/"0"; anything else stays as is for the validators to refuse. */
export const ToBool = () =>
  Transform(({ value }) =>
    value === 'true' || value === '1' ? true : value === 'false' || value === '0' ? false : value,
  );

/** Most items one page may hold, and the deepest offset any page may start at. */
export const MAX_PAGE_LIMIT = 1000;
export const MAX_PAGE_OFFSET = 1_000_000;

/**
 * A page's optional `limit` (1 to MAX_PAGE_LIMIT) from the query string. Applied in the order stacked
 * decorators register (bottom-up), since with stopAtFirstError that is the check order: type first.
 */
export const PageLimit = (defaultLimit: number) => (target: object, key: string) => {
  IsInt()(target, key);
  Min(1)(target, key);
  Max(MAX_PAGE_LIMIT)(target, key);
  ToInt()(target, key);
  IsOptionalNotNull()(target, key);
  ApiPropertyOptional({ minimum: 1, maximum: MAX_PAGE_LIMIT, default: defaultLimit })(target, key);
};

/** A page's optional `offset` (0 to MAX_PAGE_OFFSET) from the query string; same order as PageLimit. */
export const PageOffset = () => (target: object, key: string) => {
  IsInt()(target, key);
  Min(0)(target, key);
  Max(MAX_PAGE_OFFSET)(target, key);
  ToInt()(target, key);
  IsOptionalNotNull()(target, key);
  ApiPropertyOptional({ minimum: 0, maximum: MAX_PAGE_OFFSET, default: 0 })(target, key);
};

/** Paging of the admin and list routes (counters, stats pairs). */
export class PageQuery {
  @PageLimit(100)
  limit?: number;

  @PageOffset()
  offset?: number;
}
