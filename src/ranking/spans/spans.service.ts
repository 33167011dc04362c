import { Injectable } from '@nestjs/common';
import { checkPageDepth, percentileOf } from '../core/answers';
import type { AroundAnswer, AroundAsk, PageAsk, ViewRowAnswer } from '../core/answers';
import { PreparedBoard } from '../core/board';
import type { ListedItem } from '../core/ranking.types';
import { spanFigures, spanRead } from '../core/span-read';
import type { WindowConfig } from '../core/window-math';
import { SpansStore } from './spans.store';

/**
 * Reads of a rolling window over a span chosen at read time (`?span=`): its newest span / interval
 * slots. Answered like the window's own reads; `from`/`to` cover the span; rows carry no previous
 * rank (snapshots are of the whole window).
 */
@Injectable()
export class SpansService {
  constructor(private readonly store: SpansStore) {}

  async top(board: PreparedBoard, window: WindowConfig, nowMs: number, span: string, page: PageAsk) {
    checkPageDepth(board, page);
    const read = spanRead(board, window, nowMs, span);
    const { rows } = await this.store.top(read, page.offset, page.limit);
    return { ...spanFigures(read), items: withoutPreviousRanks(rows) };
  }

  async item(board: PreparedBoard, window: WindowConfig, nowMs: number, span: string, item: string) {
    const read = spanRead(board, window, nowMs, span);
    const standing = await this.store.item(read, item);
    return {
      ...spanFigures(read),
      item,
      score: standing.score,
      rank: standing.rank,
      percentile: percentileOf(standing, standing.listed),
      // A score the span would list without a rank: moderation leaves the item out.
      ...(standing.rank === null && standing.score > 0 ? { hidden: true as const } : {}),
    };
  }

  async around(
    board: PreparedBoard,
    window: WindowConfig,
    nowMs: number,
    span: string,
    around: AroundAsk,
  ): Promise<AroundAnswer> {
    const read = spanRead(board, window, nowMs, span);
    const { rows } = await this.store.around(read, around.item, around.radius);
    return { ...spanFigures(read), item: around.item, items: withoutPreviousRanks(rows) };
  }
}

function withoutPreviousRanks(rows: ListedItem[]): ViewRowAnswer[] {
  return rows.map((row) => ({ ...row, previousRank: null }));
}
