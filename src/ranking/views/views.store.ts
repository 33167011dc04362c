import { Injectable } from '@nestjs/common';
import { AppConfig } from '../../common/config';
import { InvalidInputError } from '../../common/errors';
import { RedisService } from '../../redis/redis.service';
import { PreparedBoard, ShardKeys } from '../core/board';
import { guard } from '../core/ranking.errors';
import { MAX_SHARDED_DEPTH_ITEMS } from '../core/ranking.limits';
import { RANKING_MESSAGES as M } from '../core/ranking.messages';
import type { ViewListing, ViewRow } from '../core/ranking.types';
import { boardCall } from '../core/script-call';
import { mergeShardHeads, rankRows } from '../core/shard-math';
import type { ViewConfig } from '../core/trending-math';
import { ViewRead, ViewReply } from './views.functions';
import { RANKING } from '../ranking.functions';

const S = RANKING.functions;

/** A read of one view of a board at one time. */
export interface ViewSource {
  board: PreparedBoard;
  view: ViewConfig;
  nowMs: number;
}

/** One item of a view: its row (absent when not listed), board-wide rank and the listed items. */
export interface ViewStanding {
  draining: boolean;
  landmarkSec: number;
  row: ViewRow | undefined;
  rank: number | null;
  listed: number;
}

/** Ranks view rows like rankRows (competition ranks on the rank score), keeping each row's figures. */
function rankViewRows(
  rows: ViewRow[],
  firstPosition: number,
  higherThanFirst: number,
): Array<ViewRow & { rank: number }> {
  return rankRows(rows, firstPosition, higherThanFirst).map((ranked, i) => ({ ...rows[i], rank: ranked.rank }));
}

/** View reads (read_view.lua), unsharded and merged over the shards by rank score. */
@Injectable()
export class ViewsStore {
  private readonly budgetFields: number;

  constructor(
    private readonly redis: RedisService,
    config: AppConfig,
  ) {
    this.budgetFields = config.EXPIRE_CHUNK;
    redis.defineFunctions([RANKING.library]);
  }

  /** A page of a view: like top, merged over the shards by rank score (every shard rebased to the same landmark). */
  async viewTop(source: ViewSource, offset: number, limit: number): Promise<ViewListing> {
    const { board } = source;
    if (!board.sharded) {
      const reply = await this.readView(source, board.shards[0], { op: 'top', offset, limit });
      return {
        draining: reply.draining,
        landmarkSec: reply.landmarkSec,
        rows: rankViewRows(reply.rows, reply.a, reply.b),
      };
    }
    const depth = offset + limit;
    let draining = false;
    let landmarkSec = 0;
    const { rows } = await mergeShardHeads(board.shards.length, depth, async (shard, from, count) => {
      this.redis.admit();
      const reply = await this.readView(source, board.shards[shard], { op: 'top', offset: from, limit: count });
      draining ||= reply.draining;
      landmarkSec = reply.landmarkSec;
      return reply.rows;
    });
    return { draining, landmarkSec, rows: rankViewRows(rows, 0, 0).slice(offset, depth) };
  }

  /** One item of a view: its row (absent when not listed), board-wide rank and the listed items. */
  async viewItem(source: ViewSource, item: string): Promise<ViewStanding> {
    const { board } = source;
    const home = board.shardOf(item);
    const own = await this.readView(source, home, { op: 'item', item });
    const row = own.rows[0];
    let { draining } = own;
    let above = own.a - 1;
    let listed = own.b;
    if (board.sharded) {
      const rankScore = row?.score ?? 0;
      const others = await Promise.all(
        board.shards
          .filter((shard) => shard !== home)
          .map((shard) => this.readView(source, shard, { op: 'count', rankScore })),
      );
      for (const other of others) {
        draining ||= other.draining;
        above += other.a;
        listed += other.b;
      }
    }
    return { draining, landmarkSec: own.landmarkSec, row, rank: row === undefined ? null : above + 1, listed };
  }

  /**
   * An item of a view with up to `radius` neighbours on each side. A sharded board reads the page of the
   * board listing around the item's rank (bounded like a deep top page).
   */
  async viewAround(source: ViewSource, item: string, radius: number): Promise<ViewListing> {
    const { board } = source;
    if (!board.sharded) {
      const reply = await this.readView(source, board.shards[0], { op: 'around', item, radius });
      const rows = reply.a === -1 ? [] : rankViewRows(reply.rows, reply.a, reply.b);
      return { draining: reply.draining, landmarkSec: reply.landmarkSec, rows };
    }
    const own = await this.viewItem(source, item);
    if (own.rank === null) return { draining: own.draining, landmarkSec: own.landmarkSec, rows: [] };
    // Items tied with it may come before it: read from radius rows above its rank to radius rows past the ties.
    const offset = Math.max(0, own.rank - 1 - radius);
    if (offset >= MAX_SHARDED_DEPTH_ITEMS) throw new InvalidInputError(M.shardedAroundTooDeep(MAX_SHARDED_DEPTH_ITEMS));
    const page = await this.viewTop(source, offset, Math.min(MAX_SHARDED_DEPTH_ITEMS - offset, 4 * radius + 1));
    const at = page.rows.findIndex((row) => row.item === item);
    const rows = at === -1 ? [] : page.rows.slice(Math.max(0, at - radius), at + radius + 1);
    return { draining: own.draining || page.draining, landmarkSec: page.landmarkSec, rows };
  }

  private readView(source: ViewSource, shard: ShardKeys, read: ViewRead): Promise<ViewReply> {
    const { board, view, nowMs } = source;
    const windows = [view.window, ...(view.baseline === undefined ? [] : [view.baseline])].map((name) =>
      board.window(name)!,
    );
    return guard(
      this.redis.callFunction(S.readView, {
        ...boardCall(board, shard, nowMs, this.budgetFields),
        view,
        windows,
        read,
      }),
    );
  }
}
