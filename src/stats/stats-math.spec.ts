import fc from 'fast-check';
import {
  addToHistogram,
  addValue,
  bucketField,
  bucketIndex,
  bucketValue,
  emptyMoments,
  hourStartOf,
  Histogram,
  isRecordableValue,
  MAX_INDEXABLE,
  mergeHistograms,
  mergeMoments,
  MIN_INDEXABLE,
  Moments,
  naiveVariance,
  quantiles,
  RELATIVE_ACCURACY,
  sampleStddev,
} from './stats-math';
import { escapeContext, indexMember, isContext, parseIndexMember, routeContext } from './stats-names';

const QS = [0, 0.01, 0.25, 0.5, 0.9, 0.99, 1];
const TOLERANCE = RELATIVE_ACCURACY * (1 + 1e-9);

/** Exact quantile at the rank the sketch estimates: the sorted sample at floor(q (n - 1)). */
function exactQuantile(sorted: number[], q: number): number {
  return sorted[Math.floor(q * (sorted.length - 1))];
}

function withinAccuracy(estimate: number | null, exact: number): boolean {
  if (estimate === null) return false;
  if (Math.abs(exact) < MIN_INDEXABLE) return Math.abs(estimate) <= MIN_INDEXABLE;
  return Math.abs(estimate - exact) <= TOLERANCE * Math.abs(exact);
}

/** Magnitudes spread over the whole indexable range (log-uniform), with both signs and some zeros. */
const value = fc.oneof(
  {
    weight: 8,
    arbitrary: fc
      .tuple(fc.double({ min: Math.log10(MIN_INDEXABLE), max: Math.log10(MAX_INDEXABLE), noNaN: true }), fc.boolean())
      .map(([e, neg]) => (neg ? -1 : 1) * Math.pow(10, e)),
  },
  { weight: 1, arbitrary: fc.constant(0) },
  { weight: 2, arbitrary: fc.double({ min: -1000, max: 1000, noNaN: true, noDefaultInfinity: true }) },
);

function histogramOf(values: number[]): Histogram {
  const h: Histogram = new Map();
  for (const v of values) addToHistogram(h, v);
  return h;
}

function momentsOf(values: number[]): Moments {
  const m = emptyMoments();
  for (const v of values) addValue(m, v);
  return m;
}

describe('hours and values', () => {
  it('hourStartOf floors to the UTC hour in seconds', () => {
    expect(hourStartOf(1_700_002_800_000)).toBe(1_700_002_800);
    expect(hourStartOf(1_700_002_800_000 + 3_599_999)).toBe(1_700_002_800);
    expect(hourStartOf(1_700_002_800_000 + 3_600_000)).toBe(1_700_006_400);
  });

  it.each([[0], [-1.5], [1e100], [-1e100], [Number.MIN_VALUE]])('accepts %p', (v) =>
    expect(isRecordableValue(v)).toBe(true),
  );
  it.each([[NaN], [Infinity], [-Infinity], [1e101], ['1'], [null], [undefined]])('refuses %p', (v) =>
    expect(isRecordableValue(v)).toBe(false),
  );
});

