import { Injectable } from '@nestjs/common';
import { PreparedBoard } from '../core/board';
import { checkPageDepth, figures, percentileOf, ViewRowAnswer, WindowFigures } from '../core/answers';
import type { WindowConfig } from '../core/window-math';
import { ReadsStore } from './reads.store';

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
    return {
      ...figures(board.config.name, window, nowMs, draining),
      item,
      score: standing.score,
      rank: standing.rank,
      percentile: percentileOf(standing, ranked),
    };
  }

  /** A page of the board's live segments: after the name `cursor`, or from `offset` (names in byte order). */
  async segments(board: PreparedBoard, nowMs: number, page: { offset: number; limit: number; cursor?: string }) {
    const rows = await this.store.segments(board, nowMs, page.cursor ?? '', page.offset + page.limit);
    const segments = rows.slice(page.offset);
    const nextCursor = segments.length === page.limit ? segments[segments.length - 1].name : null;
    return { board: board.config.name, segments, nextCursor };
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
