import { MAX_ABS_VALUE } from './stats.limits';

/**
 * Pure maths of the stats feature (no Nest, no Redis): the hour of a sample, a DDSketch-style
 * log-bucket histogram for quantiles, and numerically stable moments (Welford / Chan) for the
 * standard deviation. The Lua scripts store exactly what these functions compute.
 */

export const HOUR_SEC = 3600;

/** Relative accuracy of the quantiles: an estimate is within 1 % of the exact value at that rank. */
export const RELATIVE_ACCURACY = 0.01;
/** gamma = (1 + a) / (1 - a): bucket i holds |v| in (gamma^(i-1), gamma^i]. */
export const GAMMA = (1 + RELATIVE_ACCURACY) / (1 - RELATIVE_ACCURACY);
const LN_GAMMA = Math.log(GAMMA);

/** |v| below this goes to the zero bucket (its quantile estimate is 0). */
export const MIN_INDEXABLE = 1e-9;
/** |v| above this shares the top bucket (the estimate is then bounded by the recorded max/min). */
export const MAX_INDEXABLE = 1e12;
export const MIN_INDEX = Math.ceil(Math.log(MIN_INDEXABLE) / LN_GAMMA);
export const MAX_INDEX = Math.ceil(Math.log(MAX_INDEXABLE) / LN_GAMMA);

/** Start (unix s) of the UTC hour that holds `nowMs`. */
export function hourStartOf(nowMs: number): number {
  return Math.floor(nowMs / 1000 / HOUR_SEC) * HOUR_SEC;
}

export function isRecordableValue(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && Math.abs(value) <= MAX_ABS_VALUE;
}

/** Bucket index of |v| (v != 0): ceil(log(|v|) / log(gamma)), clamped to the indexable range. */
export function bucketIndex(absValue: number): number {
  const index = Math.ceil(Math.log(absValue) / LN_GAMMA);
  return Math.min(MAX_INDEX, Math.max(MIN_INDEX, index));
}

/** The value a bucket stands for: 2 gamma^i / (gamma + 1), within RELATIVE_ACCURACY of everything in it. */
export function bucketValue(index: number): number {
  return (2 * Math.pow(GAMMA, index)) / (GAMMA + 1);
}

/**
 * Histogram field of a value as stored in Redis: `z` (|v| < MIN_INDEXABLE), `p<i>` (positive) or `n<i>`
 * (negative, i the index of |v|).
 */
export function bucketField(value: number): string {
  const abs = Math.abs(value);
  if (abs < MIN_INDEXABLE) return 'z';
  const fields = value > 0 ? POSITIVE_FIELDS : NEGATIVE_FIELDS;
  const at = bucketIndex(abs) - MIN_INDEX;
  return (fields[at] ??= `${value > 0 ? 'p' : 'n'}${at + MIN_INDEX}`);
}

/**
 * bucketField's strings by index from MIN_INDEX, made once: every answered request files its duration
 * by one (the access-time recorder), and a string made anew is hashed anew by the histogram's Map.
 */
const POSITIVE_FIELDS: Array<string | undefined> = new Array<string | undefined>(MAX_INDEX - MIN_INDEX + 1);
const NEGATIVE_FIELDS: Array<string | undefined> = new Array<string | undefined>(MAX_INDEX - MIN_INDEX + 1);

/** A histogram: field (as bucketField) -> count. */
export type Histogram = Map<string, number>;

export function addToHistogram(histogram: Histogram, value: number, count = 1): void {
  const field = bucketField(value);
  histogram.set(field, (histogram.get(field) ?? 0) + count);
}

export function mergeHistograms(into: Histogram, from: Histogram): void {
  for (const [field, count] of from) into.set(field, (into.get(field) ?? 0) + count);
}

/** Sort position of a field: negatives by descending index, then zero, then positives by ascending index. */
function fieldOrder(field: string): number {
  if (field === 'z') return 0;
  const index = Number(field.slice(1));
  return field[0] === 'p' ? 1e6 + index : -1e6 - index;
}

