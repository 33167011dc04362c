import fc from 'fast-check';
import {
  compareListed,
  compareUtf8,
  groupByShard,
  mergeHeads,
  mergeListings,
  maxRowsRead,
  mergeShardHeads,
  rankRows,
  shardOf,
} from './shard-math';
import type { ScoredItem } from './ranking.types';

describe('shardOf', () => {
  it('is stable: the same id always lands on the same shard (FNV-1a of the UTF-8 bytes)', () => {
    expect(shardOf('a', 1)).toBe(0);
    // FNV-1a 32 of "a" is 0xe40c292c.
    expect(shardOf('a', 64)).toBe(0xe40c292c % 64);
    expect(shardOf('é', 7)).toBe(shardOf('é', 7));
  });

  it('hashes the UTF-8 bytes of any id, ASCII or not (a shard assignment never moves)', () => {
    const byBytes = (id: string, shards: number) => {
      let hash = 0x811c9dc5;
      for (const byte of Buffer.from(id, 'utf8')) hash = Math.imul(hash ^ byte, 0x01000193) >>> 0;
      return hash % shards;
    };
    // FNV-1a 32 of "foobar" is 0xbf9cf968.
    expect(shardOf('foobar', 1_000_003)).toBe(0xbf9cf968 % 1_000_003);
    fc.assert(
      fc.property(
        fc.oneof(fc.string(), fc.string({ unit: 'binary' })),
        fc.integer({ min: 2, max: 1024 }),
        (id, shards) => {
          expect(shardOf(id, shards)).toBe(byBytes(id, shards));
        },
      ),
    );
    for (const id of ['post-42', 'café', 'x\u{1F600}y', 'a\uD800b', '\u00e9t\u00e9'])
      expect(shardOf(id, 97)).toBe(byBytes(id, 97));
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

  it('compares ids in the byte order of their UTF-8 encodings, astral characters included', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), fc.string({ unit: 'grapheme' }), (a, b) => {
        expect(Math.sign(compareUtf8(a, b))).toBe(Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8')));
      }),
      { numRuns: 2000 },
    );
    expect(Math.sign(compareUtf8('\u{1F600}', '\uFFFD'))).toBe(1);
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

  it("mergeHeads keeps each listing's own order among equal scores, and a shallower merge is a prefix of a deeper one", () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(fc.integer({ min: 1, max: 3 }), { maxLength: 8 }), { minLength: 1, maxLength: 3 }),
        fc.nat({ max: 8 }),
        (scores, cut) => {
          // Each listing in score order, equal scores in an order of its own (not the ids' order).
          const listings = scores.map((list, l) =>
            [...list].sort((a, b) => b - a).map((score, i) => ({ item: `${l}-${9 - i}`, score })),
          );
          const merged = mergeHeads(listings);
          listings.forEach((rows, l) => expect(merged.filter((row) => row.item.startsWith(`${l}-`))).toEqual(rows));
          expect(merged.map((row) => row.score)).toEqual(merged.map((row) => row.score).sort((a, b) => b - a));
          const shallow = mergeHeads(listings.map((rows) => rows.slice(0, cut)));
          expect(merged.slice(0, Math.min(cut, shallow.length))).toEqual(
            shallow.slice(0, Math.min(cut, shallow.length)),
          );
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

describe('mergeShardHeads (progressive top of a sharded board)', () => {
  /** Shards as sorted listings, and a reader over them that counts what it is asked for. */
  function shardsOf(rows: ScoredItem[], shardOfRow: (row: ScoredItem, i: number) => number, shards: number) {
    const listings: ScoredItem[][] = Array.from({ length: shards }, () => []);
    rows.forEach((row, i) => listings[shardOfRow(row, i)].push(row));
    for (const listing of listings) listing.sort(compareListed);
    const read = (shard: number, from: number, count: number) =>
      Promise.resolve(listings[shard].slice(from, from + count));
    return { listings, read };
  }

  const rowArb = (maxScore: number) =>
    fc.uniqueArray(
      fc.record({ item: fc.string({ minLength: 1, maxLength: 4 }), score: fc.integer({ min: 1, max: maxScore }) }),
      {
        selector: (row) => row.item,
        maxLength: 300,
      },
    );

  it('answers exactly the first rows of the unsharded listing, ties included, whatever the spread', async () => {
    await fc.assert(
      fc.asyncProperty(
        rowArb(6),
        fc.integer({ min: 2, max: 16 }),
        fc.integer({ min: 1, max: 400 }),
        fc.constantFrom('hash', 'one shard', 'by score', 'random'),
        fc.array(fc.nat(), { minLength: 300, maxLength: 300 }),
        async (rows, shards, depth, spread, randoms) => {
          const place = {
            hash: (row: ScoredItem) => shardOf(row.item, shards),
            'one shard': () => 0,
            'by score': (row: ScoredItem) => row.score % shards,
            random: (_: ScoredItem, i: number) => randoms[i] % shards,
          }[spread];
          const { read } = shardsOf(rows, place, shards);
          const { rows: merged, rowsRead } = await mergeShardHeads(shards, depth, read);
          expect(merged).toEqual([...rows].sort(compareListed).slice(0, depth));
          expect(rowsRead).toBeLessThanOrEqual(maxRowsRead(depth, shards));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('reads about the depth plus a margin per shard when ids are hashed, and never more than depth rows of a shard', async () => {
    const rows = Array.from({ length: 64 * 2000 }, (_, i) => ({ item: `post-${i}`, score: 1 + (i % 5000) }));
    const asked: number[] = new Array(64).fill(0);
    const { read } = shardsOf(rows, (row) => shardOf(row.item, 64), 64);
    const counting = (shard: number, from: number, count: number) => {
      asked[shard] += count;
      return read(shard, from, count);
    };
    const { rows: merged, rowsRead } = await mergeShardHeads(64, 10_000, counting);
    expect(merged).toEqual([...rows].sort(compareListed).slice(0, 10_000));
    expect(rowsRead).toBeLessThan(14_000);
    for (const count of asked) expect(count).toBeLessThanOrEqual(10_000);
  });

  it('catches up a shard holding the whole top in a few rounds', async () => {
    const rows = Array.from({ length: 20_000 }, (_, i) => ({ item: `i${i}`, score: 20_000 - i }));
    const { read } = shardsOf(rows, (_, i) => (i < 10_000 ? 0 : 1 + (i % 63)), 64);
    let rounds = 0;
    let lastFrom = -1;
    const counting = (shard: number, from: number, count: number) => {
      if (shard === 0 && from !== lastFrom) {
        rounds++;
        lastFrom = from;
      }
      return read(shard, from, count);
    };
    const { rows: merged, rowsRead } = await mergeShardHeads(64, 10_000, counting);
    expect(merged).toEqual(rows.slice(0, 10_000));
    expect(rounds).toBeLessThanOrEqual(4);
    expect(rowsRead).toBeLessThan(25_000);
  });

  it('stays within maxRowsRead when the top is laid out in blocks over the shards (the costliest layouts found)', async () => {
    for (const block of [300, 1200, 2500, 10_000]) {
      const rows = Array.from({ length: 200_000 }, (_, i) => ({
        item: `i${String(i).padStart(7, '0')}`,
        score: 200_000 - i,
      }));
      const { read } = shardsOf(rows, (_, i) => Math.floor(i / block) % 64, 64);
      const { rows: merged, rowsRead } = await mergeShardHeads(64, 10_000, read);
      expect(merged).toEqual(rows.slice(0, 10_000));
      expect(rowsRead).toBeLessThanOrEqual(maxRowsRead(10_000, 64));
    }
    // 640 000 rows: what asking every shard for its head down to the depth would read.
    expect(maxRowsRead(10_000, 64)).toBeLessThan(160_000);
  });
});
