import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, IsString, Max, MaxLength, Min } from 'class-validator';
import { join } from 'node:path';
import { IsOptionalNotNull, OptionalEnumProperty, settingProperties } from '../../../common/dto';
import { modulesOnly, type BoardOption } from '../board-option';
import { CALENDARS, WEEK_STARTS } from './calendar-math';
import { ARCHIVE_KEEP, ARCHIVE_TOP_ITEMS } from './calendar.limits';

/** A calendar window's archive: the closed periods kept and the rows of each. */
export class ArchiveDto {
  @ApiProperty({
    type: 'integer',
    minimum: ARCHIVE_KEEP.min,
    maximum: ARCHIVE_KEEP.max,
    description: 'Closed periods kept (the oldest goes when a new one is kept)',
  })
  @IsInt()
  @Min(ARCHIVE_KEEP.min)
  @Max(ARCHIVE_KEEP.max)
  keep!: number;

  @ApiProperty({
    type: 'integer',
    minimum: ARCHIVE_TOP_ITEMS.min,
    maximum: ARCHIVE_TOP_ITEMS.max,
    description: "Rows of each period's final standings kept",
  })
  @IsInt()
  @Min(ARCHIVE_TOP_ITEMS.min)
  @Max(ARCHIVE_TOP_ITEMS.max)
  top!: number;
}

/** A board PUT window's `calendar` field: a calendar window instead of a rolling one (applied bottom-up, as stacked decorators are). */
export const CalendarProperty = () =>
  OptionalEnumProperty(
    CALENDARS,
    'A calendar window instead of a rolling one: counts the current period of its time zone',
  );

/** A board PUT window's `timeZone` field. */
export const TimeZoneProperty = () =>
  applyDecorators(
    MaxLength(64),
    IsString(),
    IsOptionalNotNull(),
    ApiPropertyOptional({ description: 'Calendar windows: an IANA time zone (default UTC)', example: 'Europe/Berlin' }),
  );

/** A board PUT window's `weekStart` field. */
export const WeekStartProperty = () =>
  OptionalEnumProperty(WEEK_STARTS, 'Calendar "week" windows only (default monday)');

/**
 * A board PUT window's `archive` field: the closed periods it keeps (applied in the order of board.dto's
 * other nested objects), and a window view's (present when it keeps archives).
 */
export const { put: ArchiveProperty, view: ArchiveViewProperty } = settingProperties(
  ArchiveDto,
  'archive must be an object like { "keep": 12, "top": 100 }',
  "Calendar windows: keep each closed period's final standings (GET /boards/:board/archive)",
  'Present when a calendar window keeps archives',
);

/** The board view's window fields of a calendar window. */
export const CalendarViewProperty = () =>
  ApiPropertyOptional({ enum: CALENDARS, description: 'Present on a calendar window' });
export const TimeZoneViewProperty = () => ApiPropertyOptional({ description: 'Calendar windows: the IANA time zone' });
export const WeekStartViewProperty = () =>
  ApiPropertyOptional({ enum: WEEK_STARTS, description: 'Calendar week windows' });

/**
 * Calendar windows and their archives: its fields are a window's (the board config holds none of its
 * own), its Lua archive_lib.lua takes each closed period's archive as expiry drains the period's slot, and
 * archive_held_lib.lua keeps which items they hold rows of (a `groups: true` board keeps their groups as long),
 * archive_shown_lib.lua the exception positions a moderated archive page reads.
 */
export const calendarOption: BoardOption<object> = modulesOnly('calendar', [
  join(__dirname, 'archive_lib.lua'),
  join(__dirname, 'archive_held_lib.lua'),
  join(__dirname, 'archive_shown_lib.lua'),
]);
