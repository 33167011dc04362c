import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsBoolean, IsInt, Max, Min, ValidateNested } from 'class-validator';
import { IsDuration, IsName, IsOptionalNotNull, ToBool } from '../../common/dto';
import { FastValidated } from '../../common/validation';
import { idFieldsCheck } from './fast-checks';

const DURATION_SCHEMA = {
  oneOf: [
    { type: 'integer', minimum: 1 },
    { type: 'string', pattern: '^[1-9][0-9]*[smhd]?$' },
  ],
};

export class WindowDto {
  @ApiPropertyOptional({
    description: 'Window name (defaults to the period as given, e.g. "24h")',
    example: '24h',
    pattern: '^[A-Za-z0-9_.:-]{1,64}$',
  })
  @IsOptionalNotNull()
  @IsName()
  name?: string;

  @ApiProperty({
    description: 'How much history the window covers: seconds, or 30s, 5m, 1h, 7d',
    example: '24h',
    ...DURATION_SCHEMA,
  })
  @IsDuration()
  period!: string | number;

  @ApiProperty({
    description: 'Slot length; the period must be a multiple of it (at most 10 000 slots)',
    example: '1h',
    ...DURATION_SCHEMA,
  })
  @IsDuration()
  interval!: string | number;
}

export class PutBoardDto {
  @ApiProperty({
    type: [WindowDto],
    minItems: 1,
    maxItems: 8,
    description: 'The windows; the first is the default for reads',
  })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(8)
  @ValidateNested({ each: true })
  @Type(() => WindowDto)
  windows!: WindowDto[];

  @ApiPropertyOptional({
    minimum: 1,
    maximum: 64,
    description:
      'Key groups (each its own Redis Cluster hash tag) the items spread over by a hash of the item id. Omitted: 1 for a new board, the current count for an existing one. Changing it needs ?reset=true and drops the data',
  })
  @IsOptionalNotNull()
  @IsInt()
  @Min(1)
  @Max(64)
  shards?: number;
}

export class PutBoardQuery {
  @ApiPropertyOptional({
    description: 'Drop the data of windows whose period or interval changes, or that are removed',
  })
  @IsOptionalNotNull()
  @ToBool()
  @IsBoolean({ message: 'reset must be true or false' })
  reset?: boolean;
}

@FastValidated(idFieldsCheck(BoardParams, { board: 'name' }))
export class BoardParams {
  @ApiProperty({ description: 'Board name', example: 'posts' })
  @IsName()
  board!: string;
}

export class WindowViewDto {
  @ApiProperty() name!: string;
  @ApiProperty({ description: 'seconds' }) period!: number;
  @ApiProperty({ description: 'seconds' }) interval!: number;
}

export class BoardViewDto {
  @ApiProperty() name!: string;
  @ApiProperty() shards!: number;
  @ApiProperty({ type: [WindowViewDto] }) windows!: WindowViewDto[];
}

export class BoardListDto {
  @ApiProperty({ type: [BoardViewDto] }) boards!: BoardViewDto[];
}
