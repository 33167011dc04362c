import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsInt, IsNumber, Matches, Max, Min } from 'class-validator';
import { IsName, IsOptionalNotNull, ToInt } from '../../common/dto';
import { isName } from '../../common/names';
import { FastValidated, requiredFields } from '../../common/validation';
import { isRecordableValue } from '../stats-math';
import { MAX_ABS_VALUE } from '../stats.limits';
import { CONTEXT_PATTERN, CONTEXT_RULE, isContext } from '../stats-names';

/** Compiled checks for the hot record route (see AppValidationPipe); class-validator gives every error. */
@FastValidated(requiredFields(StatsParams, { context: isContext, type: isName }))
export class StatsParams {
  @ApiProperty({
    description: `Context: ${CONTEXT_RULE}, URL-encoded`,
    example: 'GET /boards/:board/top',
    maxLength: 200,
  })
  @Matches(CONTEXT_PATTERN, { message: `context must be ${CONTEXT_RULE}` })
  context!: string;

  @ApiProperty({ description: 'Type: 1-64 characters of A-Z a-z 0-9 _ . : -', example: 'AccessTime' })
  @IsName()
  type!: string;
}

@FastValidated(requiredFields(RecordDto, { value: isRecordableValue }))
export class RecordDto {
  @ApiProperty({ description: `A finite number, |value| <= ${MAX_ABS_VALUE}`, example: 0.042 })
  // Registration order is check order (decorators run bottom-up): the type check comes first.
  @Max(MAX_ABS_VALUE)
  @Min(-MAX_ABS_VALUE)
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
  @ApiPropertyOptional({ minimum: 1, maximum: 100, default: 10 })
  @IsOptionalNotNull()
  @ToInt()
  @Max(100)
  @Min(1)
  @IsInt()
  limit?: number;
}

export class RecordResultDto {
  @ApiProperty() context!: string;
  @ApiProperty() type!: string;
  @ApiProperty({ description: 'Start of the UTC hour the value went into (unix s)' }) hourStart!: number;
  @ApiProperty({
    description:
      "False only when the value was older than every kept hour (this instance's clock over an hour behind another's)",
  })
  recorded!: boolean;
  @ApiProperty({ description: 'Values recorded in that hour' }) count!: number;
  @ApiProperty() sum!: number;
  @ApiProperty({ description: 'Sum of squares' }) sumsq!: number;
}

export class StatsViewDto {
  @ApiProperty() context!: string;
  @ApiProperty() type!: string;
  @ApiProperty({ description: 'Start of the UTC hour (unix s)' }) hourStart!: number;
  @ApiProperty() count!: number;
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
  @ApiProperty({ description: 'Latest hour recorded (unix s)' }) hourStart!: number;
}

export class StatsListDto {
  @ApiProperty({ description: 'Context/type pairs recorded in the current or previous hour' }) total!: number;
  @ApiProperty({ type: [ListedStatsDto], description: 'Ordered by latest hour, then context and type' })
  items!: ListedStatsDto[];
}
