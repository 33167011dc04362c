import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsInt, IsString, Max, MaxLength, Min, NotEquals } from 'class-validator';
import { IsName, IsOptionalNotNull, ToBool, ToInt } from '../../common/dto';
import { isName } from '../../common/names';
import { FastValidated, requiredFields } from '../../common/validation';
import { isCount } from '../counter-math';
import { MAX_ABS_COUNT as MAX_COUNT } from '../counters.limits';

/**
 * Latest unix second accepted anywhere (year 2286): keeps every time far inside 2^53 ms.
 * Decorator order: the bottom-most registers first and, with stopAtFirstError, is checked first, so
 * the type check sits at the bottom.
 */
const MAX_UNIX_SEC = 9_999_999_999;

const isOptionalCount = (value: unknown) => value === undefined || isCount(value);
const isAt = (value: unknown) =>
  value === undefined || (typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= MAX_UNIX_SEC);

/**
 * Compiled checks for the hot counter increment (see AppValidationPipe): what they do not certainly
 * accept goes to class-validator, which gives the error messages.
 */
@FastValidated(requiredFields(CounterParams, { name: isName }))
export class CounterParams {
  @ApiProperty({ description: 'Counter name: 1-64 characters of A-Z a-z 0-9 _ . : -', example: 'hits:home' })
  @IsName()
  name!: string;
}

@FastValidated(requiredFields(IncrementCounterDto, { count: isOptionalCount, at: isAt }))
export class IncrementCounterDto {
  @ApiPropertyOptional({
    description: 'Count to add (negative subtracts)',
    default: 1,
    minimum: -MAX_COUNT,
    maximum: MAX_COUNT,
    not: { enum: [0] },
  })
  @IsOptionalNotNull()
  @Max(MAX_COUNT)
  @Min(-MAX_COUNT)
  @NotEquals(0, { message: '$property must not be zero' })
  @IsInt()
  count?: number;

  @ApiPropertyOptional({
    description:
      'Time of the sample, unix seconds (default now). At most 5 s in the future; it lands at every precision whose retention (samples x precision) still covers it, and is refused when none does.',
    example: 1_700_000_000,
  })
  @IsOptionalNotNull()
  @Max(MAX_UNIX_SEC)
  @Min(0)
  @IsInt()
  at?: number;
}

export class IncrementCounterResultDto {
  @ApiProperty({ example: 'hits:home' })
  name!: string;

  @ApiProperty({ description: 'The count added', example: 1 })
  count!: number;

  @ApiProperty({ description: 'Time of the sample, unix seconds', example: 1_700_000_000 })
  at!: number;

  @ApiProperty({
    description: 'Precisions (s) the count landed in',
    type: [Number],
    example: [1, 5, 60, 300, 3600, 18000, 86400],
  })
  precisions!: number[];
}

export class ReadCounterQuery {
  @ApiProperty({
    description: 'One of the configured precisions: seconds, or a duration such as 5s, 1m, 1h, 1d',
    example: '5s',
    required: true,
  })
  @IsOptionalNotNull()
  @MaxLength(16)
  @IsString()
  precision?: string;

  @ApiPropertyOptional({
    description: 'Unix seconds: only slices ending after it (the slice holding `from` is included)',
    example: 1_700_000_000,
  })
  @IsOptionalNotNull()
  @ToInt()
  @Max(MAX_UNIX_SEC)
  @Min(0)
  @IsInt()
  from?: number;

  @ApiPropertyOptional({ description: 'Unix seconds: only slices starting at or before it', example: 1_700_000_600 })
  @IsOptionalNotNull()
  @ToInt()
  @Max(MAX_UNIX_SEC)
  @Min(0)
  @IsInt()
  to?: number;

  @ApiPropertyOptional({
    description: 'Emit zero samples for empty slices in range (clamped to the retention, up to now)',
    default: false,
  })
  @IsOptionalNotNull()
  @ToBool()
  @IsBoolean()
  fill?: boolean;
}

export class SampleDto {
  @ApiProperty({ description: 'Slice start, unix seconds', example: 1_700_000_000 })
  t!: number;

  @ApiProperty({ example: 42 })
  count!: number;
}

export class CounterSeriesDto {
  @ApiProperty({ example: 'hits:home' })
  name!: string;

  @ApiProperty({ description: 'Precision, seconds', example: 5 })
  precision!: number;

  @ApiProperty({ type: [SampleDto], description: 'Oldest first; only slices inside the retention' })
  samples!: SampleDto[];
}

export class CounterSummaryDto {
  @ApiProperty({ example: 'hits:home' })
  name!: string;

  @ApiProperty({ type: [Number], description: 'Precisions (s) the counter holds data at', example: [1, 5, 60] })
  precisions!: number[];
}

export class CounterListDto {
  @ApiProperty({ type: [CounterSummaryDto], description: 'Sorted by name (byte order)' })
  counters!: CounterSummaryDto[];

  @ApiProperty({ description: 'Number of counters in all', example: 1 })
  total!: number;
}
