import fc from 'fast-check';
import { byBytes, firstNames } from './name-pages';

/** Lists as the buckets hold them (sorted, disjoint), and a fetch that counts the names it sends. */
function buckets(names: string[], lists: number, bucketOf: (name: string) => number) {
  const sorted = [...new Set(names)].sort(byBytes);
  const held = Array.from({ length: lists }, (_, list) => sorted.filter((name) => bucketOf(name) === list));
  let sent = 0;
  const fetch = async (list: number, after: string, count: number) => {
    const page = held[list].filter((name) => after === '' || byBytes(name, after) > 0).slice(0, count);
    sent += page.length;
    return page;
  };
  return { sorted, fetch, sent: () => sent };
}

const hashed = (lists: number) => (name: string) =>
  [...Buffer.from(name)].reduce((h, byte) => (h * 31 + byte) >>> 0, 7) % lists;

describe('firstNames', () => {
  it('answers the first names of the union after the cursor, whatever the spread', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.string({ minLength: 1, maxLength: 4 }), { maxLength: 300 }),
        fc.integer({ min: 1, max: 16 }),
        fc.integer({ min: 1, max: 400 }),
        fc.option(fc.string({ minLength: 1, maxLength: 3 }), { nil: undefined }),
        fc.boolean(),
        async (names, lists, depth, cursor, skewed) => {
          // Skewed: every name in one list, the worst case for the first shares.
          const { sorted, fetch } = buckets(names, lists, skewed ? () => 0 : hashed(lists));
          const expected = sorted.filter((name) => cursor === undefined || byBytes(name, cursor) > 0).slice(0, depth);
          expect(await firstNames(lists, depth, cursor ?? '', fetch)).toEqual(expected);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('reads about the depth in all when the names are hashed, not the depth from every list', async () => {
    const names = Array.from({ length: 20_000 }, (_, i) => `counter-${i}`);
    const { fetch, sent } = buckets(names, 16, hashed(16));
    expect(await firstNames(16, 2000, '', fetch)).toHaveLength(2000);
    expect(sent()).toBeLessThan(2000 * 1.5);
  });
});
