import { InvalidInputError } from '../../common/errors';
import { PreparedBoard } from './board';
import { MAX_SHARDED_DEPTH_ITEMS } from './ranking.limits';
import { RANKING_MESSAGES as M } from './ranking.messages';
import type { RankedRow, Standing } from './ranking.types';
import type { RisingPhase, ViewMode } from '../options/views/trending-math';
import { WindowConfig, windowSpan } from './window-math';

/** What every read of a window or a view answers around its rows. */
export interface WindowFigures {
  board: string;
  window: string;
  /** Start of the oldest live slot and end of the current one (unix s): the span the figures cover; null on an all-time window. */
  from: number | null;
  to: number | null;
  /** True while an expired slot larger than one chunk is still being subtracted. */
  draining: boolean;
  /** A view's mode (absent for a window). */
  mode?: ViewMode;
  /** A calendar window's time zone (its period runs from local midnight to local midnight). */
  timeZone?: string;
}

/** A listed row as answered; a view's row keeps no snapshots (previousRank null), rising rows add their figures. */
export interface ViewRowAnswer extends RankedRow {
  observed?: number;
  expected?: number;
  phase?: RisingPhase;
  since?: number;
  /** wilson, controversial: the item's counts of the view's positive and negative metrics. */
  metrics?: Record<string, number>;
}

/** A page of a window, a span or a view, as answered. */
export type PageAnswer = WindowFigures & { items: ViewRowAnswer[] };

/** An item with its neighbours (`item` the one asked), as answered. */
export type AroundAnswer = PageAnswer & { item: string };

/** A page asked: `limit` rows from rank `offset` + 1. */
export interface PageAsk {
  offset: number;
  limit: number;
}

/** An item asked with up to `radius` neighbours on each side. */
export interface AroundAsk {
  item: string;
  radius: number;
}

export function figures(board: string, window: WindowConfig, nowMs: number, draining: boolean): WindowFigures {
  const span = window.allTime ? { fromSec: null, toSec: null } : windowSpan(nowMs, window);
  const zone = window.calendar ? { timeZone: window.calendar.timeZone } : {};
  return { board, window: window.name, from: span.fromSec, to: span.toSec, ...zone, draining };
}

/** Share of the other ranked items ranked after this one, in percent (100: the top): follows the rank, strict on a `ties: first` board. */
export function percentileOf(standing: Standing, ranked: number): number | null {
  if (standing.rank === null) return null;
  if (ranked <= 1) return 100;
  return Math.round(((ranked - standing.rank) / (ranked - 1)) * 10000) / 100;
}

/** Every shard sends its head down to offset + limit: bounded, so one request cannot make them all send millions of rows. */
export function checkPageDepth(board: PreparedBoard, page: PageAsk): void {
  if (board.sharded && page.offset + page.limit > MAX_SHARDED_DEPTH_ITEMS)
    throw new InvalidInputError(M.shardedPageTooDeep(MAX_SHARDED_DEPTH_ITEMS));
}
