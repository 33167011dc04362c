import { Temporal } from 'temporal-polyfill';

/**
 * Calendar periods in a time zone (issue #25): a day, week, month or year from local midnight to local
 * midnight, by the zone's real rules (the runtime's Intl time-zone data through Temporal; no offset
 * tables), so a day lasts 23 or 25 hours across a DST change and a month is a calendar month. Where a
 * zone skips midnight (DST at 00:00), the period starts at the day's first instant. Pure: no Nest, no
 * Redis; the boundaries are what the scripts and the scheduler treat like slot expiries.
 */
export const CALENDARS = ['day', 'week', 'month', 'year'] as const;
export type Calendar = (typeof CALENDARS)[number];
export const WEEK_STARTS = ['monday', 'sunday'] as const;
export type WeekStart = (typeof WEEK_STARTS)[number];

export interface CalendarSpec {
  calendar: Calendar;
  /** An IANA time zone name (default "UTC"). */
  timeZone: string;
  /** Only for weeks (default monday). */
  weekStart: WeekStart;
}

/** One period: [startMs, endMs) in unix ms. */
export interface Period {
  startMs: number;
  endMs: number;
}

/** ISO day of week (1 = Monday … 7 = Sunday) a week starts on. */
const ISO_WEEK_START: Record<WeekStart, number> = { monday: 1, sunday: 7 };

/** Whether the runtime knows the time zone (an IANA name such as "Europe/Berlin", or "UTC"). */
export function isTimeZone(name: string): boolean {
  try {
    Temporal.Now.instant().toZonedDateTimeISO(name);
    return true;
  } catch {
    return false;
  }
}

/** The zone's canonical spelling ("europe/berlin" → "Europe/Berlin"), or undefined when unknown. */
export function canonicalTimeZone(name: string): string | undefined {
  if (!isTimeZone(name)) return undefined;
  return Temporal.Now.instant().toZonedDateTimeISO(name).timeZoneId;
}

/** The first instant of the period holding `atMs`. */
function periodStart(spec: CalendarSpec, at: Temporal.ZonedDateTime): Temporal.ZonedDateTime {
  switch (spec.calendar) {
    case 'day':
      return at.startOfDay();
    case 'week': {
      const back = (at.dayOfWeek - ISO_WEEK_START[spec.weekStart] + 7) % 7;
      return at.subtract({ days: back }).startOfDay();
    }
    case 'month':
      return at.with({ day: 1 }).startOfDay();
    case 'year':
      return at.with({ month: 1, day: 1 }).startOfDay();
  }
}

const LENGTH: Record<Calendar, Temporal.DurationLike> = {
  day: { days: 1 },
  week: { weeks: 1 },
  month: { months: 1 },
  year: { years: 1 },
};

/** The period holding `atMs`: its local-midnight start and the next period's start. */
export function periodAt(spec: CalendarSpec, atMs: number): Period {
  const at = Temporal.Instant.fromEpochMilliseconds(atMs).toZonedDateTimeISO(spec.timeZone);
  const start = periodStart(spec, at);
  const end = start.add(LENGTH[spec.calendar]).startOfDay();
  return { startMs: start.epochMilliseconds, endMs: end.epochMilliseconds };
}

/** The period after `period` (it starts where `period` ends). */
export function nextPeriod(spec: CalendarSpec, period: Period): Period {
  return periodAt(spec, period.endMs);
}

/** The local date and time of an instant in the spec's zone (for messages and the dashboard). */
export function localTimeOf(spec: Pick<CalendarSpec, 'timeZone'>, atMs: number): string {
  return Temporal.Instant.fromEpochMilliseconds(atMs).toZonedDateTimeISO(spec.timeZone).toPlainDateTime().toString();
}

/**
 * The longest period of each calendar (a day or a week holding a 25-hour day, 31 days, a leap year):
 * what a calendar window reports as its period and interval where a rolling window's sizes are read.
 */
export const LONGEST_PERIOD_SEC: Record<Calendar, number> = {
  day: 25 * 3600,
  week: 7 * 86_400 + 3600,
  month: 31 * 86_400 + 3600,
  year: 366 * 86_400 + 3600,
};
