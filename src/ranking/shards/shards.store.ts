import { Injectable } from '@nestjs/common';
import { isRedisWrongNodeError } from '../../common/redis-errors';
import { PreparedBoard, ShardKeys } from '../core/board';
import { guard } from '../core/ranking.errors';
import type { ShardCounts } from '../core/ranking.types';
import { boardCall } from '../core/script-call';
import type { WindowConfig } from '../core/window-math';
import { COUNT_SHARD_WEIGHT, LOOKUP_COUNTS_PER_CALL } from '../core/ranking.limits';
import { optionsCountWeight } from '../options/registry';
import { ShardsFunctions } from './shards.functions';
import { sliceStore } from '../core/slice-store';

/** What a count over shards asks: the items above each window's score, on every shard but `except`. */
export interface CountAbove {
  board: PreparedBoard;
  except: ShardKeys | undefined;
  windows: WindowConfig[];
  nowMs: number;
  scores: number[];
  /** Each score's tie mark (a sharded `ties: first` board): items of that score with an earlier mark count too. */
  marks?: string[];
  /** Whether each window's listed items are counted too (a read's percentile); a write's rank needs none (0s). */
  ranked: boolean;
}

/**
 * What one shard weighs in a count_above_shards call, in counts: each window's count above (as the
 * board's options weigh it), its check for expired slots and, when asked, its count of listed items
 * (a command each), and the shard's own reads (COUNT_SHARD_WEIGHT).
 */
export function shardCountWeight(count: Pick<CountAbove, 'board' | 'windows' | 'ranked'>): number {
  const perWindow = optionsCountWeight(count.board.config) + 1 + (count.ranked ? 1 : 0);
  return count.windows.length * perWindow + COUNT_SHARD_WEIGHT;
}

function sumCounts(windows: WindowConfig[], counts: ShardCounts[]): ShardCounts {
  return {
    draining: counts.some((count) => count.draining),
    above: windows.map((_, w) => counts.reduce((sum, count) => sum + count.above[w], 0)),
    ranked: windows.map((_, w) => counts.reduce((sum, count) => sum + count.ranked[w], 0)),
  };
}

/** Cross-shard counting for sharded boards: a board-wide rank is the item's shard's rank plus the others' counts. */
@Injectable()
export class ShardsStore extends sliceStore(ShardsFunctions) {
  /**
   * Sums, over every shard but `except`, the items above each window's score and the ranked items: one
   * count_above_shards call per Redis node serving some of them (one call on a single node), then one
   * count_above call for each shard that call could not count (expired data to drain first, or a node
   * that no longer serves it).
   */
  async countAbove(count: CountAbove): Promise<ShardCounts> {
    const shards = count.board.shards.filter((shard) => shard !== count.except);
    // A node's shards in calls of at most LOOKUP_COUNTS_PER_CALL weighted counts, in parallel and of
    // even sizes: a write's rank on 64 shards of 8 windows of `ties: first` was 4 calls of 680 commands.
    const perCall = Math.max(1, Math.floor(LOOKUP_COUNTS_PER_CALL / shardCountWeight(count)));
    const groups = this.redis.groupByNode(shards.map((shard) => shard.keys.cfg())).flatMap((group) => {
      const calls = Math.ceil(group.length / perCall);
      const size = Math.ceil(group.length / calls);
      return Array.from({ length: calls }, (_, c) => group.slice(c * size, (c + 1) * size));
    });
    const counts = await Promise.all(
      groups.map((group) =>
        this.countOnNode(
          count,
          group.map((i) => shards[i]),
        ),
      ),
    );
    return sumCounts(count.windows, counts);
  }

  private async countOnNode(count: CountAbove, shards: ShardKeys[]): Promise<ShardCounts> {
    const { board, windows, nowMs, scores, marks, ranked } = count;
    const counts: ShardCounts[] = [];
    let uncounted = shards;
    if (shards.length > 1) {
      try {
        const reply = await guard(
          this.functions.call(this.fns.countAboveShards, { board, shards, nowMs, windows, scores, marks, ranked }),
        );
        counts.push({ draining: false, above: reply.above, ranked: reply.ranked });
        uncounted = reply.pending;
      } catch (error) {
        if (!isRedisWrongNodeError(error)) throw error;
      }
    }
    const one = (shard: ShardKeys) =>
      guard(
        this.functions.call(this.fns.countAbove, {
          ...boardCall(board, shard, nowMs, this.budgetFields),
          windows,
          scores,
          marks,
        }),
      );
    counts.push(...(await Promise.all(uncounted.map(one))));
    return sumCounts(windows, counts);
  }
}
