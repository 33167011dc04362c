import { Injectable } from '@nestjs/common';
import { PreparedBoard } from '../core/board';
import { checkPageDepth, figures, percentileOf, ViewRowAnswer, WindowFigures } from '../core/answers';
import type { WindowConfig } from '../core/window-math';
import { ReadsStore } from './reads.store';
import { RequestTooCostlyError } from '../../common/errors';
import { SEGMENT_PAGE_UNITS_PER_CALL, SEGMENT_PAGE_UNITS_PER_REQUEST } from '../core/ranking.limits';
import { RANKING_MESSAGES as M } from '../core/ranking.messages';

/** A page of segments as asked: `offset` names skipped, or the names after `cursor`. */
export type SegmentPageAsk = { offset: number; limit: number; cursor?: string };

/**
 * Units of one shard's segments call: its share of SEGMENT_PAGE_UNITS_PER_REQUEST, at least one drained
 * segment's (1 + 5 per window), at most SEGMENT_PAGE_UNITS_PER_CALL.
 */
export function segmentPageUnits(board: PreparedBoard): number {
  const share = Math.floor(SEGMENT_PAGE_UNITS_PER_REQUEST / board.shards.length);
  return Math.min(SEGMENT_PAGE_UNITS_PER_CALL, Math.max(1 + 5 * board.config.windows.length, share));
}

/** Window reads as a client asks them: the figures of the window's span around the rows. */
@Injectable()
export class ReadsService {
  constructor(private readonly store: ReadsStore) {}

  async top(
    board: PreparedBoard,
    window: WindowConfig,
    nowMs: number,
    page: { offset: number; limit: number },
  ): Promise<WindowFigures & { items: ViewRowAnswer[] }> {
    checkPageDepth(board, page.offset, page.limit);
    const result = await this.store.top({ board, window, nowMs }, page.offset, page.limit);
    return { ...figures(board.config.name, window, nowMs, result.draining), items: result.items };
  }

  async item(board: PreparedBoard, window: WindowConfig, nowMs: number, item: string) {
    const { draining, standing, ranked } = await this.store.item({ board, window, nowMs }, item);
    // A score the window would list without a rank: moderation leaves the item out (a max / min / last
    // board's item holding exactly 0 reads as not held).
    const anySign = (board.config.aggregate ?? 'sum') !== 'sum';
    const listable = standing.score > 0 || (anySign && standing.score !== 0);
    return {
      ...figures(board.config.name, window, nowMs, draining),
      item,
      score: standing.score,
      rank: standing.rank,
      percentile: percentileOf(standing, ranked),
      ...(standing.rank === null && listable ? { hidden: true as const } : {}),
    };
  }

  /**
   * A page of the board's live segments: after the name `cursor`, or from `offset` (names in byte
   * order). `admit` is told the page's units of work before any call (it may refuse: the read budget).
   * A page its work bound ends early answers fewer rows and a nextCursor; an offset it cannot reach is
   * a 422 naming the cursor.
   */
  async segments(board: PreparedBoard, nowMs: number, page: SegmentPageAsk, admit: (units: number) => void) {
    const units = segmentPageUnits(board);
    admit(units * board.shards.length);
    const asked = await this.store.segments(board, nowMs, page.cursor ?? '', page.offset + page.limit, units);
    if (page.offset > 0 && asked.rows.length <= page.offset && asked.next !== null)
      throw new RequestTooCostlyError(M.segmentOffsetTooDeep(board.config.name, page.offset, asked.rows.length));
    const segments = asked.rows.slice(page.offset);
    const full = segments.length === page.limit ? segments[segments.length - 1].name : null;
    return { board: board.config.name, segments, nextCursor: asked.next ?? full };
  }

  async around(
    board: PreparedBoard,
    window: WindowConfig,
    nowMs: number,
    around: { item: string; radius: number },
  ): Promise<WindowFigures & { item: string; items: ViewRowAnswer[] }> {
    const result = await this.store.around({ board, window, nowMs }, around.item, around.radius);
    return { ...figures(board.config.name, window, nowMs, result.draining), item: around.item, items: result.items };
  }
}
