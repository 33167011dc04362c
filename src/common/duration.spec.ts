import { parseDurationSec } from './duration';
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
