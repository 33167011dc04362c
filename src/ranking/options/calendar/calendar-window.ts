import { InvalidInputError } from '../../../common/errors';
import { CALENDARS, canonicalTimeZone, CalendarSpec, LONGEST_PERIOD_SEC, WEEK_STARTS } from './calendar-math';
import { CALENDAR_MESSAGES as M } from './calendar.limits';

/** A window's fields as a PUT gives them, those a calendar window reads or refuses. */
export interface CalendarWindowInput {
  name?: string;
  period?: string | number;
  interval?: string | number;
  snapshots?: object;
  calendar?: string;
  timeZone?: string;
  weekStart?: string;
  archive?: { keep: number; top: number };
}

/** A calendar window resolved: one slot per period, periodSec and intervalSec its longest period. */
export interface CalendarWindow {
  name: string;
  periodSec: number;
  intervalSec: number;
  calendar: CalendarSpec;
  /** Its archive (one per closed period), kept as a window's history. */
  snapshots?: { keep: number; top: number };
}

/** Refuses the calendar fields on a window that is not a calendar one. */
export function checkNoCalendarFields(input: CalendarWindowInput, field: string): void {
  for (const key of ['timeZone', 'weekStart', 'archive'] as const) {
    if (input[key] !== undefined) throw new InvalidInputError(M.calendarOnly(field, key));
  }
}

/** A calendar window: its zone checked and spelt canonically, the week start only on weeks. */
export function calendarWindow(input: CalendarWindowInput, field: string): CalendarWindow {
  if (input.period !== undefined || input.interval !== undefined)
    throw new InvalidInputError(M.calendarWithSpan(field));
  if (input.snapshots !== undefined) throw new InvalidInputError(M.snapshotsOnCalendar(field));
  const calendar = CALENDARS.find((c) => c === input.calendar);
  if (calendar === undefined) throw new InvalidInputError(`${field}.calendar must be one of ${CALENDARS.join(', ')}`);
  if (input.weekStart !== undefined && calendar !== 'week') throw new InvalidInputError(M.weekStartOffWeek(field));
  const weekStart = WEEK_STARTS.find((w) => w === (input.weekStart ?? 'monday'));
  if (weekStart === undefined)
    throw new InvalidInputError(`${field}.weekStart must be one of ${WEEK_STARTS.join(', ')}`);
  const zone = input.timeZone ?? 'UTC';
  const timeZone = canonicalTimeZone(zone);
  if (timeZone === undefined) throw new InvalidInputError(M.unknownTimeZone(field, zone));
  const longest = LONGEST_PERIOD_SEC[calendar];
  const archive = input.archive && { keep: input.archive.keep, top: input.archive.top };
  return {
    name: input.name ?? calendar,
    periodSec: longest,
    intervalSec: longest,
    calendar: { calendar, timeZone, weekStart },
    ...(archive ? { snapshots: archive } : {}),
  };
}
