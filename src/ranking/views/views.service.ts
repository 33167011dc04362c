import { Injectable } from '@nestjs/common';
import { checkPageDepth, figures, percentileOf } from '../core/answers';
import type { AroundAnswer, AroundAsk, PageAnswer, PageAsk, ViewRowAnswer, WindowFigures } from '../core/answers';
import { PreparedBoard } from '../core/board';
import type { ViewListing } from '../core/ranking.types';
import { decayedValue, risingOf, risingPhase, ViewConfig } from '../options/views/trending-math';
import { windowSpan } from '../core/window-math';
import { ViewsStore } from './views.store';
import { scanFiltered } from '../core/filter-merge';
import { ViewFilterAsk, ViewFilterPage, ViewFilterReader } from '../core/view-filter';
import { groupScan } from '../options/groups/groups.limits';

/** Trending views as a client reads them: decay as the decayed sum as of now, rising rows with their figures. */
@Injectable()
export class ViewsService implements ViewFilterReader {
  constructor(private readonly store: ViewsStore) {}

  /** A page of the view's items that pass the filters (minActors in its window, perGroup, exclusions), bounded as a window's scan. */
  async filtered(board: PreparedBoard, view: ViewConfig, nowMs: number, ask: ViewFilterAsk): Promise<ViewFilterPage> {
    const { offset, limit, minActors, perGroup, excludeItems, excludeGroups, admit } = ask;
    const plan = { shards: board.shards.length, offset, limit, perGroup, ascending: false, admit };
    const { scan, calls } = groupScan();
    const sent = { scan, want: offset + limit, minActors, perGroup, excludeItems, excludeGroups };
    let landmarkSec = 0;
    const page = await scanFiltered({ ...plan, calls }, async (shard, start, seen) => {
      const on = board.shards[shard];
      const reply = await this.store.viewFilterScan({ board, view, nowMs }, on, { start, seen, ...sent });
      landmarkSec = reply.landmarkSec;
      return reply;
    });
    const rows = viewRows(board, view, { landmarkSec, rows: page.rows }, nowMs);
    const items = rows.map((row, i) => (page.rows[i].group === '' ? row : { ...row, group: page.rows[i].group }));
    return { ...viewFigures(board, view, nowMs, page.draining), items, truncated: page.truncated };
  }

  async top(board: PreparedBoard, view: ViewConfig, nowMs: number, page: PageAsk): Promise<PageAnswer> {
    checkPageDepth(board, page);
    const listing = await this.store.viewTop({ board, view, nowMs }, page.offset, page.limit);
    return { ...viewFigures(board, view, nowMs, listing.draining), items: viewRows(board, view, listing, nowMs) };
  }

  async item(board: PreparedBoard, view: ViewConfig, nowMs: number, item: string) {
    const found = await this.store.viewItem({ board, view, nowMs }, item);
    const listing = { landmarkSec: found.landmarkSec, rows: found.row ? [{ ...found.row, rank: found.rank! }] : [] };
    const row = viewRows(board, view, listing, nowMs)[0];
    // Moderation leaves the item out: its figures, unranked, as a window's item read answers them.
    const hidden =
      found.hidden && viewRows(board, view, { ...listing, rows: [{ ...found.hidden, rank: 0 }] }, nowMs)[0];
    return {
      ...viewFigures(board, view, nowMs, found.draining),
      ...(row ?? (hidden ? { ...hidden, rank: null, hidden: true as const } : { item, score: 0, rank: null })),
      percentile: percentileOf({ score: row?.score ?? 0, rank: found.rank }, found.listed),
    };
  }

  async around(board: PreparedBoard, view: ViewConfig, nowMs: number, around: AroundAsk): Promise<AroundAnswer> {
    const listing = await this.store.viewAround({ board, view, nowMs }, around.item, around.radius);
    return {
      ...viewFigures(board, view, nowMs, listing.draining),
      item: around.item,
      items: viewRows(board, view, listing, nowMs),
    };
  }
}

/** A view's figures: the span of the window it reads (rising: the short one), and its mode. */
function viewFigures(board: PreparedBoard, view: ViewConfig, nowMs: number, draining: boolean): WindowFigures {
  const window = board.window(view.window)!;
  return { ...figures(board.config.name, window, nowMs, draining), window: view.name, mode: view.mode };
}

/**
 * A view's ranked rows as a client reads them: decay as the decayed sum as of now, rising with its figures,
 * wilson and controversial with the counts of their two metrics.
 */
function viewRows(
  board: PreparedBoard,
  view: ViewConfig,
  listing: Pick<ViewListing, 'landmarkSec' | 'rows'>,
  nowMs: number,
): ViewRowAnswer[] {
  const window = board.window(view.window)!;
  return listing.rows.map((row) => {
    const answer: ViewRowAnswer = {
      rank: row.rank,
      item: row.item,
      score: view.mode === 'decay' ? decayedValue(row.score, listing.landmarkSec, nowMs, view.halfLifeSec!) : row.score,
      previousRank: null,
    };
    if (row.rising) {
      const rising = risingOf(row.rising.observed, row.rising.baseline, view as Required<ViewConfig>);
      const elapsedSec = nowMs / 1000 - windowSpan(nowMs, window).toSec + window.intervalSec;
      answer.observed = row.rising.observed;
      answer.expected = rising.expected;
      answer.phase = risingPhase({ ...row.rising, isNew: rising.isNew, elapsedSec, intervalSec: window.intervalSec });
      answer.since = row.rising.sinceSec;
    }
    if (row.counts) answer.metrics = { [view.positive!]: row.counts.positive, [view.negative!]: row.counts.negative };
    return answer;
  });
}
