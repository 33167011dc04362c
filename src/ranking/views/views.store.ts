import { Injectable } from '@nestjs/common';
import { PreparedBoard, ShardKeys } from '../core/board';
import { guard } from '../core/ranking.errors';
import type { ViewListing, ViewRow } from '../core/ranking.types';
import { boardCall } from '../core/script-call';
import type { ScanReply, ScanRow } from '../core/filter-merge';
import { RankedReader, RankedSource } from '../core/ranked-reader';
import type { ViewConfig } from '../options/views/trending-math';
import { ViewFilters, ViewRead, ViewReply, ViewsFunctions } from './views.functions';
import { COUNTED_VIEW_ROWS_PER_CALL } from '../core/ranking.limits';
import { sliceStore } from '../core/slice-store';

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
  /** The item's row when moderation leaves it out of the view (its rank null). */
  hidden?: ViewRow;
}

/** A view as a ranked source, with the landmark its last answer was rebased to and the row of an item moderation left out. */
type ViewRankedSource = RankedSource<ViewRow> & { readonly landmarkSec: number; readonly hidden?: ViewRow };

/** View reads (read_view.lua) as a ranked source: the reader answers them on one shard or many, by rank score. */
@Injectable()
export class ViewsStore extends sliceStore(ViewsFunctions) {
  private readonly reader = new RankedReader(this.admit);

  /** A page of a view: like top, merged over the shards by rank score (every shard rebased to the same landmark). */
  async viewTop(source: ViewSource, offset: number, limit: number): Promise<ViewListing> {
    const ranked = this.sourceOf(source);
    const page = await this.reader.top(source.board, ranked, offset, limit);
    return { draining: page.draining, landmarkSec: ranked.landmarkSec, rows: page.rows };
  }

  /** One item of a view: its row (absent when not listed), board-wide rank and the listed items. */
  async viewItem(source: ViewSource, item: string): Promise<ViewStanding> {
    const ranked = this.sourceOf(source);
    const standing = await this.reader.item(source.board, ranked, item);
    const { draining, row, rank, listed } = standing;
    return { draining, landmarkSec: ranked.landmarkSec, row, rank, listed, hidden: ranked.hidden };
  }

  /** An item of a view with up to `radius` neighbours on each side (a sharded board: by its rank, RankedReader). */
  async viewAround(source: ViewSource, item: string, radius: number): Promise<ViewListing> {
    const ranked = this.sourceOf(source);
    const page = await this.reader.around(source.board, ranked, item, radius);
    return { draining: page.draining, landmarkSec: ranked.landmarkSec, rows: page.rows };
  }

  /** One filter scan of a view on `shard` (read_view's filter op): the rows that pass, each with its group ("": none). */
  async viewFilterScan(
    source: ViewSource,
    shard: ShardKeys,
    ask: { start: number; scan: number; want: number } & ViewFilters,
  ): Promise<ScanReply<ViewRow & ScanRow> & { landmarkSec: number }> {
    const reply = await this.readView(source, shard, { op: 'filter', ...ask });
    const { draining, landmarkSec, next, ended, skipped, last } = reply;
    const rows = reply.rows.map((row, i) => ({ ...row, group: reply.groups[i] ?? '' }));
    return { draining, landmarkSec, rows, next, ended, skipped, last };
  }

  private sourceOf(source: ViewSource): ViewRankedSource {
    let landmarkSec = 0;
    let hidden: ViewRow | undefined;
    const read = async (shard: ShardKeys, question: ViewRead) => {
      const reply = await this.readView(source, shard, question);
      landmarkSec = reply.landmarkSec;
      return reply;
    };
    return {
      get landmarkSec() {
        return landmarkSec;
      },
      get hidden() {
        return hidden;
      },
      head: (shard, offset, limit) =>
        this.headInCalls(source.view, (at, n) => read(shard, topOf(at, n)), offset, limit),
      standing: async (shard, item) => {
        const { draining, rows, rank, listed } = await read(shard, { op: 'item', item });
        // rank -1: moderation leaves the item out; its row is answered unranked.
        if (rank < 0) hidden = rows[0];
        const row = rank < 0 ? undefined : rows[0];
        return { draining, row, score: rows[0]?.score ?? 0, above: Math.max(0, rank - 1), listed };
      },
      countAbove: async (shards, rankScore) => {
        const counts = await Promise.all(shards.map((shard) => read(shard, { op: 'count', rankScore })));
        return {
          draining: counts.some((count) => count.draining),
          above: counts.reduce((sum, count) => sum + count.above, 0),
          listed: counts.reduce((sum, count) => sum + count.listed, 0),
        };
      },
      around: async (shard, item, radius) => {
        const { draining, rows, firstPosition, higherThanFirst } = await read(shard, { op: 'around', item, radius });
        return { draining, rows, firstPosition, higherThanFirst };
      },
    };
  }

  /**
   * A head page of one shard: one call, or for a view whose rows carry their counts (wilson,
   * controversial) calls of at most COUNTED_VIEW_ROWS_PER_CALL rows, one after the other until the page
   * is full, the listing ends or a call drains. The calls are not one snapshot: a write landing between
   * two of them shows in the later call's rows only.
   */
  private async headInCalls(
    view: ViewConfig,
    top: (offset: number, limit: number) => Promise<ViewReply>,
    offset: number,
    limit: number,
  ): Promise<{ draining: boolean; rows: ViewRow[]; higherThanFirst: number }> {
    const perCall = view.positive === undefined ? limit : COUNTED_VIEW_ROWS_PER_CALL;
    const first = await top(offset, Math.min(limit, perCall));
    const rows = [...first.rows];
    let draining = first.draining;
    for (let asked = perCall; !draining && asked < limit && rows.length === asked; asked += perCall) {
      const next = await top(offset + asked, Math.min(limit - asked, perCall));
      draining = next.draining;
      rows.push(...next.rows);
    }
    return { draining, rows, higherThanFirst: first.higherThanFirst };
  }

  private readView(source: ViewSource, shard: ShardKeys, read: ViewRead): Promise<ViewReply> {
    const { board, view, nowMs } = source;
    const call = { ...boardCall(board, shard, nowMs, this.budgetFields), view, read };
    if (view.positive !== undefined && view.negative !== undefined) {
      // A wilson or controversial view reads its window of each of its two metrics (metric_views_lib.lua).
      const index = board.shards.indexOf(shard);
      const sourceKeys = [view.positive, view.negative].map((metric) => board.metric(metric).shards[index].keys);
      const window = board.window(view.window)!;
      return guard(this.functions.call(this.fns.readView, { ...call, windows: [window, window], sourceKeys }));
    }
    const windows = [view.window, ...(view.baseline === undefined ? [] : [view.baseline])].map((name) =>
      board.window(name)!,
    );
    return guard(this.functions.call(this.fns.readView, { ...call, windows }));
  }
}

/** A top read of `limit` rows from `offset`. */
function topOf(offset: number, limit: number): ViewRead {
  return { op: 'top', offset, limit };
}
