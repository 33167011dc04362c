import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsInt, IsOptional, Matches, Max, Min, registerDecorator, ValidationOptions } from 'class-validator';
import { isDuration } from './duration';
import { ID_PATTERN, ID_RULE, NAME_PATTERN, NAME_RULE } from './names';

/** A name that goes into Redis key names (board, window, counter...). */
export const IsName = (options?: ValidationOptions) => Matches(NAME_PATTERN, { message: `$property must be ${NAME_RULE}`, ...options });

/** An item or user id: a member or field, never a key name. */
export const IsId = (options?: ValidationOptions) => Matches(ID_PATTERN, { message: `$property must be ${ID_RULE}`, ...options });

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
export const ToInt = () => Transform(({ value }) => (typeof value === 'string' && /^-?\d+$/.test(value) ? Number(value) : value));

/** Query-string boolean: "true"/"1" and "false"/"0"; anything else stays as is for the validators to refuse. */
export const ToBool = () =>
  Transform(({ value }) => (value === 'true' || value === '1' ? true : value === 'false' || value === '0' ? false : value));

/** Paging of the admin and list routes (counters, stats pairs). */
export class PageQuery {
  @ApiPropertyOptional({ minimum: 1, maximum: 1000, default: 100 })
  @IsOptional()
  @ToInt()
  @Max(1000)
  @Min(1)
  @IsInt()
  limit?: number;

  @ApiPropertyOptional({ minimum: 0, maximum: 1_000_000, default: 0 })
  @IsOptional()
  @ToInt()
  @Max(1_000_000)
  @Min(0)
  @IsInt()
  offset?: number;
}
