import {
  bucketEdges,
  bucketsOf,
  narrowed,
  nearestRank,
  pickedScore,
  pickOf,
  probesOf,
  searchInBucket,
  searchRounds,
} from './spread-math';

describe('spread maths', () => {
  it('nearest ranks: ⌈p/100 × count⌉, at least 1', () => {
    expect([10, 25, 50, 75, 90, 99].map((p) => nearestRank(p, 4))).toEqual([1, 1, 2, 3, 4, 4]);
    expect(nearestRank(99, 100)).toBe(99);
    expect(nearestRank(10, 1)).toBe(1);
  });

  it('buckets: equal widths over [min, max], the last edge max itself, the last bucket inclusive', () => {
    const edges = bucketEdges(2, 9, 2);
    expect(edges).toEqual([2, 5.5, 9]);
    expect(bucketsOf(edges, [3], 4)).toEqual([
      { from: 2, to: 5.5, count: 3 },
      { from: 5.5, to: 9, count: 1 },
    ]);
    expect(bucketsOf(bucketEdges(7, 7, 3), [0, 0], 2).map((bucket) => bucket.count)).toEqual([0, 0, 2]);
  });

  it('a search starts in the bucket holding its rank and ends on the smallest score with that many up to it', () => {
    // Scores 2, 5, 5, 9: below 5.5 three of them.
    const edges = bucketEdges(2, 9, 2);
    const counted = { edges, below: [3], max: 9, count: 4 };
    expect(searchInBucket(3, counted)).toEqual({ rank: 3, lo: 2, hi: 5, under: 0, upToHi: 3 });
    expect(searchInBucket(4, counted)).toEqual({ rank: 4, lo: 6, hi: 9, under: 3, upToHi: 4 });
    const upTo = (score: number) => [2, 5, 5, 9].filter((s) => s <= score).length;
    let search = searchInBucket(2, counted);
    for (let round = 0; round <= searchRounds(search.lo, search.hi); round++) {
      const probes = probesOf(search);
      search = narrowed(search, probes, probes.map(upTo));
    }
    expect(search).toEqual({ rank: 2, lo: 5, hi: 5, under: 1, upToHi: 3 });
    expect(probesOf(search)).toEqual([]);
  });

  it("a pick reads a search's few items instead: the take-th lowest of every shard's lowest take", () => {
    const search = searchInBucket(2, { edges: bucketEdges(2, 9, 2), below: [3], max: 9, count: 4 });
    expect(pickOf(search, 2)).toBeUndefined();
    const pick = pickOf(search, 3);
    expect(pick).toEqual({ lo: 2, hi: 5, take: 2, held: 3 });
    // Shard one holds 5 and 9, shard two 2 and 5: their lowest two in [2, 5].
    expect(pickedScore(2, [5, 2, 5])).toBe(5);
    expect(pickedScore(2, [5])).toBeUndefined();
  });
});
