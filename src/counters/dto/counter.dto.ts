import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsString, MaxLength } from 'class-validator';
import { CompiledValidation, NAME_FIELD, optional } from '../../common/compiled-checks';
import { IsOptionalNotNull, NameProperty, NextCursorProperty, OptionalIntProperty, ToBool } from '../../common/dto';
import { UNIX_SEC } from '../../common/limits';
import { COUNT_RANGE, DEFAULT_COUNT, MAX_FUTURE_SKEW_SEC, MAX_PRECISION_CHARS } from '../counters.limits';

@CompiledValidation({ name: NAME_FIELD })
export class CounterParams {
  @NameProperty('Counter name', 'hits:home')
  name!: string;
}

@CompiledValidation({
  count: optional({ kind: 'int', range: COUNT_RANGE, nonZero: true }),
  at: optional({ kind: 'int', range: UNIX_SEC }),
})
export class IncrementCounterDto {
  @OptionalIntProperty(
    COUNT_RANGE,
    { description: 'Count to add (negative subtracts)', default: DEFAULT_COUNT },
    { nonZero: true },
  )
  count?: number;

  @OptionalIntProperty(UNIX_SEC, {
    description: `Time of the sample, unix seconds (default now). At most ${MAX_FUTURE_SKEW_SEC} s in the future; it lands at every precision whose retention (samples x precision) still covers it, and is refused when none does.`,
    example: 1_700_000_000,
  })
  at?: number;
}

export class IncrementCounterResultDto {
  @ApiProperty({ example: 'hits:home' })
  name!: string;

  @ApiProperty({ type: 'integer', description: 'The count added', example: 1 })
  count!: number;

  @ApiProperty({ type: 'integer', description: 'Time of the sample, unix seconds', example: 1_700_000_000 })
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
    maxLength: MAX_PRECISION_CHARS,
  })
  @IsOptionalNotNull()
  @MaxLength(MAX_PRECISION_CHARS)
  @IsString()
  precision?: string;

  @OptionalIntProperty(
    UNIX_SEC,
    {
      description: 'Unix seconds: only slices ending after it (the slice holding `from` is included)',
      example: 1_700_000_000,
    },
    { fromQuery: true },
  )
  from?: number;

  @OptionalIntProperty(
    UNIX_SEC,
    { description: 'Unix seconds: only slices starting at or before it', example: 1_700_000_600 },
    { fromQuery: true },
  )
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
  @ApiProperty({ type: 'integer', description: 'Slice start, unix seconds', example: 1_700_000_000 })
  t!: number;

  @ApiProperty({ type: 'integer', example: 42 })
  count!: number;
}

export class CounterSeriesDto {
  @ApiProperty({ example: 'hits:home' })
  name!: string;

  @ApiProperty({ type: 'integer', minimum: 1, description: 'Precision, seconds', example: 5 })
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

  @ApiProperty({
    type: 'integer',
    minimum: 0,
    description:
      'Live counters in all (those whose newest slice is still kept, or left every retention since the last cleaner pass)',
    example: 1,
  })
  total!: number;

  @NextCursorProperty()
  nextCursor!: string | null;
}
