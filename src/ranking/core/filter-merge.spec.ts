import { absorb, newScan, place, ranked, ScanRow } from './filter-merge';

/** Marks of a board keeping pairs (tiebreak_lib): fixed width, greater for the better tiebreak on a desc board. */
const mark = (n: number) => String(n).padStart(16, '0');

describe('filtered merge of a board keeping (score, tiebreak) pairs', () => {
  it('a row waits while another shard may still hold a better pair of its score', () => {
    const [first, second] = [newScan<ScanRow>(), newScan<ScanRow>()];
    // The first shard scanned down to (5, 3) only: a row of (5, 2.5) may still follow there.
    absorb(first, {
      draining: false,
      rows: [],
      skipped: [5],
      skippedTies: [mark(3)],
      next: 1,
      ended: false,
      last: { item: 'a', score: 5, tie: mark(3) },
    });
    absorb(second, {
      draining: false,
      rows: [{ item: 'z', score: 5, group: '', tie: mark(2) }],
      skipped: [],
      next: 1,
      ended: true,
    });
    const accepted: ScanRow[] = [];
    place([first, second], accepted, new Map(), { depth: 10, perGroup: 0 }, false);
    expect(accepted).toEqual([]);
    // Compared by item id alone ('z' before 'a'), the row would have been placed.
    absorb(first, { draining: false, rows: [], skipped: [], next: 1, ended: true });
    place([first, second], accepted, new Map(), { depth: 10, perGroup: 0 }, false);
    expect(accepted.map((row) => row.item)).toEqual(['z']);
  });

  it.each([
    [false, [3, 1, 1, 4]],
    [true, [2, 3, 3, 1]],
  ])('ascending %s: ranks count better scores, then better marks; equal pairs share a rank', (ascending, ranks) => {
    const scan = newScan<ScanRow>();
    const rows: ScanRow[] = [
      { item: 'a', score: 5, group: '', tie: mark(2) },
      { item: 'b', score: 5, group: '', tie: mark(3) },
      { item: 'c', score: 5, group: '', tie: mark(3) },
      { item: 'd', score: 4, group: '', tie: mark(9) },
    ];
    absorb(scan, {
      draining: false,
      rows: [],
      skipped: rows.map((row) => row.score),
      skippedTies: rows.map((row) => row.tie!),
      next: 4,
      ended: true,
    });
    expect(ranked(rows, [scan], ascending).map((row) => row.rank)).toEqual(ranks);
  });

  // A sharded `ties: first` board's marks (ties_lib): one drain's mark then the id, compared as the
  // order zset compares members: bytes, where U+1F600 (F0 …) follows U+E000 (EE …), unlike UTF-16.
  it('strict marks rank in byte order, one rank a row', () => {
    const drain = '9'.repeat(30);
    const rows: ScanRow[] = [
      { item: '\u{1F600}', score: 5, group: '', tie: `${drain}\u{1F600}` },
      { item: '\uE000', score: 5, group: '', tie: `${drain}\uE000` },
    ];
    const scan = newScan<ScanRow>();
    absorb(scan, { draining: false, rows, skipped: [], next: 2, ended: true });
    expect(ranked(rows, [scan], false).map((row) => [row.item, row.rank])).toEqual([
      ['\u{1F600}', 1],
      ['\uE000', 2],
    ]);
  });
});
