import { Injectable } from '@nestjs/common';
import { PreparedBoard } from '../core/board';
import { checkPageDepth, figures, percentileOf } from '../core/answers';
import type { AroundAnswer, AroundAsk, PageAnswer, PageAsk } from '../core/answers';
import type { WindowConfig } from '../core/window-math';
import { ReadsStore, type WindowRead } from './reads.store';
import { RowMetrics, RowsWithMetrics } from '../core/row-metrics';
import { RequestTooCostlyError } from '../../common/errors';
import { SEGMENT_PAGE_UNITS_PER_CALL, SEGMENT_PAGE_UNITS_PER_REQUEST } from '../options/segments/segments.limits';
import { SEGMENTS_MESSAGES } from '../options/segments/segments.option';

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
export class ReadsService implements RowMetrics {
  constructor(private readonly store: ReadsStore) {}

  async top(board: PreparedBoard, window: WindowConfig, nowMs: number, page: PageAsk): Promise<PageAnswer> {
    checkPageDepth(board, page);
    const result = await this.withMetrics(
      { board, window, nowMs },
      await this.store.top({ board, window, nowMs }, page.offset, page.limit),
    );
    return { ...figures(board.config.name, window, nowMs, result.draining), items: result.items };
  }

  async item(board: PreparedBoard, window: WindowConfig, nowMs: number, item: string) {
    // hidden: held at a score the window lists (a max / min / last board's 0 or below too) and left out
    // by moderation.
    const { draining, standing, ranked, hidden } = await this.store.item({ board, window, nowMs }, item);
    const { score, rank, tiebreak } = standing;
    const answer = { draining, items: [{ item, score, rank, ...(tiebreak === undefined ? {} : { tiebreak }) }] };
    const { draining: late, items } = await this.withMetrics({ board, window, nowMs }, answer);
    return {
      ...figures(board.config.name, window, nowMs, late),
      ...items[0],
      percentile: percentileOf(standing, ranked),
      ...(hidden ? { hidden: true as const } : {}),
    };
  }

  metricsCost(board: PreparedBoard, items: readonly string[]): { entries: number; calls: number } {
    return this.store.metricsCost(board, items);
  }

  /**
   * The rows, on a board with metrics, each with `metrics`: every metric's count in the window (the
   * metrics option); draining when some metric's window still holds expired data.
   */
  async withMetrics<R extends { item: string }>(
    read: WindowRead,
    result: { draining: boolean; items: R[] },
  ): Promise<RowsWithMetrics<R>> {
    const names = read.board.config.metrics;
    if (!names || result.items.length === 0) return result;
    const { draining, counts } = await this.store.metricCounts(
      read,
      result.items.map((row) => row.item),
    );
    const items = result.items.map((row) => {
      const of = counts.get(row.item) ?? [];
      return { ...row, metrics: Object.fromEntries(names.map((name, m) => [name, of[m] ?? 0])) };
    });
    return { draining: result.draining || draining, items };
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
      throw new RequestTooCostlyError(
        SEGMENTS_MESSAGES.segmentOffsetTooDeep(board.config.name, page.offset, asked.rows.length),
      );
    const segments = asked.rows.slice(page.offset);
    const full = segments.length === page.limit ? segments[segments.length - 1].name : null;
    return { board: board.config.name, segments, nextCursor: asked.next ?? full };
  }

  async around(board: PreparedBoard, window: WindowConfig, nowMs: number, around: AroundAsk): Promise<AroundAnswer> {
    const read = { board, window, nowMs };
    const result = await this.withMetrics(read, await this.store.around(read, around.item, around.radius));
    return { ...figures(board.config.name, window, nowMs, result.draining), item: around.item, items: result.items };
  }
}
