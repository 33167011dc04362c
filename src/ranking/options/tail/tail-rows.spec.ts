import { tailRows } from './tail-rows';

/** A shard's answer: its hidden mass, whether it stopped full, its rows as item: [score, dropped], in order. */
const shard = (hidden: number, full: boolean, rows: Record<string, [score: number, dropped: number]>) => ({
  hidden,
  full,
  rows: Object.entries(rows).map(([item, [score, dropped]]) => ({ item, score, dropped })),
});

describe('tailRows: which rows of a tail board are exact', () => {
  it('certifies the head when nothing below may reach it, within the first `exact` rows', () => {
    const rows = tailRows([shard(1, false, { a: [50, 0], b: [30, 0], c: [2, 1] })], 2);
    expect(rows).toEqual([
      { item: 'a', score: 50, rank: 1, bound: 0 },
      { item: 'b', score: 30, rank: 2, bound: 0 },
      { item: 'c', score: 2, rank: 3, bound: 1 },
    ]);
  });

  it("refuses a row whose own count may lack something, or one a lower row's bound may pass", () => {
    const rows = tailRows([shard(0, false, { a: [10, 1], b: [9, 0], c: [8, 2] })], 3);
    expect(rows.map((row) => row.bound)).toEqual([1, 1, 2]);
  });

  it('merges shards, and bounds what a full shard left out by its last score plus its hidden mass', () => {
    const rows = tailRows([shard(2, true, { a: [20, 0], b: [5, 0] }), shard(0, false, { c: [6, 0] })], 3);
    expect(rows).toEqual([
      { item: 'a', score: 20, rank: 1, bound: 0 },
      { item: 'c', score: 6, rank: 2, bound: 1 },
      { item: 'b', score: 5, rank: 3, bound: 1 },
    ]);
  });
});
