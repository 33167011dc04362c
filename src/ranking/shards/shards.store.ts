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
  /**
   * How many shards with expired data to drain are drained before they count (count_above); the rest
   * count as they stand, their expired data too, and the answer is draining. Undefined: every one (a
   * read counts no expired data).
   */
  drainShards?: number;
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
   * count_above_shards call per Redis node serving some of them (a window whose every slot expired
   * counts nothing, drained or not), then one count_above call for each shard that call could not
   * count (expired data to drain first in a live window, or a node that no longer serves it), up to
   * `drainShards` of them; the rest counted as they stand, their expired data too (draining).
   */
  async countAbove(count: CountAbove): Promise<ShardCounts> {
    const shards = count.board.shards.filter((shard) => shard !== count.except);
    const settled = await Promise.all(this.callsByNode(count, shards).map((group) => this.countSettled(count, group)));
    const pending = settled.flatMap((part) => part.pending);
    const drained = pending.slice(0, count.drainShards ?? pending.length);
    const counts = await Promise.all([
      ...drained.map((shard) => this.drainAndCount(count, shard)),
      ...this.callsByNode(count, pending.slice(drained.length)).map((group) => this.countAsTheyStand(count, group)),
    ]);
    return sumCounts(count.windows, [...settled.map((part) => part.counts), ...counts]);
  }

  /**
   * `shards` grouped by the Redis node serving them, a node's in calls of at most LOOKUP_COUNTS_PER_CALL
   * weighted counts, of even sizes: a write's rank on 64 shards of 8 windows of `ties: first` was 4
   * calls of 680 commands.
   */
  private callsByNode(count: CountAbove, shards: ShardKeys[]): ShardKeys[][] {
    const perCall = Math.max(1, Math.floor(LOOKUP_COUNTS_PER_CALL / shardCountWeight(count)));
    return this.redis.groupByNode(shards.map((shard) => shard.keys.cfg())).flatMap((group) => {
      const calls = Math.ceil(group.length / perCall);
      const size = Math.ceil(group.length / calls);
      return Array.from({ length: calls }, (_, c) => group.slice(c * size, (c + 1) * size).map((i) => shards[i]));
    });
  }

  /** The counts of the shards (of one node) with no expired slots, and the shards it could not count. */
  private async countSettled(
    count: CountAbove,
    shards: ShardKeys[],
  ): Promise<{ counts: ShardCounts; pending: ShardKeys[] }> {
    try {
      const reply = await this.countShards(count, shards, false);
      return { counts: { draining: false, above: reply.above, ranked: reply.ranked }, pending: reply.pending };
    } catch (error) {
      if (!isRedisWrongNodeError(error)) throw error;
      return { counts: sumCounts(count.windows, []), pending: shards };
    }
  }

  /**
   * The counts of shards (of one node) left to drain past a write's drains, counted as they stand: a
   * shard holding expired data makes them draining. Shard by shard (drained) when the node no longer
   * serves them.
   */
  private async countAsTheyStand(count: CountAbove, shards: ShardKeys[]): Promise<ShardCounts> {
    try {
      const reply = await this.countShards(count, shards, true);
      return { draining: reply.pending.length > 0, above: reply.above, ranked: reply.ranked };
    } catch (error) {
      if (!isRedisWrongNodeError(error)) throw error;
      return sumCounts(count.windows, await Promise.all(shards.map((shard) => this.drainAndCount(count, shard))));
    }
  }

  private countShards(count: CountAbove, shards: ShardKeys[], asTheyStand: boolean) {
    const { board, windows, nowMs, scores, marks, ranked } = count;
    const call = { board, shards, nowMs, windows, scores, marks, ranked, asTheyStand };
    return guard(this.functions.call(this.fns.countAboveShards, call));
  }

  /** One shard's counts after its expired data is drained (count_above: as much as one call drains). */
  private drainAndCount(count: CountAbove, shard: ShardKeys): Promise<ShardCounts> {
    const { board, windows, nowMs, scores, marks } = count;
    const call = { ...boardCall(board, shard, nowMs, this.budgetFields), windows, scores, marks };
    return guard(this.functions.call(this.fns.countAbove, call));
  }
}
