import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, IsString, Max, MaxLength, Min } from 'class-validator';
import { IsOptionalNotNull, OptionalEnumProperty, settingProperties } from '../../../common/dto';
import { modulesOnly, type BoardOption, luaModulesIn } from '../board-option';
import type { WindowOption } from '../window-option';
import { type Calendar, CALENDARS, type WeekStart, WEEK_STARTS } from './calendar-math';
import { calendarWindow, type CalendarWindowSpec, checkNoCalendarFields } from './calendar-window';
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

/** A PUT window's calendar fields (typed as strings: callers in code give them so, the DTO checks them). */
export class CalendarPutFields {
  @CalendarProperty()
  calendar?: string;

  @TimeZoneProperty()
  timeZone?: string;

  @WeekStartProperty()
  weekStart?: string;

  @ArchiveProperty()
  archive?: ArchiveDto;
}

/** A window view's calendar fields (present on a calendar window). */
class CalendarViewFields {
  @CalendarViewProperty() calendar?: Calendar;
  @TimeZoneViewProperty() timeZone?: string;
  @WeekStartViewProperty() weekStart?: WeekStart;
  @ArchiveViewProperty() archive?: ArchiveDto;
}

/**
 * Calendar windows: a window whose PUT sets `calendar` is one slot per period of its calendar in its
 * time zone (calendar-window.ts), its archive kept as a window's history is (`snapshots` of its config);
 * a rolling window takes none of its fields. Its view shows the calendar's fields, the archive as such.
 */
export const calendarWindowOption: WindowOption<CalendarWindowSpec, CalendarViewFields, CalendarPutFields> = {
  name: 'calendar',
  putFields: CalendarPutFields,
  viewFields: CalendarViewFields,
  putKeys: ['calendar', 'timeZone', 'weekStart', 'archive'],
  kind: {
    asked: (input) => input.calendar !== undefined,
    resolve: calendarWindow,
    holds: (window) => window.calendar !== undefined,
    showsSpan: true,
  },
  fromPut: (input, field) => {
    checkNoCalendarFields(input, field);
    return {};
  },
  view: ({ calendar, snapshots }) =>
    calendar === undefined
      ? {}
      : {
          calendar: calendar.calendar,
          timeZone: calendar.timeZone,
          ...(calendar.calendar === 'week' ? { weekStart: calendar.weekStart } : {}),
          ...(snapshots ? { archive: snapshots } : {}),
        },
};

/**
 * Calendar windows and their archives: its fields are a window's (the board config holds none of its
 * own), its Lua archive_lib.lua takes each closed period's archive as expiry drains the period's slot, and
 * archive_held_lib.lua keeps which items they hold rows of (a `groups: true` board keeps their groups as long),
 * archive_shown_lib.lua the exception positions a moderated archive page reads.
 */
export const calendarOption: BoardOption<object> = modulesOnly(
  'calendar',
  luaModulesIn(__dirname, 'archive_lib.lua', 'archive_held_lib.lua', 'archive_shown_lib.lua'),
);
