import { boardOrder } from '../core/shard-math';
import { pagesWanted, type ShardSnapshot } from './snapshot-pages';

const window = { snapshots: { keep: 3, top: 4 } };
const order = boardOrder(false);

/** A shard's first page of `scores` (ids s<shard>-<n>), more pages after it unless `whole`. */
function shard(n: number, scores: number[], whole = false): ShardSnapshot {
  const rows = scores.map((score, k) => ({ item: `s${n}-${k}`, score }));
  return {
    keeps: true,
    snapshot: { atSec: 60, rows, leftOut: [] },
    page: whole ? undefined : { nextByte: 100, bytes: 200, seam: '' },
    pendingSec: null,
  };
}

describe('pagesWanted', () => {
  it('reads on every open shard while fewer rows than top are read', () => {
    expect(pagesWanted([shard(0, [9]), shard(1, [8]), shard(2, [7], true)], window, order)).toEqual([0, 1]);
  });

  it('reads on only the shards whose last row read is not behind the top-th by score', () => {
    expect(pagesWanted([shard(0, [9, 8, 7]), shard(1, [6, 5, 1]), shard(2, [4, 3])], window, order)).toEqual([0]);
  });

  it('reads on a shard whose last row ties the top-th score, whatever the ids', () => {
    expect(pagesWanted([shard(0, [9, 8, 6]), shard(1, [7, 6, 1])], window, order)).toEqual([0]);
    expect(pagesWanted([shard(0, [9, 8, 5]), shard(1, [7, 6, 6])], window, order)).toEqual([1]);
  });

  it('reads nothing once every shard is read whole', () => {
    expect(pagesWanted([shard(0, [9], true), shard(1, [8], true)], window, order)).toEqual([]);
  });
});
