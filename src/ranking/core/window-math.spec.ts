import fc from 'fast-check';
import { stepStartSec } from '../../common/duration';
import { atProblem, eventTimeMs, resolveWindows, slotRule, windowHolds, windowSpan } from './window-math';
import { ALL_TIME_SEC } from '../options/all-time/all-time.limits';

describe('windowSpan', () => {
  it('covers the newest period/interval slots, the current one included', () => {
    const window = { name: 'h', periodSec: 3600, intervalSec: 600 };
    expect(windowSpan(7_200_000, window)).toEqual({ fromSec: 4200, toSec: 7800 });
    expect(windowSpan(7_799_999, window)).toEqual({ fromSec: 4200, toSec: 7800 });
    expect(windowSpan(7_800_000, window)).toEqual({ fromSec: 4800, toSec: 8400 });
  });

  it('is one slot wide when period equals interval', () => {
    expect(windowSpan(125_000, { name: 'm', periodSec: 60, intervalSec: 60 })).toEqual({ fromSec: 120, toSec: 180 });
  });
});

describe('resolveWindows', () => {
  it('parses durations and names a window after its period as given', () => {
    expect(
      resolveWindows([
        { period: '24h', interval: '1h' },
        { name: 'week', period: 604800, interval: '1d' },
      ]),
    ).toEqual([
      { name: '24h', periodSec: 86400, intervalSec: 3600 },
      { name: 'week', periodSec: 604800, intervalSec: 86400 },
    ]);
  });

  it.each([
    [[], /1 to 8 windows/],
    [Array.from({ length: 9 }, (_, i) => ({ name: `w${i}`, period: 60, interval: 60 })), /1 to 8 windows/],
    [[{ period: '1h', interval: '7m' }], /windows\.0\.period must be a multiple/],
    [[{ period: 'soon', interval: '1m' }], /windows\.0\.period must be a duration/],
    [[{ period: '1h', interval: 0 }], /windows\.0\.interval must be a duration/],
    [[{ period: '2d', interval: '1s' }], /172800 slots/],
    [[{ name: 'a b', period: '1h', interval: '1m' }], /windows\.0\.name/],
    [
      [
        { period: '1h', interval: '1m' },
        { period: '1h', interval: '5m' },
      ],
      /windows\.1\.name "1h" is used twice/,
    ],
  ])('refuses %j', (input, message) => {
    expect(() => resolveWindows(input as never)).toThrow(message);
  });
});

describe('timestamped events', () => {
  const NOW_MS = 1_700_002_800_500; // half a second into an hour
  const hour = { name: 'hour', periodSec: 3600, intervalSec: 300 };
  const day = { name: 'day', periodSec: 86400, intervalSec: 3600 };

  it('a window holds an event while the slot of its time is live', () => {
    const nowSec = NOW_MS / 1000;
    expect(windowHolds(hour, nowSec - 3300, NOW_MS)).toBe(true); // the oldest live 5 m slot
    expect(windowHolds(hour, nowSec - 3301, NOW_MS)).toBe(false);
    expect(windowHolds(day, nowSec - 3301, NOW_MS)).toBe(true);
  });

  it('takes `at` to the ms, and an `at` ahead of the clock as now', () => {
    expect(eventTimeMs(undefined, NOW_MS)).toBe(NOW_MS);
    expect(eventTimeMs(1_700_000_000.123, NOW_MS)).toBe(1_700_000_000_123);
    expect(eventTimeMs(NOW_MS / 1000 + 3, NOW_MS)).toBe(NOW_MS);
  });

  it('refuses an `at` more than 5 s ahead or older than every window, naming the field', () => {
    const nowSec = NOW_MS / 1000;
    expect(atProblem('at', nowSec + 5, NOW_MS, [hour])).toBeUndefined();
    expect(atProblem('at', nowSec + 5.001, NOW_MS, [hour])).toMatchObject({ kind: 'future' });
    expect(atProblem('items.3.at', nowSec - 3301, NOW_MS, [hour, day])).toBeUndefined();
    expect(atProblem('items.3.at', nowSec - 3301, NOW_MS, [hour])).toEqual({
      kind: 'past',
      message: `items.3.at is older than every window's live span: the oldest accepted is ${1_700_002_800 - 3300} (items.3.at ${nowSec - 3301}, now ${nowSec})`,
    });
  });
});

describe('calendar windows', () => {
  const [berlinDay] = resolveWindows([{ calendar: 'day', timeZone: 'Europe/Berlin' }]);
  const autumnSunday = Date.parse('2024-10-26T22:00:00Z');

  it('are one slot per period: the current period is the slot, its start the origin', () => {
    const rule = slotRule(berlinDay, autumnSunday + 3_600_000);
    expect(rule).toEqual({ periodSec: 25 * 3600, intervalSec: 25 * 3600, originSec: autumnSunday / 1000 });
    expect(windowSpan(autumnSunday, berlinDay)).toEqual({
      fromSec: autumnSunday / 1000,
      toSec: autumnSunday / 1000 + 25 * 3600,
    });
  });

  it('hold an event only while its period is open', () => {
    expect(windowHolds(berlinDay, autumnSunday / 1000, autumnSunday + 1000)).toBe(true);
    expect(windowHolds(berlinDay, autumnSunday / 1000 - 1, autumnSunday + 1000)).toBe(false);
    expect(atProblem('at', autumnSunday / 1000 - 1, autumnSunday + 1000, [berlinDay])?.message).toMatch(
      /closed period/,
    );
  });

  it('property: no period is longer than the length a calendar window reports', () => {
    const windows = resolveWindows(
      (['day', 'week', 'month', 'year'] as const).map((calendar) => ({ calendar, timeZone: 'America/New_York' })),
    );
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 4_000_000_000_000 }), (nowMs) => {
        for (const window of windows) expect(slotRule(window, nowMs).periodSec).toBeLessThanOrEqual(window.periodSec);
      }),
    );
  });
});

describe('all-time windows', () => {
  const [rolling, all] = resolveWindows([
    { name: 'hour', period: '1h', interval: '1m' },
    { name: 'ever', allTime: true },
  ]);

  it('are one slot from the epoch that never ends', () => {
    expect(all).toEqual({ name: 'ever', periodSec: ALL_TIME_SEC, intervalSec: ALL_TIME_SEC, allTime: true });
    expect(slotRule(all, Date.UTC(2030, 0, 1))).toEqual({
      periodSec: ALL_TIME_SEC,
      intervalSec: ALL_TIME_SEC,
      originSec: 0,
    });
    expect(stepStartSec(Date.UTC(2500, 0, 1) / 1000, all.intervalSec)).toBe(0);
  });

  it('hold any past time, so `at` is accepted when only they hold it', () => {
    const nowMs = Date.UTC(2026, 0, 1);
    expect(windowHolds(all, 0, nowMs)).toBe(true);
    expect(windowHolds(rolling, nowMs / 1000 - 7200, nowMs)).toBe(false);
    expect(atProblem('at', nowMs / 1000 - 10 * 365 * 86400, nowMs, [rolling, all])).toBeUndefined();
    expect(atProblem('at', nowMs / 1000 + 60, nowMs, [rolling, all])?.kind).toBe('future');
  });

  it('take a name only', () => {
    for (const extra of [{ period: '1h' }, { interval: 60 }, { calendar: 'day' }, { snapshots: { keep: 1, top: 1 } }])
      expect(() => resolveWindows([{ name: 'ever', allTime: true, ...extra }])).toThrow(/all-time window/);
    expect(() => resolveWindows([{ allTime: true }])).toThrow('windows.0: an all-time window needs a name');
  });
});
