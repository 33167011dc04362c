import { BoardConfig, PreparedBoard } from '../core/board';
import { RankingKeys } from '../core/ranking.keys';
import { CoalescingKeys } from './coalescing-keys';

const keys = new RankingKeys('tb:');

function boardOf(version: string, shards = 1): PreparedBoard {
  const config: BoardConfig = { name: 'b', version, shards, maxItems: null, windows: [], views: [] };
  return new PreparedBoard(config, (shard) => keys.board('b', shard));
}

/** The key the store built for each increment before it kept them: what a kept key must equal. */
const built = (board: PreparedBoard, shard: number, nowMs: number) =>
  `${board.shards[shard].incrementKeys[1]}\n${board.config.version}\n${Math.floor(nowMs / 1000)}`;

describe('CoalescingKeys', () => {
  it('answers the shard, version and second key, the same string within a second', () => {
    const board = boardOf('v1', 2);
    const coalescing = new CoalescingKeys();
    const first = coalescing.of(board, board.shards[1], 5_000);
    expect(first).toBe(built(board, 1, 5_000));
    expect(coalescing.of(board, board.shards[1], 5_999)).toBe(first);
    expect(coalescing.of(board, board.shards[0], 5_500)).toBe(built(board, 0, 5_500));
  });

  it('moves to the next second, and back to an earlier one', () => {
    const board = boardOf('v1');
    const coalescing = new CoalescingKeys();
    coalescing.of(board, board.shards[0], 5_000);
    expect(coalescing.of(board, board.shards[0], 6_000)).toBe(built(board, 0, 6_000));
    expect(coalescing.of(board, board.shards[0], 5_900)).toBe(built(board, 0, 5_900));
  });

  it('never answers one board version the key of another, on the same shard keys', () => {
    const before = boardOf('v1');
    const after = new PreparedBoard({ ...before.config, version: 'v2' }, () => before.shards[0].keys);
    const coalescing = new CoalescingKeys();
    expect(coalescing.of(before, before.shards[0], 5_000)).toBe(built(before, 0, 5_000));
    expect(coalescing.of(after, before.shards[0], 5_000)).toBe(built(after, 0, 5_000));
  });
});
