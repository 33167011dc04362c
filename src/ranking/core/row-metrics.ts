import type { PreparedBoard } from './board';
import type { WindowConfig } from './window-math';

/** A window read's rows, each on a board with metrics with `metrics`: every metric's count in the window. */
export type RowsWithMetrics<R> = { draining: boolean; items: Array<R & { metrics?: Record<string, number> }> };

/**
 * What adds each metric's count to a window read's rows (the metrics option), for reads of any slice:
 * ReadsService provides it (ranking-core.module), so that its peers (filters, lookup) need not import it.
 */
export abstract class RowMetrics {
  /**
   * What withMetrics costs Redis for the rows of `items` on `board`: its count entries (one per row and
   * metric) and its calls (none on a board without metrics).
   */
  abstract metricsCost(board: PreparedBoard, items: readonly string[]): { entries: number; calls: number };

  abstract withMetrics<R extends { item: string }>(
    read: { board: PreparedBoard; window: WindowConfig; nowMs: number },
    result: { draining: boolean; items: R[] },
  ): Promise<RowsWithMetrics<R>>;
}