describe('log-bucket mapping (DDSketch)', () => {
  it('puts every value in a bucket whose value is within the relative accuracy', () => {
    fc.assert(
      fc.property(fc.double({ min: MIN_INDEXABLE, max: MAX_INDEXABLE, noNaN: true }), (v) => {
        const estimate = bucketValue(bucketIndex(v));
        expect(Math.abs(estimate - v)).toBeLessThanOrEqual(TOLERANCE * v);
      }),
      { numRuns: 2000 },
    );
  });

  it('is monotone', () => {
    fc.assert(
      fc.property(
        fc.double({ min: MIN_INDEXABLE, max: MAX_INDEXABLE, noNaN: true }),
        fc.double({ min: MIN_INDEXABLE, max: MAX_INDEXABLE, noNaN: true }),
        (a, b) => {
          const [lo, hi] = a <= b ? [a, b] : [b, a];
          expect(bucketIndex(lo)).toBeLessThanOrEqual(bucketIndex(hi));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('names fields by sign, with a zero bucket for tiny values, and clamps huge ones', () => {
    expect(bucketField(0)).toBe('z');
    expect(bucketField(-1e-12)).toBe('z');
    expect(bucketField(1)).toBe('p0');
    expect(bucketField(-1)).toBe('n0');
    expect(bucketField(1.02)).toBe('p1');
    expect(bucketField(0.5)).toBe(`p${bucketIndex(0.5)}`);
    expect(bucketIndex(0.5)).toBeLessThan(0);
    expect(bucketField(1e90)).toBe(bucketField(MAX_INDEXABLE));
  });
});

describe('quantiles', () => {
  it('are within the relative accuracy of the exact quantiles of random data', () => {
    fc.assert(
      fc.property(fc.array(value, { minLength: 1, maxLength: 300 }), (values) => {
        const sorted = [...values].sort((a, b) => a - b);
        const estimates = quantiles(histogramOf(values), QS);
        QS.forEach((q, i) => expect(withinAccuracy(estimates[i], exactQuantile(sorted, q))).toBe(true));
      }),
      { numRuns: 300 },
    );
  });

  it('of merged histograms equal those of one histogram over all the data (merge is exact)', () => {
    fc.assert(
      fc.property(fc.array(fc.array(value, { maxLength: 80 }), { minLength: 1, maxLength: 6 }), (parts) => {
        const merged: Histogram = new Map();
        for (const part of parts) mergeHistograms(merged, histogramOf(part));
        const all = parts.flat();
        const whole = histogramOf(all);
        expect(new Map([...merged].sort())).toEqual(new Map([...whole].sort()));
        if (all.length === 0) return;
        const sorted = [...all].sort((a, b) => a - b);
        const estimates = quantiles(merged, QS);
        QS.forEach((q, i) => expect(withinAccuracy(estimates[i], exactQuantile(sorted, q))).toBe(true));
      }),
      { numRuns: 200 },
    );
  });

  it('stay inside [min, max] when bounds are given, and are null for an empty histogram', () => {
    expect(quantiles(new Map(), [0.5])).toEqual([null]);
    const h = histogramOf([1e20, 1e20, 5]);
    expect(quantiles(h, [1], { min: 5, max: 1e20 })).toEqual([1e20]);
    expect(quantiles(histogramOf([3]), [0.5, 0.99], { min: 3, max: 3 })).toEqual([3, 3]);
  });
});

describe('moments', () => {
  it('merging batches (Chan) agrees with adding every value (Welford) and with the two-pass variance', () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(fc.double({ min: -1e6, max: 1e6, noNaN: true }), { maxLength: 50 }), {
          minLength: 1,
          maxLength: 5,
        }),
        (parts) => {
          const merged = emptyMoments();
          for (const part of parts) mergeMoments(merged, momentsOf(part));
          const all = parts.flat();
          const direct = momentsOf(all);
          expect(merged.count).toBe(all.length);
          if (all.length === 0) return;
          expect(merged.min).toBe(Math.min(...all));
          expect(merged.max).toBe(Math.max(...all));
          const mean = all.reduce((s, v) => s + v, 0) / all.length;
          const twoPass =
            all.length < 2 ? null : Math.sqrt(all.reduce((s, v) => s + (v - mean) ** 2, 0) / (all.length - 1));
          for (const m of [merged, direct]) {
            const stddev = sampleStddev(m);
            if (twoPass === null) expect(stddev).toBeNull();
            else expect(Math.abs(stddev! - twoPass)).toBeLessThanOrEqual(1e-6 * Math.max(1, twoPass));
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('large equal values give a standard deviation of exactly 0 (the naive formula goes negative)', () => {
    const values = Array.from({ length: 1000 }, () => 1e9 + 0.1);
    const m = momentsOf(values);
    expect(sampleStddev(m)).toBe(0);
    expect(naiveVariance(m)).not.toBe(0); // what the stored M2 avoids
    const halves = momentsOf(values.slice(0, 500));
    mergeMoments(halves, momentsOf(values.slice(500)));
    expect(sampleStddev(halves)).toBe(0);
  });

  it('is null below two samples and never NaN or negative', () => {
    expect(sampleStddev(momentsOf([5]))).toBeNull();
    expect(sampleStddev({ count: 3, m2: -1e-12 })).toBe(0);
    expect(sampleStddev(momentsOf([1, 2, 3, 4]))).toBeCloseTo(1.2909944, 6);
  });
});

describe('context names', () => {
  it.each(['GET /boards/:board/top', 'GET /boards/{board}/top', 'ProfilePage', 'a'.repeat(200)])('accepts %s', (c) =>
    expect(isContext(c)).toBe(true),
  );
  it.each(['', 'a'.repeat(201), 'tab\there', 'new\nline', 'GET /x?y', 'a%b', 'ü'])('refuses %j', (c) =>
    expect(isContext(c)).toBe(false),
  );

  it('escapes contexts one-to-one, with no braces and no colons left', () => {
    expect(escapeContext('GET /boards/{board}/top')).toBe('GET /boards/%7Bboard%7D/top');
    expect(escapeContext('GET /boards/:board')).toBe('GET /boards/%3Aboard');
    fc.assert(
      fc.property(
        fc.stringMatching(/^[A-Za-z0-9_.:\- /{}]{1,30}$/),
        fc.stringMatching(/^[A-Za-z0-9_.:\- /{}]{1,30}$/),
        (a, b) => {
          expect(escapeContext(a)).not.toMatch(/[{}:]/);
          if (a !== b) expect(escapeContext(a)).not.toBe(escapeContext(b));
        },
      ),
    );
  });

  it('index members round-trip', () => {
    expect(parseIndexMember(indexMember('GET /a:b', 'x:y'))).toEqual({ context: 'GET /a:b', type: 'x:y' });
  });

  it('route contexts are valid contexts', () => {
    expect(routeContext('GET', '/boards/:board/top')).toBe('GET /boards/:board/top');
    expect(routeContext('GET', undefined)).toBe('GET {unmatched}');
    expect(routeContext('GET', '/docs/*')).toBe('GET /docs/{wildcard}');
    expect(isContext(routeContext('POST', `/${'x'.repeat(300)}`))).toBe(true);
    expect(isContext(routeContext('GET', '/a/:b(^\\d+$)'))).toBe(true);
  });
});
