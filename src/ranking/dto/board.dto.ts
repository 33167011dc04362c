import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsBoolean,
  IsInt,
  IsObject,
  Max,
  Min,
  ValidateNested,
} from 'class-validator';
import { CompiledValidation, NAME_FIELD } from '../../common/compiled-checks';
import {
  IsDuration,
  IsOptionalNotNull,
  NameProperty,
  NextCursorProperty,
  OptionalIntProperty,
  OptionalNameProperty,
  ToBool,
} from '../../common/dto';
import { DURATION_SEC } from '../../common/limits';
import {
  BOARD_MAX_ITEMS,
  MAX_SLOTS_PER_WINDOW,
  SHARDS_PER_BOARD,
  SNAPSHOT_KEEP,
  SNAPSHOT_TOP_ITEMS,
  WINDOWS_PER_BOARD,
} from '../ranking.limits';

const DURATION_SCHEMA = {
  oneOf: [
    { type: 'integer', minimum: DURATION_SEC.min, maximum: DURATION_SEC.max },
    { type: 'string', pattern: '^[1-9][0-9]*[smhd]?$' },
  ],
};

/** A window's period or interval and its OpenAPI schema. */
const DurationProperty = (description: string, example: string) =>
  applyDecorators(ApiProperty({ description, example, ...DURATION_SCHEMA }), IsDuration());

export class SnapshotsDto {
  @ApiProperty({
    type: 'integer',
    minimum: SNAPSHOT_KEEP.min,
    maximum: SNAPSHOT_KEEP.max,
    description: 'Slot boundaries of history kept (each snapshot lives keep intervals)',
  })
  @IsInt()
  @Min(SNAPSHOT_KEEP.min)
  @Max(SNAPSHOT_KEEP.max)
  keep!: number;

  @ApiProperty({
    type: 'integer',
    minimum: SNAPSHOT_TOP_ITEMS.min,
    maximum: SNAPSHOT_TOP_ITEMS.max,
    description: 'Rows of the listing each snapshot stores',
  })
  @IsInt()
  @Min(SNAPSHOT_TOP_ITEMS.min)
  @Max(SNAPSHOT_TOP_ITEMS.max)
  top!: number;
}

export class WindowDto {
  @OptionalNameProperty('Window name (defaults to the period as given, e.g. "24h")', '24h')
  name?: string;

  @DurationProperty('How much history the window covers: seconds, or 30s, 5m, 1h, 7d', '24h')
  period!: string | number;

  @DurationProperty(`Slot length; the period must be a multiple of it (at most ${MAX_SLOTS_PER_WINDOW} slots)`, '1h')
  interval!: string | number;

  @ApiPropertyOptional({
    type: SnapshotsDto,
    description: "Keep the window's top rows at each slot boundary (GET /boards/:board/history, previousRank)",
  })
  @IsOptionalNotNull()
  @IsObject({ message: 'snapshots must be an object like { "keep": 24, "top": 100 }' })
  @ValidateNested()
  @Type(() => SnapshotsDto)
  snapshots?: SnapshotsDto;
}

/** A board's windows: the type first, then their count, then each window. */
const Windows = () =>
  applyDecorators(
    ApiProperty({
      type: [WindowDto],
      minItems: WINDOWS_PER_BOARD.min,
      maxItems: WINDOWS_PER_BOARD.max,
      description: 'The windows; the first is the default for reads',
    }),
    IsArray(),
    ArrayMinSize(WINDOWS_PER_BOARD.min),
    ArrayMaxSize(WINDOWS_PER_BOARD.max),
    ValidateNested({ each: true }),
    Type(() => WindowDto),
  );

export class PutBoardDto {
  @Windows()
  windows!: WindowDto[];

  @OptionalIntProperty(SHARDS_PER_BOARD, {
    description:
      'Key groups (each its own Redis Cluster hash tag) the items spread over by a hash of the item id. Omitted: 1 for a new board, the current count for an existing one. Changing it needs ?reset=true and drops the data',
  })
  shards?: number;

  @OptionalIntProperty(BOARD_MAX_ITEMS, {
    description:
      'Most items the board holds: a write that would add a new item beyond it is refused (409 BOARD_FULL); existing items keep counting. On a sharded board each shard holds at most ceil(maxItems / shards). Omitted: the current cap (none for a new board)',
  })
  maxItems?: number;
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

@CompiledValidation({ board: NAME_FIELD })
export class BoardParams {
  @NameProperty('Board name', 'posts')
  board!: string;
}

export class WindowViewDto {
  @ApiProperty() name!: string;
  @ApiProperty({ type: 'integer', minimum: 1, description: 'seconds' }) period!: number;
  @ApiProperty({ type: 'integer', minimum: 1, description: 'seconds' }) interval!: number;
  @ApiPropertyOptional({ type: SnapshotsDto, description: 'Present when the window keeps snapshots' })
  snapshots?: SnapshotsDto;
}

export class BoardViewDto {
  @ApiProperty() name!: string;
  @ApiProperty({ type: 'integer', minimum: SHARDS_PER_BOARD.min, maximum: SHARDS_PER_BOARD.max }) shards!: number;
  @ApiProperty({ type: [WindowViewDto] }) windows!: WindowViewDto[];
  @ApiPropertyOptional({ type: 'integer', minimum: 1, description: 'Most items the board holds; absent: no cap' })
  maxItems?: number;
}

export class BoardListDto {
  @ApiProperty({ type: [BoardViewDto] }) boards!: BoardViewDto[];
  @ApiProperty({
    type: 'integer',
    minimum: 0,
    description:
      'Registered board names; for a moment it may count a board whose PUT or DELETE is under way (not listed)',
  })
  total!: number;
  @NextCursorProperty()
  nextCursor!: string | null;
}
