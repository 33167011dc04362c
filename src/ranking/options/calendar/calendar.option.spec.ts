import { dtoErrorsOf } from '../../../../test/support/dto-errors';
import { InvalidInputError } from '../../../common/errors';
import { OPTION_LUA_MODULES } from '../registry';
import { LONGEST_PERIOD_SEC } from './calendar-math';
import { calendarWindow, checkNoCalendarFields } from './calendar-window';
import { CalendarPutFields } from './calendar.option';

const errorsOf = (body: object) => dtoErrorsOf(CalendarPutFields, body);

describe('the calendar option', () => {
  it("checks a window's calendar fields and archive", () => {
    expect(errorsOf({})).toEqual([]);
    expect(errorsOf({ calendar: 'week', timeZone: 'Europe/Berlin', weekStart: 'sunday' })).toEqual([]);
    expect(errorsOf({ calendar: 'fortnight' })).toEqual(['calendar must be one of day, week, month, year']);
    expect(errorsOf({ timeZone: 'x'.repeat(65) })).not.toEqual([]);
    expect(errorsOf({ archive: 3 })).toContain('archive must be an object like { "keep": 12, "top": 100 }');
    expect(errorsOf({ archive: { keep: 0, top: 10 } })).toEqual(['keep must not be less than 1']);
    expect(errorsOf({ archive: { keep: 12, top: 10_001 } })).toEqual(['top must not be greater than 10000']);
  });

  it('resolves a calendar window: its zone spelt canonically, its archive kept as its history', () => {
    expect(calendarWindow({ calendar: 'month', timeZone: 'europe/berlin', archive: { keep: 2, top: 5 } }, 'w')).toEqual(
      {
        name: 'month',
        periodSec: LONGEST_PERIOD_SEC.month,
        intervalSec: LONGEST_PERIOD_SEC.month,
        calendar: { calendar: 'month', timeZone: 'Europe/Berlin', weekStart: 'monday' },
        snapshots: { keep: 2, top: 5 },
      },
    );
  });

  it('refuses a span, snapshots, an unknown zone, a week start off weeks, and calendar fields on other windows', () => {
    const refusal = (run: () => unknown) => {
      try {
        run();
      } catch (error) {
        return error instanceof InvalidInputError ? error.message : `not refused as input: ${String(error)}`;
      }
      return 'not refused';
    };
    expect(refusal(() => calendarWindow({ calendar: 'day', period: '1d' }, 'w'))).toMatch(/no period or interval/);
    expect(refusal(() => calendarWindow({ calendar: 'day' }, 'w', ['snapshots']))).toMatch(/keeps archives/);
    expect(refusal(() => calendarWindow({ calendar: 'day', timeZone: 'Mars/Olympus' }, 'w'))).toMatch(/IANA/);
    expect(refusal(() => calendarWindow({ calendar: 'day', weekStart: 'sunday' }, 'w'))).toMatch(/"week" windows only/);
    expect(refusal(() => checkNoCalendarFields({ archive: { keep: 1, top: 1 } }, 'w'))).toBe(
      'w.archive applies to calendar windows only',
    );
  });

  it('loads its archive module into the libraries on boards', () => {
    expect(OPTION_LUA_MODULES.some((path) => path.endsWith('options/calendar/archive_lib.lua'))).toBe(true);
  });
});
