import { resolveWindows, slotStartSec, windowSpan } from './window-math';

describe('slotStartSec', () => {
  it('floors a time to the start of its slot', () => {
    expect(slotStartSec(0, 60)).toBe(0);
    expect(slotStartSec(59, 60)).toBe(0);
    expect(slotStartSec(60, 60)).toBe(60);
    expect(slotStartSec(1_700_000_123, 3600)).toBe(1_699_999_200);
  });

  it('floors negative times downwards too', () => {
    expect(slotStartSec(-1, 60)).toBe(-60);
  });
});

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
