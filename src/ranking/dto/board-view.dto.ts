import type { Type } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional, IntersectionType } from '@nestjs/swagger';
import { NextCursorProperty } from '../../common/dto';
import type { Calendar, WeekStart } from '../options/calendar/calendar-math';
import {
  ArchiveDto,
  ArchiveViewProperty,
  CalendarViewProperty,
  TimeZoneViewProperty,
  WeekStartViewProperty,
} from '../options/calendar/calendar.option';
import { type BoardOptionsView, optionViewFields } from '../options/registry';
import { SHARDS_PER_BOARD } from '../core/ranking.limits';
import { SnapshotsDto, SnapshotsViewProperty } from '../options/snapshots/snapshots.option';

/** A board as GET /admin/boards answers it: every setting it holds (options only when on). */
export class WindowViewDto {
  @ApiProperty() name!: string;
  @ApiPropertyOptional({ type: 'integer', minimum: 1, description: 'seconds (absent on an all-time window)' })
  period?: number;
  @ApiPropertyOptional({ type: 'integer', minimum: 1, description: 'seconds (absent on an all-time window)' })
  interval?: number;
  @ApiPropertyOptional({ description: 'Present (true) on an all-time window' }) allTime?: boolean;
  @SnapshotsViewProperty()
  snapshots?: SnapshotsDto;
  @CalendarViewProperty() calendar?: Calendar;
  @TimeZoneViewProperty() timeZone?: string;
  @WeekStartViewProperty() weekStart?: WeekStart;
  @ArchiveViewProperty() archive?: ArchiveDto;
}

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
