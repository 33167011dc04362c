/**
 * The arithmetic of a window's score distribution, apart from Redis: bucket edges, nearest ranks and
 * the bisection that finds a quantile over many shards. Scores in a window are integers (sums of
 * integer amounts, recorded integer scores), which the bisection relies on.
 */

/** The quantiles a distribution answers, each by its percent. */
export const QUANTILES = [
  ['p10', 10],
  ['p25', 25],
  ['p50', 50],
  ['p75', 75],
  ['p90', 90],
  ['p99', 99],
] as const;

export type QuantileName = (typeof QUANTILES)[number][0];
export type Quantiles = Record<QuantileName, number | null>;

/** One bucket: [from, to), the last one [from, to]. */
export interface Bucket {
  from: number;
  to: number;
  count: number;
}

/**
 * The nearest rank of a quantile: the 1-based position, lowest score first, of the score that is the
 * quantile (⌈percent/100 × count⌉). Integer arithmetic first, so 99 × count / 100 never rounds across
 * an integer.
 */
export function nearestRank(percent: number, count: number): number {
  return Math.max(1, Math.ceil((percent * count) / 100));
}

/** The n + 1 edges splitting [min, max] into n equal widths (the last edge is max itself). */
export function bucketEdges(min: number, max: number, buckets: number): number[] {
  const edges = Array.from({ length: buckets }, (_, i) => min + ((max - min) * i) / buckets);
  return [...edges, max];
}

/** The bounds a shard counts up to for the buckets: below each inner edge (ZCOUNT's "(edge"). */
export function bucketBounds(edges: readonly number[]): string[] {
  return edges.slice(1, -1).map((edge) => `(${edge}`);
}

/** The buckets from the edges, the listed items below each inner edge (summed over shards) and the total. */
export function bucketsOf(edges: readonly number[], below: readonly number[], total: number): Bucket[] {
  const cumulative = [0, ...below, total];
  return edges.slice(0, -1).map((from, i) => ({ from, to: edges[i + 1], count: cumulative[i + 1] - cumulative[i] }));
}

/** One quantile's search: the answer lies in [lo, hi] (held scores), the smallest score with `rank` items up to it. */
export interface Bisection {
  rank: number;
  lo: number;
  hi: number;
}

/** Rounds a bisection over integer scores of range [min, max] takes at most. */
export function bisectionRounds(min: number, max: number): number {
  return Math.ceil(Math.log2(max - min + 1));
}

/** The score a round asks the shards to count up to (inclusive); undefined once the search is done. */
export function probeOf(search: Bisection): number | undefined {
  if (search.lo >= search.hi) return undefined;
  return Math.min(search.hi - 1, search.lo + Math.floor((search.hi - search.lo) / 2));
}

/** The search narrowed by the listed items up to `probe` (summed over the shards). */
export function narrowed(search: Bisection, probe: number, upTo: number): Bisection {
  return upTo >= search.rank ? { ...search, hi: probe } : { ...search, lo: probe + 1 };
}
