import fc from 'fast-check';
import { Temporal } from 'temporal-polyfill';
import {
  CALENDARS,
  CalendarSpec,
  canonicalTimeZone,
  isTimeZone,
  localTimeOf,
  nextPeriod,
  periodAt,
  WEEK_STARTS,
} from './calendar-math';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
const spec = (
  calendar: CalendarSpec['calendar'],
  timeZone = 'UTC',
  weekStart: CalendarSpec['weekStart'] = 'monday',
) => ({
  calendar,
  timeZone,
  weekStart,
});
const ms = (iso: string) => Temporal.Instant.from(iso).epochMilliseconds;
const length = (period: { startMs: number; endMs: number }) => period.endMs - period.startMs;

describe('calendar periods in a time zone', () => {
  it('a Berlin day lasts 23 hours on the spring change and 25 on the autumn one', () => {
    const spring = periodAt(spec('day', 'Europe/Berlin'), ms('2026-03-29T12:00:00Z'));
    expect(spring).toEqual({ startMs: ms('2026-03-28T23:00:00Z'), endMs: ms('2026-03-29T22:00:00Z') });
    expect(length(spring)).toBe(23 * HOUR_MS);
    const autumn = periodAt(spec('day', 'Europe/Berlin'), ms('2026-10-25T12:00:00Z'));
    expect(length(autumn)).toBe(25 * HOUR_MS);
    expect(localTimeOf(spec('day', 'Europe/Berlin'), autumn.startMs)).toBe('2026-10-25T00:00:00');
  });

  it('a New York month starts at local midnight, and March is an hour short', () => {
    const march = periodAt(spec('month', 'America/New_York'), ms('2026-03-15T12:00:00Z'));
    expect(march.startMs).toBe(ms('2026-03-01T05:00:00Z'));
    expect(march.endMs).toBe(ms('2026-04-01T04:00:00Z'));
    expect(length(march)).toBe(31 * DAY_MS - HOUR_MS);
  });

  it('weeks start on Monday or Sunday, as asked', () => {
    // Wednesday 2026-11-25
    expect(periodAt(spec('week'), ms('2026-11-25T10:00:00Z')).startMs).toBe(ms('2026-11-23T00:00:00Z'));
    expect(periodAt(spec('week', 'UTC', 'sunday'), ms('2026-11-25T10:00:00Z')).startMs).toBe(
      ms('2026-11-22T00:00:00Z'),
    );
    // A Sunday is the last day of a Monday week and the first of a Sunday week.
    expect(periodAt(spec('week'), ms('2026-11-29T10:00:00Z')).startMs).toBe(ms('2026-11-23T00:00:00Z'));
    expect(periodAt(spec('week', 'UTC', 'sunday'), ms('2026-11-29T10:00:00Z')).startMs).toBe(
      ms('2026-11-29T00:00:00Z'),
    );
  });

  it('month ends and a leap day: February 2028 has 29 days, 2028 has 366', () => {
    const february = periodAt(spec('month'), ms('2028-02-29T23:59:59Z'));
    expect(february).toEqual({ startMs: ms('2028-02-01T00:00:00Z'), endMs: ms('2028-03-01T00:00:00Z') });
    expect(periodAt(spec('day'), ms('2028-02-29T12:00:00Z')).startMs).toBe(ms('2028-02-29T00:00:00Z'));
    expect(length(periodAt(spec('year'), ms('2028-06-01T00:00:00Z')))).toBe(366 * DAY_MS);
    expect(nextPeriod(spec('month'), periodAt(spec('month'), ms('2027-01-31T12:00:00Z'))).startMs).toBe(
      ms('2027-02-01T00:00:00Z'),
    );
  });

  it('a zone that skips midnight starts the day at its first instant (Havana, DST at 00:00)', () => {
    const day = periodAt(spec('day', 'America/Havana'), ms('2026-03-08T12:00:00Z'));
    expect(localTimeOf(spec('day', 'America/Havana'), day.startMs)).toBe('2026-03-08T01:00:00');
    expect(length(day)).toBe(23 * HOUR_MS);
  });

  it('knows time zones by their IANA names', () => {
    expect(isTimeZone('Europe/Berlin')).toBe(true);
    expect(isTimeZone('UTC')).toBe(true);
    expect(isTimeZone('Mars/Olympus_Mons')).toBe(false);
    expect(isTimeZone('+01:00')).toBe(true); // an offset zone: fixed, no DST
    expect(canonicalTimeZone('europe/berlin')).toBe('Europe/Berlin');
    expect(canonicalTimeZone('nowhere')).toBeUndefined();
  });

  it('property: periods tile time, start at local midnight and last as long as their calendar allows', () => {
    const zones = ['UTC', 'Europe/Berlin', 'America/New_York', 'Australia/Lord_Howe', 'Asia/Kolkata', 'America/Havana'];
    const bounds = {
      day: [23 * HOUR_MS, 25 * HOUR_MS],
      week: [7 * DAY_MS - HOUR_MS, 7 * DAY_MS + HOUR_MS],
      month: [28 * DAY_MS - HOUR_MS, 31 * DAY_MS + HOUR_MS],
      year: [365 * DAY_MS - HOUR_MS, 366 * DAY_MS + HOUR_MS],
    };
    fc.assert(
      fc.property(
        fc.constantFrom(...CALENDARS),
        fc.constantFrom(...zones),
        fc.constantFrom(...WEEK_STARTS),
        fc.integer({ min: ms('2000-01-01T00:00:00Z'), max: ms('2060-01-01T00:00:00Z') }),
        (calendar, timeZone, weekStart, atMs) => {
          const s = spec(calendar, timeZone, weekStart);
          const period = periodAt(s, atMs);
          expect(period.startMs).toBeLessThanOrEqual(atMs);
          expect(atMs).toBeLessThan(period.endMs);
          expect(periodAt(s, period.startMs)).toEqual(period);
          expect(periodAt(s, period.endMs - 1)).toEqual(period);
          expect(nextPeriod(s, period).startMs).toBe(period.endMs);
          const [shortest, longest] = bounds[calendar];
          expect(length(period)).toBeGreaterThanOrEqual(shortest);
          expect(length(period)).toBeLessThanOrEqual(longest);
          const local = Temporal.Instant.fromEpochMilliseconds(period.startMs).toZonedDateTimeISO(timeZone);
          expect(local.equals(local.startOfDay())).toBe(true);
          if (calendar === 'month') expect(local.day).toBe(1);
          if (calendar === 'year') expect([local.month, local.day]).toEqual([1, 1]);
          if (calendar === 'week') expect(local.dayOfWeek).toBe(weekStart === 'monday' ? 1 : 7);
        },
      ),
      { numRuns: 500 },
    );
  });
});
