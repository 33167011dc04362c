/**
 * The formulas of the metrics option's views (pure; metric_formulas.lua keeps the same maths in Lua,
 * and a test holds both equal). Counts below 0 (a sum taken down by negative increments) count as 0.
 */

/** z of the 95 % Wilson score interval. */
export const WILSON_Z = 1.96;

/** The count a formula reads: a window's sum, below 0 taken as 0. */
const counted = (count: number): number => Math.max(0, count);

/**
 * The lower bound of the Wilson score interval at 95 % (z = 1.96) of positive / (positive + negative):
 * 0 when positive is 0. Ranks "loved by many" above "loved by a few" at the same share.
 */
export function wilsonLowerBound(positive: number, negative: number): number {
  const p = counted(positive);
  // Exactly 0 without positives (the interval's maths would leave a rounding remainder).
  if (p === 0) return 0;
  const total = p + counted(negative);
  const share = p / total;
  const z2 = WILSON_Z * WILSON_Z;
  const centre = share + z2 / (2 * total);
  const spread = WILSON_Z * Math.sqrt((share * (1 - share) + z2 / (4 * total)) / total);
  return (centre - spread) / (1 + z2 / total);
}

/**
 * How argued about an item is: (p + n)^(min(p, n) / max(p, n)), 0 when either is 0. Many votes split
 * evenly rank highest; a one-sided item ranks 0 however many votes it has.
 */
export function controversy(positive: number, negative: number): number {
  const p = counted(positive);
  const n = counted(negative);
  if (p === 0 || n === 0) return 0;
  return Math.pow(p + n, Math.min(p, n) / Math.max(p, n));
}
