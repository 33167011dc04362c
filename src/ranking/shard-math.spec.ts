import fc from 'fast-check';
import { compareListed, groupByShard, mergeListings, rankRows, shardOf } from './shard-math';

describe('shardOf', () => {
  it('is stable: the same id always lands on the same shard (FNV-1a of the UTF-8 bytes)', () => {
    expect(shardOf('a', 1)).toBe(0);
    // FNV-1a 32 of "a" is 0xe40c292c.
    expect(shardOf('a', 64)).toBe(0xe40c292c % 64);
    expect(shardOf('é', 7)).toBe(shardOf('é', 7));
  });

  it('stays in range and spreads ids over every shard', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), fc.integer({ min: 1, max: 64 }), (id, shards) => {
        const shard = shardOf(id, shards);
        expect(Number.isInteger(shard) && shard >= 0 && shard < shards).toBe(true);
      }),
    );
    const counts = new Array(8).fill(0);
    for (let i = 0; i < 8000; i++) counts[shardOf(`post-${i}`, 8)]++;
    for (const count of counts) expect(count).toBeGreaterThan(800);
  });
});

describe('board order and ranks', () => {
  it('orders by score, then by descending bytes of the id (Redis ZREVRANGE order)', () => {
    const rows = [
      { item: 'a', score: 2 },
      { item: 'é', score: 2 },
      { item: 'z', score: 2 },
      { item: 'b', score: 5 },
    ];
    // "é" is 0xC3 0xA9 in UTF-8: above "z" (0x7A) by bytes.
    expect([...rows].sort(compareListed).map((r) => r.item)).toEqual(['b', 'é', 'z', 'a']);
  });

  it('merges listings that are each sorted into one sorted listing', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({ item: fc.string({ minLength: 1, maxLength: 3 }), score: fc.integer({ min: 1, max: 5 }) }),
          { maxLength: 30 },
        ),
        fc.integer({ min: 1, max: 4 }),
        (rows, parts) => {
          const unique = [...new Map(rows.map((r) => [r.item, r])).values()];
          const listings = Array.from({ length: parts }, (_, k) =>
            unique.filter((_, i) => i % parts === k).sort(compareListed),
          );
          expect(mergeListings(listings)).toEqual([...unique].sort(compareListed));
        },
      ),
    );
  });

  it('gives competition ranks from the first row position and the count above it', () => {
    const rows = [
      { item: 'x', score: 7 },
      { item: 'y', score: 7 },
      { item: 'z', score: 4 },
    ];
    expect(rankRows(rows, 0, 0).map((r) => r.rank)).toEqual([1, 1, 3]);
    // A page starting at position 5 inside a tie that began at position 3.
    expect(rankRows(rows, 5, 3).map((r) => r.rank)).toEqual([4, 4, 8]);
  });

  it('groups entries by shard, keeping their order', () => {
    const entries = ['a', 'b', 'a', 'c'].map((item, i) => ({ item, amount: i + 1 }));
    const groups = groupByShard(entries, 3);
    expect([...groups.values()].flat()).toHaveLength(4);
    expect(
      groups
        .get(shardOf('a', 3))!
        .filter((e) => e.item === 'a')
        .map((e) => e.amount),
    ).toEqual([1, 3]);
    expect([...groupByShard(entries, 1).keys()]).toEqual([0]);
  });
});
