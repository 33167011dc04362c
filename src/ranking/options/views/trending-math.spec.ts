import { InvalidInputError } from '../../../common/errors';
import { DECAY_REBASE_HALF_LIVES, DEFAULT_HOT_TAU_SEC, DEFAULT_RISING_MIN_COUNT, HOT_EPOCH_SEC } from './views.limits';
import { decayedValue, hotScore, resolveViews, risingOf, risingPhase, viewViewOf } from './trending-math';

const WINDOWS = [
  { name: 'hour', periodSec: 3600, intervalSec: 300 },
  { name: 'day', periodSec: 86400, intervalSec: 3600 },
];

describe('resolveViews', () => {
  it('resolves durations and defaults, and keeps what the scripts need', () => {
    const views = resolveViews(
      [
        { name: 'fading', mode: 'decay', window: 'hour', halfLife: '10m' },
        { name: 'hot', mode: 'hot', window: 'day' },
        { name: 'rising', mode: 'rising', window: 'hour', baseline: 'day' },
      ],
      WINDOWS,
    );
    expect(views[0]).toMatchObject({ halfLifeSec: 600, rebaseHalfLives: DECAY_REBASE_HALF_LIVES });
    expect(views[1]).toMatchObject({ tauSec: DEFAULT_HOT_TAU_SEC, epochSec: HOT_EPOCH_SEC });
    expect(views[2]).toMatchObject({
      minCount: DEFAULT_RISING_MIN_COUNT,
      windowPeriodSec: 3600,
      baselinePeriodSec: 86400,
    });
    // What GET answers resolves to the same views (a PUT without views sends it again).
    expect(resolveViews(views.map(viewViewOf), WINDOWS)).toEqual(views);
  });

  it('changes the spec (so the view is rebuilt) when its window changes', () => {
    const view = { name: 'hot', mode: 'hot', window: 'day' };
    const [before] = resolveViews([view], WINDOWS);
    const [after] = resolveViews([view], [WINDOWS[0], { ...WINDOWS[1], intervalSec: 1800 }]);
    expect(after.spec).not.toBe(before.spec);
  });

  it('resolves wilson and controversial views to the window keys of their two metrics', () => {
    const metrics = ['up', 'down', 'meh'];
    const views = resolveViews(
      [
        { name: 'best', mode: 'wilson', window: 'hour', positive: 'up', negative: 'down' },
        { name: 'argued', mode: 'controversial', window: 'day', positive: 'meh', negative: 'down' },
      ],
      WINDOWS,
      metrics,
    );
    expect(views[0]).toMatchObject({ sources: ['hour', 'hour~@down'], windowPeriodSec: 3600, intervalSec: 300 });
    expect(views[1]).toMatchObject({ sources: ['day~@meh', 'day~@down'], positive: 'meh', negative: 'down' });
    expect(resolveViews(views.map(viewViewOf), WINDOWS, metrics)).toEqual(views);
  });

  it.each([
    [
      [],
      { positive: 'up', negative: 'down' },
      'views.0: a wilson view ranks by two metrics of the board, and the board declares none',
    ],
    [
      ['up', 'down'],
      { positive: 'up', negative: 'up' },
      'views.0: positive and negative must be two different metrics',
    ],
    [
      ['up', 'down'],
      { positive: 'up', negative: 'meh' },
      'views.0: negative must be one of the board\'s metrics (up, down), got "meh"',
    ],
    [
      ['up', 'down'],
      { positive: 'up' },
      "views.0: negative must be one of the board's metrics (up, down), got undefined",
    ],
  ])('refuses a wilson view on metrics %j naming %j', (metrics, named, message) => {
    const view = { name: 'best', mode: 'wilson', window: 'hour', ...named };
    expect(() => resolveViews([view], WINDOWS, metrics)).toThrow(message);
  });

  it('refuses positive or negative on a view of another mode', () => {
    const view = { name: 'hot', mode: 'hot', window: 'day', positive: 'up' };
    expect(() => resolveViews([view], WINDOWS, ['up', 'down'])).toThrow(
      'views.0.positive is not a field of a hot view',
    );
  });

  it('refuses more than 8 views', () => {
    const views = Array.from({ length: 9 }, (_, i) => ({ name: `v${i}`, mode: 'hot', window: 'day' }));
    expect(() => resolveViews(views, WINDOWS)).toThrow(InvalidInputError);
  });
});

describe('view formulas', () => {
  it('hot: sign(s)·log10(max(|s|, 1)) + (firstSeen − epoch)/τ', () => {
    expect(hotScore(100, HOT_EPOCH_SEC + 45_000, 45_000)).toBe(3);
    expect(hotScore(-10, HOT_EPOCH_SEC, 45_000)).toBe(-1);
    expect(hotScore(1, HOT_EPOCH_SEC + 90_000, 45_000)).toBe(2);
  });

  it('rising: expected is the scaled baseline; new items floor it at 1 and never divide by zero', () => {
    const view = { windowPeriodSec: 3600, baselinePeriodSec: 86400, minCount: 5 };
    expect(risingOf(30, 54, view)).toEqual({ expected: 2.25, isNew: false, score: (30 - 2.25) ** 2 / 2.25 });
    expect(risingOf(6, 6, view)).toEqual({ expected: 1, isNew: true, score: 25 });
    expect(risingOf(4, 4, view).score).toBeUndefined(); // below minCount
    expect(risingOf(10, 480, view).score).toBeUndefined(); // at its usual level
    expect(risingOf(5, 0, view)).toEqual({ expected: 1, isNew: true, score: 16 });
  });

  it('rising phase: current rate against the previous slot', () => {
    const at = { isNew: false, intervalSec: 300, elapsedSec: 60 };
    expect(risingPhase({ ...at, isNew: true, currentSlot: 0, previousSlot: 9 })).toBe('new');
    expect(risingPhase({ ...at, currentSlot: 20, previousSlot: 100 })).toBe('rising');
    expect(risingPhase({ ...at, currentSlot: 10, previousSlot: 100 })).toBe('peaking');
    expect(risingPhase({ ...at, currentSlot: 5, previousSlot: 100 })).toBe('cooling');
    // A slot just begun counts as at least 1 s old.
    expect(risingPhase({ ...at, elapsedSec: 0, currentSlot: 1, previousSlot: 300 })).toBe('rising');
  });

  it('decay: a rank score against its landmark, as of now', () => {
    expect(decayedValue(8, 1000, 1_600_000, 300)).toBe(2);
    expect(decayedValue(3, 1000, 1_000_000, 300)).toBe(3);
  });
});
