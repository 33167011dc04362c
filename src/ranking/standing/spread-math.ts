/**
 * The arithmetic of a window's score distribution, apart from Redis: bucket edges, nearest ranks and
 * the search that finds a quantile over many shards. Scores in a window are integers (sums of
 * integer amounts, recorded integer scores), which the search relies on.
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

/** Scores each round of a quantile's search counts up to: each round cuts its interval into PROBES + 1 parts. */
export const PROBES_PER_QUANTILE = 8;

/**
 * One quantile's search: the answer lies in [lo, hi] (held scores), the smallest score with `rank`
 * items up to it; `under` items score below lo and `upToHi` up to hi (summed over the shards).
 */
export interface Search {
  rank: number;
  lo: number;
  hi: number;
  under: number;
  upToHi: number;
}

/** Rounds a search over integer scores of range [min, max] takes at most. */
export function searchRounds(min: number, max: number): number {
  return Math.ceil(Math.log(max - min + 1) / Math.log(PROBES_PER_QUANTILE + 1));
}

/** The listed items' range and counts a search starts from: below each inner edge (summed over the shards). */
export interface Counted {
  edges: readonly number[];
  below: readonly number[];
  max: number;
  count: number;
}

/**
 * Where a quantile's search starts: the bucket holding its rank. Integer scores below an edge e are
 * those up to ⌈e⌉ - 1.
 */
export function searchInBucket(rank: number, { edges, below, max, count }: Counted): Search {
  const cumulative = [0, ...below, count];
  let bucket = cumulative.length - 2;
  while (bucket > 0 && cumulative[bucket] >= rank) bucket--;
  const hi = bucket + 2 < cumulative.length ? Math.ceil(edges[bucket + 1]) - 1 : max;
  return { rank, lo: Math.ceil(edges[bucket]), hi, under: cumulative[bucket], upToHi: cumulative[bucket + 1] };
}

/** The scores a round counts up to (inclusive), evenly inside [lo, hi - 1]; none once the search is done. */
export function probesOf(search: Search): number[] {
  const { lo, hi } = search;
  const probes = new Set<number>();
  for (let j = 1; j <= PROBES_PER_QUANTILE && lo < hi; j++) {
    const probe = lo + Math.floor(((hi - lo) * j) / (PROBES_PER_QUANTILE + 1));
    probes.add(Math.min(hi - 1, Math.max(lo, probe)));
  }
  return [...probes];
}

/** The search narrowed by the listed items up to each probe (summed over the shards). */
export function narrowed(search: Search, probes: readonly number[], upTo: readonly number[]): Search {
  let { lo, hi, under, upToHi } = search;
  probes.forEach((probe, i) => {
    if (upTo[i] >= search.rank && probe <= hi) [hi, upToHi] = [probe, upTo[i]];
    else if (upTo[i] < search.rank && probe >= lo) [lo, under] = [probe + 1, upTo[i]];
  });
  return { ...search, lo, hi, under, upToHi };
}

/**
 * A search's answer read instead of searched: each shard's lowest `take` scores in [lo, hi] (the
 * union's take-th lowest is the answer). Only when its `held` items in [lo, hi] are at most `most`
 * (what reading them may cost), else undefined.
 */
export function pickOf(
  search: Search,
  most: number,
): { lo: number; hi: number; take: number; held: number } | undefined {
  const held = search.upToHi - search.under;
  if (search.lo >= search.hi || held > most) return undefined;
  return { lo: search.lo, hi: search.hi, take: search.rank - search.under, held };
}

/** The answer from a pick's scores over every shard (undefined: fewer than `take`, the data moved). */
export function pickedScore(take: number, scores: readonly number[]): number | undefined {
  return [...scores].sort((a, b) => a - b)[take - 1];
}
