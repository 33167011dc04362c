import { Injectable } from '@nestjs/common';
import { AppConfig } from '../../common/config';
import { RedisService } from '../../redis/redis.service';
import { PreparedBoard, ShardKeys } from '../core/board';
import { guard } from '../core/ranking.errors';
import type { ListedItem, RankedRow, ScoredItem, Standing } from '../core/ranking.types';
import { BoardCall, boardCall } from '../core/script-call';
import { mergeListings, mergeShardHeads, rankRows } from '../core/shard-math';
import type { WindowConfig } from '../core/window-math';
import { HistoryStore } from '../history/history.store';
import { ShardsStore } from '../shards/shards.store';
import { ListingReply, SegmentRow } from './reads.functions';
import { RANKING } from '../ranking.functions';

const S = RANKING.functions;

/** A read of one window of a board at one time. */
export interface WindowRead {
  board: PreparedBoard;
  window: WindowConfig;
  nowMs: number;
}

/** Window reads, unsharded (one script call) and sharded (fan-out, merge, counts over the other shards). */
@Injectable()
export class ReadsStore {
  private readonly budgetFields: number;

  constructor(
    private readonly redis: RedisService,
    config: AppConfig,
    private readonly shards: ShardsStore,
    private readonly history: HistoryStore,
  ) {
    this.budgetFields = config.EXPIRE_CHUNK;
    redis.defineFunctions([RANKING.library]);
  }

  async top(read: WindowRead, offset: number, limit: number): Promise<{ draining: boolean; items: RankedRow[] }> {
    const { board, window, nowMs } = read;
    if (!board.sharded) {
      const reply = await this.readTop(read, board.shards[0], offset, limit);
      return { draining: reply.draining, items: withPreviousRanks(reply) };
    }
    // The board's head down to offset + limit, read progressively (mergeShardHeads): ranks count from the top.
    const depth = offset + limit;
    let draining = false;
    const [{ rows }, previous] = await Promise.all([
      mergeShardHeads(board.shards.length, depth, async (shard, from, count) => {
        this.redis.admit();
        const reply = await this.readTop(read, board.shards[shard], from, count);
        draining ||= reply.draining;
        return reply.rows;
      }),
      this.history.previousRanks(board, window, nowMs),
    ]);
    return { draining, items: rankedWith(rankRows(rows, 0, 0).slice(offset, depth), previous) };
  }

  async item(read: WindowRead, item: string): Promise<{ draining: boolean; standing: Standing; ranked: number }> {
    const { board, window, nowMs } = read;
    const home = board.shardOf(item);
    const own = await guard(this.redis.callFunction(S.readItem, { ...this.on(read, home), window, item }));
    if (!board.sharded) return own;
    const others = await this.shards.countAbove({
      board,
      except: home,
      windows: [window],
      nowMs,
      scores: [own.standing.score],
    });
    return {
      draining: own.draining || others.draining,
      standing: {
        score: own.standing.score,
        rank: own.standing.rank === null ? null : own.standing.rank + others.above[0],
      },
      ranked: own.ranked + others.ranked[0],
    };
  }

  async around(read: WindowRead, item: string, radius: number): Promise<{ draining: boolean; items: RankedRow[] }> {
    const { board, window } = read;
    if (!board.sharded) {
      const reply = await guard(
        this.redis.callFunction(S.readAround, { ...this.on(read, board.shards[0]), window, item, radius }),
      );
      return { draining: reply.draining, items: reply.firstPosition === -1 ? [] : withPreviousRanks(reply) };
    }
    const own = await guard(
      this.redis.callFunction(S.readItem, { ...this.on(read, board.shardOf(item)), window, item }),
    );
    const score = own.standing.score;
    if (score <= 0) return { draining: own.draining, items: [] };
    const around = await this.aroundOverShards(read, { item, score }, radius);
    return {
      draining: own.draining || around.draining,
      items: rankedWith(around.rows, await this.history.previousRanks(board, window, read.nowMs)),
    };
  }

  /** The item's neighbours on every shard, merged: up to `radius` rows each side, ranked board-wide. */
  private async aroundOverShards(
    read: WindowRead,
    pivot: ScoredItem,
    radius: number,
  ): Promise<{ draining: boolean; rows: ListedItem[] }> {
    const { board, window, nowMs } = read;
    const { item, score } = pivot;
    const replies = await Promise.all(
      board.shards.map((shard) =>
        guard(this.redis.callFunction(S.readNeighbours, { ...this.on(read, shard), window, item, score, radius })),
      ),
    );
    const position = replies.reduce((sum, reply) => sum + reply.position, 0);
    const above = replies.reduce((sum, reply) => sum + reply.above, 0);
    const before = mergeListings(replies.map((reply) => reply.before)).slice(-radius);
    const after = mergeListings(replies.map((reply) => reply.after))
      .filter((row) => row.score > 0)
      .slice(0, radius);
    const rows: ScoredItem[] = [...before, pivot, ...after];
    const firstPosition = position - before.length;
    let higherThanFirst = above;
    if (rows[0].score !== score)
      higherThanFirst =
        firstPosition === 0
          ? 0
          : (
              await this.shards.countAbove({
                board,
                except: undefined,
                windows: [window],
                nowMs,
                scores: [rows[0].score],
              })
            ).above[0];
    const draining = replies.some((reply) => reply.draining);
    return { draining, rows: rankRows(rows, firstPosition, higherThanFirst) };
  }

  /**
   * Up to `limit` of the board's live segments after `after` (byte order), each with the items it
   * holds over every shard (an item's segment rows live on the item's shard).
   */
  async segments(board: PreparedBoard, nowMs: number, after: string, limit: number): Promise<SegmentRow[]> {
    const pages = await Promise.all(
      board.shards.map((shard) =>
        guard(
          this.redis.callFunction(S.segmentPage, {
            ...boardCall(board, shard, nowMs, this.budgetFields),
            after,
            limit,
          }),
        ),
      ),
    );
    const items = new Map<string, number>();
    for (const row of pages.flat()) items.set(row.name, (items.get(row.name) ?? 0) + row.items);
    const names = [...items.keys()].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    return names.slice(0, limit).map((name) => ({ name, items: items.get(name) ?? 0 }));
  }

  private readTop(read: WindowRead, shard: ShardKeys, offset: number, limit: number): Promise<ListingReply> {
    return guard(this.redis.callFunction(S.readTop, { ...this.on(read, shard), window: read.window, offset, limit }));
  }

  private on(read: WindowRead, shard: ShardKeys): BoardCall {
    return boardCall(read.board, shard, read.nowMs, this.budgetFields);
  }
}

/** An unsharded listing's rows ranked, each with its previous rank as the script answered it. */
function withPreviousRanks(reply: ListingReply): RankedRow[] {
  return rankRows(reply.rows, reply.firstPosition, reply.higherThanFirst).map((row, i) => ({
    ...row,
    previousRank: reply.previousRanks[i],
  }));
}

function rankedWith(rows: ListedItem[], previous: Map<string, number>): RankedRow[] {
  return rows.map((row) => ({ ...row, previousRank: previous.get(row.item) ?? null }));
}
