import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsNumber, Matches, Max, Min } from 'class-validator';
import { CompiledValidation, NAME_FIELD } from '../../common/compiled-checks';
import { IsOptionalNotNull, NameProperty, OptionalIntProperty } from '../../common/dto';
import { CONTEXT_PATTERN, CONTEXT_RULE } from '../stats-names';
import {
  CONTEXT_LENGTH_CHARS,
  DEFAULT_SLOWEST_ITEMS,
  MAX_ABS_VALUE,
  SLOWEST_LIMIT_ITEMS,
  VALUE_RANGE,
} from '../stats.limits';

@CompiledValidation({
  context: { kind: 'string', pattern: CONTEXT_PATTERN, length: CONTEXT_LENGTH_CHARS },
  type: NAME_FIELD,
})
export class StatsParams {
  @ApiProperty({
    description: `Context: ${CONTEXT_RULE}, URL-encoded`,
    example: 'GET /boards/:board/top',
    minLength: CONTEXT_LENGTH_CHARS.min,
    maxLength: CONTEXT_LENGTH_CHARS.max,
  })
  @Matches(CONTEXT_PATTERN, { message: `context must be ${CONTEXT_RULE}` })
  context!: string;

  @NameProperty('Type', 'AccessTime')
  type!: string;
}

@CompiledValidation({ value: { kind: 'finite', range: VALUE_RANGE } })
export class RecordDto {
  @ApiProperty({
    description: `A finite number, |value| <= ${MAX_ABS_VALUE}`,
    example: 0.042,
    minimum: VALUE_RANGE.min,
    maximum: VALUE_RANGE.max,
  })
  // Registration order is check order (decorators run bottom-up): the type check comes first.
  @Max(VALUE_RANGE.max)
  @Min(VALUE_RANGE.min)
  @IsNumber({ allowNaN: false, allowInfinity: false }, { message: 'value must be a finite number' })
  value!: number;
}

export class StatsQuery {
  @ApiPropertyOptional({ enum: ['current', 'previous'], default: 'current', description: 'The UTC hour to read' })
  @IsOptionalNotNull()
  @IsIn(['current', 'previous'], { message: 'hour must be current or previous' })
  hour?: 'current' | 'previous';
}

export class SlowestQuery {
  @OptionalIntProperty(SLOWEST_LIMIT_ITEMS, { default: DEFAULT_SLOWEST_ITEMS }, { fromQuery: true })
  limit?: number;
}

export class RecordResultDto {
  @ApiProperty() context!: string;
  @ApiProperty() type!: string;
  @ApiProperty({ type: 'integer', description: 'Start of the UTC hour the value went into (unix s)' })
  hourStart!: number;
  @ApiProperty({
    description:
      "False only when the value was older than every kept hour (this instance's clock over an hour behind another's)",
  })
  recorded!: boolean;
  @ApiProperty({ type: 'integer', minimum: 1, description: 'Values recorded in that hour' }) count!: number;
  @ApiProperty() sum!: number;
  @ApiProperty({ description: 'Sum of squares' }) sumsq!: number;
}

export class StatsViewDto {
  @ApiProperty() context!: string;
  @ApiProperty() type!: string;
  @ApiProperty({ type: 'integer', description: 'Start of the UTC hour (unix s)' }) hourStart!: number;
  @ApiProperty({ type: 'integer', minimum: 1 }) count!: number;
  @ApiProperty() sum!: number;
  @ApiProperty({ description: 'Sum of squares' }) sumsq!: number;
  @ApiProperty() min!: number;
  @ApiProperty() max!: number;
  @ApiProperty() average!: number;
  @ApiProperty({
    nullable: true,
    type: Number,
    description: 'Sample standard deviation (from a stored M2, never negative); null below two values',
  })
  stddev!: number | null;
  @ApiProperty({ description: 'Median, within 1 % relative error (DDSketch log buckets)' }) p50!: number;
  @ApiProperty({ description: '90th percentile, within 1 %' }) p90!: number;
  @ApiProperty({ description: '99th percentile, within 1 %' }) p99!: number;
}

export class SlowestItemDto {
  @ApiProperty({ example: 'GET /boards/:board/top' }) context!: string;
  @ApiProperty({ description: 'Average access time of the current hour, seconds' }) average!: number;
}

export class SlowestDto {
  @ApiProperty({ type: [SlowestItemDto], description: 'Slowest average first' }) items!: SlowestItemDto[];
}

export class ListedStatsDto {
  @ApiProperty() context!: string;
  @ApiProperty() type!: string;
  @ApiProperty({ type: 'integer', description: 'Latest hour recorded (unix s)' }) hourStart!: number;
}

export class StatsListDto {
  @ApiProperty({
    type: 'integer',
    minimum: 0,
    description: 'Context/type pairs recorded in the current or previous hour',
  })
  total!: number;
  @ApiProperty({ type: [ListedStatsDto], description: 'Ordered by latest hour, then context and type' })
  items!: ListedStatsDto[];
}
