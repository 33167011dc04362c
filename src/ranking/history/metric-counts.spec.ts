import { BoardConfig, PreparedBoard } from '../core/board';
import { RankingKeys } from '../core/ranking.keys';
import { SHARDS_PER_BOARD } from '../core/ranking.limits';
import { METRICS_PER_BOARD } from '../options/metrics/metrics.option';
import type { NodesOf } from './listing-counts';
import { fittingPages, type ArchiveRows } from './metric-counts';

const keys = new RankingKeys('tb:');

function boardOf(shards: number): PreparedBoard {
  const config: BoardConfig = { name: 'b', version: 'v', shards, maxItems: null, windows: [], views: [] };
  return new PreparedBoard(config, (shard) => keys.board('b', shard));
}

/** `periods` archive pages of `rows` rows each. */
const pagesOf = (periods: number, rows: number): ArchiveRows[] =>
  Array.from({ length: periods }, (_, p) => ({
    atSec: 86_400 * p,
    rows: Array.from({ length: rows }, (_, r) => ({ item: `i${r}`, score: rows - r })),
  }));

const rowsOf = (pages: ArchiveRows[]) => pages.map((page) => page.rows.length);
/** One node serving every shard (a single Redis). */
const oneNode: NodesOf = (shards) => [shards.map((_, i) => i)];

describe('fittingPages: the rows of an archive page whose other metrics fit the read', () => {
  const others = METRICS_PER_BOARD.max - 1;

  it('keeps every row of an unsharded board', () => {
    expect(rowsOf(fittingPages(boardOf(1), pagesOf(3, 1000), others, oneNode))).toEqual([1000, 1000, 1000]);
  });

  it('answers at least the first row of the most metrics on the most shards', () => {
    const board = boardOf(SHARDS_PER_BOARD.max);
    expect(rowsOf(fittingPages(board, pagesOf(1, 1), others, oneNode))).toEqual([1]);
    expect(rowsOf(fittingPages(board, pagesOf(3, 100), others, oneNode))).toEqual([2]);
  });

  it('cuts to whole periods first, then to the first rows of the next', () => {
    const board = boardOf(SHARDS_PER_BOARD.max);
    expect(rowsOf(fittingPages(board, pagesOf(3, 10), 2, oneNode))).toEqual([10, 10]);
    expect(rowsOf(fittingPages(board, pagesOf(2, 40), 2, oneNode))).toEqual([expect.any(Number)]);
    const [cut] = fittingPages(board, pagesOf(1, 40), 2, oneNode);
    expect(cut.rows).toEqual(pagesOf(1, 40)[0].rows.slice(0, cut.rows.length));
    expect(cut.rows.length).toBeGreaterThan(20);
    expect(cut.rows.length).toBeLessThan(40);
  });
});
