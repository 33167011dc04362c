import type { PreparedBoard, ShardKeys } from '../core/board';

/**
 * The keys increments coalesce under: one per shard, config version and second (a metric's windows are
 * other keys of the shard, PreparedBoard.metric, so its increments share no call with another's). Each
 * shard's key of its latest second is kept: a key built for every increment cost it the string and,
 * in the coalescer's map lookup, its flattening.
 */
export class CoalescingKeys {
  private readonly latest = new WeakMap<ShardKeys, { board: PreparedBoard; second: number; key: string }>();

  of(board: PreparedBoard, shard: ShardKeys, nowMs: number): string {
    const second = Math.floor(nowMs / 1000);
    const known = this.latest.get(shard);
    if (known !== undefined && known.second === second && known.board === board) return known.key;
    const key = `${shard.incrementKeys[1]}\n${board.config.version}\n${second}`;
    this.latest.set(shard, { board, second, key });
    return key;
  }
}
