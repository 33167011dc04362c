import fc from 'fast-check';
import type { LookupRow } from '../core/ranking.types';
import { relativeRanks } from './lookup.service';

const row = (item: string, score: number, rank: number | null): LookupRow => ({
  item,
  score,
  rank,
  previousRank: null,
});

describe('relativeRanks', () => {
  it('competition ranks among the ids by score; null where the window holds nothing', () => {
    const rows = [row('a', 5, 3), row('b', 0, null), row('c', 9, 1), row('d', 5, 3), row('e', -2, null)];
    expect(relativeRanks(rows, false).map((r) => r.rank)).toEqual([2, null, 1, 2, null]);
  });

  it('strict ranks by board rank on a ties: first board', () => {
    const rows = [row('a', 5, 4), row('c', 9, 1), row('d', 5, 3)];
    expect(relativeRanks(rows, true).map((r) => r.rank)).toEqual([3, 1, 2]);
  });

  it('equals the brute-force count of rows ranked before (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: -3, max: 6 }), { maxLength: 30 }), (scores) => {
        const rows = scores.map((score, i) => row(`i${i}`, score, score > 0 ? 1 : null));
        const expected = rows.map((r) => (r.score > 0 ? 1 + rows.filter((o) => o.score > r.score).length : null));
        expect(relativeRanks(rows, false).map((r) => r.rank)).toEqual(expected);
      }),
    );
  });
});