function fieldValue(field: string): number {
  if (field === 'z') return 0;
  const value = bucketValue(Number(field.slice(1)));
  return field[0] === 'p' ? value : -value;
}

export function isHistogramField(field: string): boolean {
  return field === 'z' || /^[pn]-?\d+$/.test(field);
}

/**
 * Quantiles q in [0, 1] of a histogram, each an estimate of the sorted sample at rank floor(q (n - 1))
 * within RELATIVE_ACCURACY (|v| in [MIN_INDEXABLE, MAX_INDEXABLE]), clamped to [min, max] when given
 * (and the recorded max/min itself when the rank falls in the bucket of everything above MAX_INDEXABLE).
 * Null when the histogram is empty.
 */
export function quantiles(
  histogram: Histogram,
  qs: number[],
  bounds?: { min: number; max: number },
): Array<number | null> {
  const buckets = [...histogram].filter(([, count]) => count > 0).sort(([a], [b]) => fieldOrder(a) - fieldOrder(b));
  const total = buckets.reduce((sum, [, count]) => sum + count, 0);
  return qs.map((q) => {
    if (total === 0) return null;
    const rank = Math.floor(Math.min(1, Math.max(0, q)) * (total - 1));
    let seen = 0;
    let estimate = fieldValue(buckets[buckets.length - 1][0]);
    for (const [field, count] of buckets) {
      seen += count;
      if (seen > rank) {
        estimate = fieldValue(field);
        // The clamped end buckets hold everything beyond MAX_INDEXABLE: the recorded extreme is better.
        if (bounds && field === `p${MAX_INDEX}`) estimate = bounds.max;
        if (bounds && field === `n${MAX_INDEX}`) estimate = bounds.min;
        break;
      }
    }
    return bounds ? Math.min(bounds.max, Math.max(bounds.min, estimate)) : estimate;
  });
}

/** Count, sum, sum of squares, min, max, and the running mean and M2 (sum of squared deviations). */
export interface Moments {
  count: number;
  sum: number;
  sumsq: number;
  min: number;
  max: number;
  mean: number;
  m2: number;
}

export function emptyMoments(): Moments {
  return { count: 0, sum: 0, sumsq: 0, min: Infinity, max: -Infinity, mean: 0, m2: 0 };
}

/** Welford's update: adds one value. */
export function addValue(m: Moments, value: number): void {
  m.count += 1;
  m.sum += value;
  m.sumsq += value * value;
  if (value < m.min) m.min = value;
  if (value > m.max) m.max = value;
  const delta = value - m.mean;
  m.mean += delta / m.count;
  m.m2 += delta * (value - m.mean);
}

/** Chan et al.'s parallel combination: adds a batch's moments (the Lua merge script does the same). */
export function mergeMoments(into: Moments, from: Moments): void {
  if (from.count === 0) return;
  if (into.count === 0) {
    Object.assign(into, from);
    return;
  }
  const count = into.count + from.count;
  const delta = from.mean - into.mean;
  into.mean += (delta * from.count) / count;
  into.m2 += from.m2 + (delta * delta * into.count * from.count) / count;
  into.count = count;
  into.sum += from.sum;
  into.sumsq += from.sumsq;
  into.min = Math.min(into.min, from.min);
  into.max = Math.max(into.max, from.max);
}

/** Sample standard deviation from M2: never negative or NaN; null below two samples. */
export function sampleStddev(m: Pick<Moments, 'count' | 'm2'>): number | null {
  if (m.count < 2) return null;
  const variance = m.m2 / (m.count - 1);
  return variance > 0 && Number.isFinite(variance) ? Math.sqrt(variance) : 0;
}

/**
 * The textbook formula from count, sum and sum of squares, only for comparison: it cancels
 * catastrophically (large equal values give a negative variance), which is why M2 is stored.
 */
export function naiveVariance(m: Pick<Moments, 'count' | 'sum' | 'sumsq'>): number {
  return (m.sumsq - (m.sum * m.sum) / m.count) / (m.count - 1);
}
