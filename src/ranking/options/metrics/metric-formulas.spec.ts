import fc from 'fast-check';
import { controversy, wilsonLowerBound } from './metric-formulas';

const count = fc.integer({ min: 0, max: 1_000_000 });

describe('wilsonLowerBound', () => {
  it('answers known values (z = 1.96)', () => {
    expect(wilsonLowerBound(0, 0)).toBe(0);
    expect(wilsonLowerBound(1, 0)).toBeCloseTo(0.2065, 4);
    expect(wilsonLowerBound(10, 0)).toBeCloseTo(0.7225, 4);
    expect(wilsonLowerBound(50, 50)).toBeCloseTo(0.4038, 4);
    expect(wilsonLowerBound(0, 10)).toBeCloseTo(0, 12);
  });

  it('lies in [0, share] and rises with more of the same share', () => {
    fc.assert(
      fc.property(count, count, fc.integer({ min: 2, max: 50 }), (p, n, k) => {
        const bound = wilsonLowerBound(p, n);
        expect(bound).toBeGreaterThanOrEqual(-1e-12);
        if (p + n > 0) expect(bound).toBeLessThanOrEqual(p / (p + n) + 1e-12);
        if (p > 0) expect(wilsonLowerBound(p * k, n * k)).toBeGreaterThan(bound);
      }),
    );
  });

  it('rises with a positive and falls with a negative', () => {
    fc.assert(
      fc.property(count, count, (p, n) => {
        expect(wilsonLowerBound(p + 1, n)).toBeGreaterThan(wilsonLowerBound(p, n));
        if (p > 0) expect(wilsonLowerBound(p, n + 1)).toBeLessThan(wilsonLowerBound(p, n));
      }),
    );
  });

  it('takes counts below 0 as 0', () => {
    expect(wilsonLowerBound(-3, 4)).toBe(wilsonLowerBound(0, 4));
    expect(wilsonLowerBound(5, -1)).toBe(wilsonLowerBound(5, 0));
  });
});

describe('controversy', () => {
  it('answers known values', () => {
    expect(controversy(0, 0)).toBe(0);
    expect(controversy(100, 0)).toBe(0);
    expect(controversy(0, 7)).toBe(0);
    expect(controversy(5, 5)).toBe(10);
    expect(controversy(4, 1)).toBeCloseTo(Math.pow(5, 0.25), 12);
  });

  it('is symmetric, between 1 and p + n, and p + n exactly when split evenly', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1_000_000 }), fc.integer({ min: 1, max: 1_000_000 }), (p, n) => {
        const value = controversy(p, n);
        expect(controversy(n, p)).toBe(value);
        expect(value).toBeGreaterThanOrEqual(1);
        expect(value).toBeLessThanOrEqual(p + n);
        expect(controversy(p, p)).toBe(2 * p);
      }),
    );
  });
});
