import type { ViewRowAnswer, WindowFigures } from './answers';
import type { PreparedBoard } from './board';
import type { ViewConfig } from '../options/views/trending-math';

/**
 * A filtered read of a view: its page, the distinct actors an item needs in the view's window (0: none),
 * at most perGroup rows of a group (0: no cap), without the excluded items and groups.
 */
export interface ViewFilterAsk {
  offset: number;
  limit: number;
  minActors: number;
  perGroup: number;
  excludeItems: readonly string[];
  excludeGroups: readonly string[];
  /** Told the calls of each round past the route's first read. */
  admit?: (calls: number) => void;
}

/** A filtered page of a view: rows as the view answers them, with their view rank and group. */
export type ViewFilterPage = WindowFigures & {
  mode?: string;
  items: Array<ViewRowAnswer & { group?: string }>;
  truncated: boolean;
};

/**
 * The views slice's filtered read (`window=<view>` with filters), as the filters slice asks it:
 * declared here so that neither slice imports the other (RankingCoreModule binds it to ViewsService).
 */
export abstract class ViewFilterReader {
  abstract filtered(board: PreparedBoard, view: ViewConfig, nowMs: number, ask: ViewFilterAsk): Promise<ViewFilterPage>;
}
