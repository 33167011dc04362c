import { parseSnapshotRows } from './history.functions';

describe('parseSnapshotRows (snapshot_lib.lua stores "\\x1e<item>\\x1f<score>[\\x1f<mark>][\\x1f<position>]" per row, best first)', () => {
  it('reads rows in order, ids with spaces and any printable character included', () => {
    expect(parseSnapshotRows('\x1epost 1\x1f12\x1eé/ü:x\x1f7\x1ez\x1f1e+17')).toEqual([
      { item: 'post 1', score: 12 },
      { item: 'é/ü:x', score: 7 },
      { item: 'z', score: 1e17 },
    ]);
  });

  it('reads rows that store their position (snapshots taken since positions were kept)', () => {
    expect(parseSnapshotRows('\x1ea\x1f12\x1f1\x1eb\x1f12\x1f2\x1ec\x1f3\x1f3')).toEqual([
      { item: 'a', score: 12 },
      { item: 'b', score: 12 },
      { item: 'c', score: 3 },
    ]);
  });

  it("reads a tiebreak board's rows with their marks (the row's tie, compared after the score)", () => {
    const mark = '1000000000000003';
    expect(parseSnapshotRows(`\x1ea\x1f12\x1f${mark}\x1f1\x1eb\x1f12\x1f${mark}007b\x1f2`)).toEqual([
      { item: 'a', score: 12, tie: mark },
      { item: 'b', score: 12, tie: `${mark}007b` },
    ]);
  });

  it('an empty snapshot (the window held nothing at the boundary) has no rows', () => {
    expect(parseSnapshotRows('')).toEqual([]);
  });
});
