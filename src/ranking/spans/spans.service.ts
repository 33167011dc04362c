import { Injectable } from '@nestjs/common';
import { InvalidInputError } from '../../common/errors';
import { parseDurationSec } from '../../common/duration';
import { checkPageDepth, figures, percentileOf } from '../core/answers';
import type { AroundAnswer, AroundAsk, PageAsk, ViewRowAnswer, WindowFigures } from '../core/answers';
import { PreparedBoard } from '../core/board';
import { RANKING_MESSAGES as M } from '../core/ranking.messages';
import type { ListedItem } from '../core/ranking.types';
import type { WindowConfig } from '../core/window-math';
import { SpanRead, SpansStore } from './spans.store';
import { keptScore } from '../options/registry';

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

/** The span as seconds, refused (400 naming it) unless a multiple of the window's interval and at most its period. */
function spanRead(board: PreparedBoard, window: WindowConfig, nowMs: number, span: string): SpanRead {
  if (window.calendar) throw new InvalidInputError(M.spanOnCalendar(board.config.name, window.name));
  if (window.allTime) throw new InvalidInputError(M.spanOnAllTime(board.config.name, window.name));
  // A span sums its slots: a window keeping a score of each item (max / min / last) holds no amounts to sum.
  const kept = keptScore(board.config);
  if (kept !== undefined) throw new InvalidInputError(M.spanNeedsSum(board.config.name, kept));
  const spanSec = parseDurationSec(span) ?? 0;
  if (spanSec <= 0 || spanSec % window.intervalSec !== 0 || spanSec > window.periodSec)
    throw new InvalidInputError(
      M.spanNotInWindow(board.config.name, window.name, spanSec, window.periodSec, window.intervalSec),
    );
  return { board, window, nowMs, spanSec };
}

/** A span's figures: those of a window whose period is the span (it never drains). */
function spanFigures(read: SpanRead): WindowFigures {
  return figures(read.board.config.name, { ...read.window, periodSec: read.spanSec }, read.nowMs, false);
}

function withoutPreviousRanks(rows: ListedItem[]): ViewRowAnswer[] {
  return rows.map((row) => ({ ...row, previousRank: null }));
}
