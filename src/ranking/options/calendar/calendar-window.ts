import { InvalidInputError } from '../../../common/errors';
import type { WindowPut, WindowSlots } from '../window-option';
import { CALENDARS, canonicalTimeZone, CalendarSpec, LONGEST_PERIOD_SEC, WEEK_STARTS } from './calendar-math';
import { CALENDAR_MESSAGES as M } from './calendar.limits';

/** A calendar window's part of the window config. */
export interface CalendarWindowSpec {
  /**
   * Present on a calendar window: one slot per period of the calendar; periodSec and intervalSec then
   * hold the longest such period (an upper bound for whatever sizes by them), never a slot length.
   */
  calendar?: CalendarSpec;
  /** Its archive (one per closed period), kept as a window's history is. */
  snapshots?: { keep: number; top: number };
}

/** Refuses the calendar fields on a window that is not a calendar one. */
export function checkNoCalendarFields(input: WindowPut, field: string): void {
  for (const key of ['timeZone', 'weekStart', 'archive']) {
    if (input[key] !== undefined) throw new InvalidInputError(M.calendarOnly(field, key));
  }
}

/**
 * A calendar window: its zone checked and spelt canonically, the week start only on weeks; `others`,
 * the other window options' fields it is given, refused (snapshots: it keeps archives instead).
 */
export function calendarWindow(
  input: WindowPut,
  field: string,
  others: readonly string[] = [],
): WindowSlots & CalendarWindowSpec {
  if (input.period !== undefined || input.interval !== undefined)
    throw new InvalidInputError(M.calendarWithSpan(field));
  if (others.includes('snapshots')) throw new InvalidInputError(M.snapshotsOnCalendar(field));
  if (others.length > 0) throw new InvalidInputError(M.notOnCalendar(field, others[0]));
  const calendar = CALENDARS.find((c) => c === input.calendar);
  if (calendar === undefined) throw new InvalidInputError(`${field}.calendar must be one of ${CALENDARS.join(', ')}`);
  if (input.weekStart !== undefined && calendar !== 'week') throw new InvalidInputError(M.weekStartOffWeek(field));
  const weekStart = WEEK_STARTS.find((w) => w === (input.weekStart ?? 'monday'));
  if (weekStart === undefined)
    throw new InvalidInputError(`${field}.weekStart must be one of ${WEEK_STARTS.join(', ')}`);
  const zone = typeof input.timeZone === 'string' ? input.timeZone : 'UTC';
  const timeZone = canonicalTimeZone(zone);
  if (timeZone === undefined) throw new InvalidInputError(M.unknownTimeZone(field, zone));
  const longest = LONGEST_PERIOD_SEC[calendar];
  const archive = input.archive as { keep: number; top: number } | undefined;
  return {
    name: input.name ?? calendar,
    periodSec: longest,
    intervalSec: longest,
    calendar: { calendar, timeZone, weekStart },
    ...(archive ? { snapshots: { keep: archive.keep, top: archive.top } } : {}),
  };
}
