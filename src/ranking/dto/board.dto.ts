import { applyDecorators, type Type as ClassOf } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional, IntersectionType } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsBoolean, ValidateIf, ValidateNested } from 'class-validator';
import { CompiledValidation, NAME_FIELD } from '../../common/compiled-checks';
import {
  IsOptionalNotNull,
  NameProperty,
  OptionalDurationProperty,
  OptionalIntProperty,
  OptionalNameProperty,
  ToBool,
} from '../../common/dto';
import { type BoardOptionsPut, optionPutFields } from '../options/registry';
import { type WindowOptionsPut, windowPutFields } from '../options/window-registry';
import { BOARD_MAX_ITEMS, MAX_SLOTS_PER_WINDOW, SHARDS_PER_BOARD, WINDOWS_PER_BOARD } from '../core/ranking.limits';

/** A PUT window's own fields; each window option's come from its class of them (the window registry's windowPutFields). */
class WindowPutFields {
  @OptionalNameProperty('Window name (defaults to the period as given, e.g. "24h")', '24h')
  name?: string;

  @OptionalDurationProperty(
    'Rolling windows: how much history the window covers: seconds, or 30s, 5m, 1h, 7d (not with calendar)',
    '24h',
  )
  period?: string | number;

  @OptionalDurationProperty(
    `Rolling windows: slot length; the period must be a multiple of it (at most ${MAX_SLOTS_PER_WINDOW} slots)`,
    '1h',
  )
  interval?: string | number;
}

/** A window of the board PUT body: its own fields and every window option's, each with its schema and validation. */
export class WindowDto extends (IntersectionType(WindowPutFields, ...windowPutFields()) as ClassOf<
  WindowPutFields & Partial<WindowOptionsPut>
>) {}

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

/** The board PUT's own fields; each option's come from its class of them (the registry's optionPutFields). */
class BoardPutFields {
  // A group board (groupOf) declares none: its one window is its member board's.
  @ValidateIf((dto: PutBoardDto) => dto.groupOf === undefined || dto.windows !== undefined)
  @Windows()
  windows?: WindowDto[];

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

/** The board PUT body: its own fields and every option's, each with its schema and validation. */
export class PutBoardDto extends (IntersectionType(BoardPutFields, ...optionPutFields()) as ClassOf<
  BoardPutFields & BoardOptionsPut
>) {}

export class PutBoardQuery {
  @ApiPropertyOptional({
    description:
      "Drop the data of windows whose period or interval changes, or that are removed (every window's when the shards or the aggregate change)",
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
