import type { ViewRowAnswer, WindowFigures } from './answers';
import type { PreparedBoard } from './board';
import type { ViewConfig } from '../options/views/trending-math';

/** A filtered read of a view: its page, and the distinct actors an item needs in the view's window. */
export interface ViewFilterAsk {
  offset: number;
  limit: number;
  minActors: number;
  /** Told the calls of each round past the route's first read. */
  admit?: (calls: number) => void;
}

/** A filtered page of a view: rows as the view answers them, with their view rank. */
export type ViewFilterPage = WindowFigures & { mode?: string; items: ViewRowAnswer[]; truncated: boolean };

/**
 * The views slice's filtered read (`minActors` with `window=<view>`), as the filters slice asks it:
 * declared here so that neither slice imports the other (RankingCoreModule binds it to ViewsService).
 */
export abstract class ViewFilterReader {
  abstract filtered(board: PreparedBoard, view: ViewConfig, nowMs: number, ask: ViewFilterAsk): Promise<ViewFilterPage>;
}
