import { parseDurationSec, stepStartSec } from './duration';
import { DURATION_SEC } from './limits';

describe('parseDurationSec', () => {
  it.each([
    [30, 30],
    ['30', 30],
    ['30s', 30],
    ['5m', 300],
    ['1h', 3600],
    ['7d', 604800],
    [' 2h ', 7200],
    [DURATION_SEC.max, DURATION_SEC.max],
  ])('reads %j as %d seconds', (input, seconds) => {
    expect(parseDurationSec(input)).toBe(seconds);
  });

  it.each([
    [0],
    [-5],
    [1.5],
    ['0s'],
    ['-1m'],
    ['1.5h'],
    ['1w'],
    ['h'],
    [''],
    ['1h30m'],
    [null],
    [undefined],
    [{}],
    [DURATION_SEC.max + 1],
    ['401d'],
  ])('refuses %j', (input) => {
    expect(parseDurationSec(input)).toBeUndefined();
  });
});

describe('stepStartSec', () => {
  it.each([
    [0, 60, 0],
    [59, 60, 0],
    [60, 60, 60],
    [1_700_000_123, 3600, 1_699_999_200],
    [1_700_000_007, 5, 1_700_000_005],
    [1_700_000_005, 5, 1_700_000_005],
    [1_700_000_007, 1, 1_700_000_007],
    [1_700_000_007, 86400, 1_699_920_000],
    [-1, 60, -60],
  ])('floors %d to the start of its %d s step, %d (below 0 too)', (timeSec, stepSec, startSec) => {
    expect(stepStartSec(timeSec, stepSec)).toBe(startSec);
  });
});
