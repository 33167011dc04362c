import type { Type } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional, IntersectionType } from '@nestjs/swagger';
import { NextCursorProperty } from '../../common/dto';
import { type BoardOptionsView, optionViewFields } from '../options/registry';
import { type WindowOptionsView, windowViewFields } from '../options/window-registry';
import { SHARDS_PER_BOARD } from '../core/ranking.limits';

/** A window view's own fields; each window option's come from its class of them (the window registry's windowViewFields). */
class WindowViewFields {
  @ApiProperty() name!: string;
  @ApiPropertyOptional({ type: 'integer', minimum: 1, description: 'seconds (absent on an all-time window)' })
  period?: number;
  @ApiPropertyOptional({ type: 'integer', minimum: 1, description: 'seconds (absent on an all-time window)' })
  interval?: number;
}

/** A window as GET /admin/boards answers it: its own fields and every window option's shown (only when on). */
export class WindowViewDto extends (IntersectionType(WindowViewFields, ...windowViewFields()) as Type<
  WindowViewFields & Partial<WindowOptionsView>
>) {}

/** The board view's own fields; each option's come from its class of them (the registry's optionViewFields). */
class BoardViewFields {
  @ApiProperty() name!: string;
  @ApiProperty({ type: 'integer', minimum: SHARDS_PER_BOARD.min, maximum: SHARDS_PER_BOARD.max }) shards!: number;
  @ApiProperty({ type: [WindowViewDto] }) windows!: WindowViewDto[];
  @ApiPropertyOptional({ type: 'integer', minimum: 1, description: 'Most items the board holds; absent: no cap' })
  maxItems?: number;
}

/** A board as its view answers it: its own fields and every option's shown (options only when on). */
export class BoardViewDto extends (IntersectionType(BoardViewFields, ...optionViewFields()) as Type<
  BoardViewFields & Partial<BoardOptionsView>
>) {}

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
