import { Injectable } from '@nestjs/common';
import { InvalidInputError, NotFoundError, WindowDrainingError } from '../../common/errors';
import { RankedSources } from '../boards/board-cache';
import { MAX_READ_DRAIN_CALLS } from '../core/ranking.limits';
import { RANKING_MESSAGES as M } from '../core/ranking.messages';
import { CALENDAR_MESSAGES } from '../options/calendar/calendar.limits';
import type { PreparedBoard } from '../core/board';
import type { HistoryPoint, ListedItem, SnapshotListing } from '../core/ranking.types';
import type { WindowConfig } from '../core/window-math';
import { HistoryStore } from './history.store';
import { itemPointMetrics } from './metric-counts';

/** An item's history page; `hidden`: moderation leaves the item out now (every rank null, scores kept). */
export interface ItemHistoryAnswer {
  board: string;
  window: string;
  item: string;
  points: HistoryPoint[];
  nextFrom: number | null;
  hidden?: true;
}

/**
 * An item history that met an archive being written (another metric's, or on a sharded board another
 * shard's of a period archived on the item's): RankedSources sends it again.
 */
const DRAINING = { draining: true } as const;

/** Snapshot reads as a client asks them: a window's listing at a time, an item's ranks through time. */
@Injectable()
export class HistoryService {
  constructor(
    private readonly store: HistoryStore,
    private readonly sources: RankedSources,
  ) {}

  /**
   * The window's snapshot at or before `atSec` (default: the latest): `from`/`to` are the span its
   * figures cover, the slot that closed at `at` and the period before it. With `segment`, the
   * segment's (segment_lib keeps its history as the board's).
   */
  async history(
    name: string,
    windowName: string | undefined,
    atSec: number | undefined,
    segment?: string,
    metric?: string,
    admit?: (reads: number) => void,
  ): Promise<{ board: string; window: string; at: number; from: number; to: number; items: HistoryRow[] }> {
    return this.sources.read(
      name,
      windowName,
      async (board, window, nowMs) => {
        // A calendar window's closed periods are its archives (their span is a period, not a slot).
        if (window.calendar)
          throw new NotFoundError('SNAPSHOT_NOT_FOUND', CALENDAR_MESSAGES.calendarKeepsArchives(name, window.name));
        const { keeps, listing } = await this.store.history(board, window, nowMs, atSec);
        const found: SnapshotListing = listing ?? missingSnapshot(name, window.name, keeps, atSec);
        return {
          board: name,
          window: window.name,
          at: found.atSec,
          from: found.atSec - window.periodSec,
          to: found.atSec,
          items: await this.withMetrics({ board, window, nowMs, metric, admit }, found),
        };
      },
      (_, view) => viewHasNoHistory(name, view),
      segment,
      metric,
      admit,
    );
  }

  /**
   * The rows of a board with metrics, each with `metrics`: every metric's count of the item at the
   * listing's boundary as that metric's own listing at the same boundary kept it (each metric's
   * windows keep their snapshots at the same boundaries; read as `?metric=` would, crossing a boundary
   * it is the first to): the ranked metric's is the row's score; another's is its listing's score of
   * the item, 0 when that listing holds fewer rows than it keeps (`top`) and not the item, and absent
   * when it is full without the item (below its kept rows) or has no listing at that boundary. One
   * history read per other metric (each a call per shard), each charged first (`admit`) as a read.
   */
  private async withMetrics(read: MetricsRead, found: SnapshotListing): Promise<HistoryRow[]> {
    const { board, window, nowMs, metric } = read;
    const names = board.config.metrics ?? [];
    if (names.length < 2) return found.items;
    read.admit?.(names.length - 1);
    const ranked = metric ?? names[0];
    const top = window.snapshots?.top ?? 0;
    const listings = await Promise.all(
      names.map(async (name): Promise<MetricListing> => {
        if (name === ranked)
          return { name, scores: new Map(found.items.map((row) => [row.item, row.score])), full: false };
        const { listing } = await this.store.history(board.metric(name), window, nowMs, found.atSec, { shown: false });
        if (listing?.atSec !== found.atSec) return { name, full: true };
        return {
          name,
          scores: new Map(listing.items.map((row) => [row.item, row.score])),
          full: listing.items.length >= top,
        };
      }),
    );
    return found.items.map((row) => ({ ...row, metrics: countsOf(row, listings) }));
  }

  /**
   * An item's rank and score in every kept snapshot from `fromSec` to `toSec` (default: all kept), oldest
   * first, a page at a time (HISTORY_ROWS_PER_CALL): `nextFrom` is the `from` of the next page, null
   * when the range is answered.
   */
  async itemHistory(
    name: string,
    windowName: string | undefined,
    item: string,
    fromSec: number | undefined,
    toSec: number | undefined,
    segment?: string,
    metric?: string,
    admit?: (reads: number) => void,
  ): Promise<ItemHistoryAnswer> {
    if (fromSec !== undefined && toSec !== undefined && fromSec > toSec)
      throw new InvalidInputError(M.historyRange(fromSec, toSec));
    const answer = await this.sources.read<ItemHistoryAnswer | typeof DRAINING>(
      name,
      windowName,
      async (board, window, nowMs) => {
        const range = { fromSec: fromSec ?? 0, toSec: toSec ?? Math.floor(nowMs / 1000) };
        const asked = { board, window, nowMs, item, ...range, admit };
        const { keeps, points, nextSec, hidden, draining: counting } = await this.store.itemHistory(asked);
        if (!keeps) missingSnapshot(name, window.name, false, undefined);
        if (counting) return DRAINING;
        const read = { board, window, nowMs, item, metric, admit };
        const { draining, metrics } = await itemPointMetrics(this.store, read, points);
        if (draining) return DRAINING;
        const counted = points.map((point, i) => (metrics[i] ? { ...point, metrics: metrics[i] } : point));
        const answer = { board: name, window: window.name, item, points: counted, nextFrom: nextSec };
        return hidden ? { ...answer, hidden: true } : answer;
      },
      (_, view) => viewHasNoHistory(name, view),
      segment,
      metric,
      admit,
    );
    if ('draining' in answer) throw new WindowDrainingError(M.windowDraining(name, MAX_READ_DRAIN_CALLS));
    return answer;
  }
}

/** A history listing's read, for the counts of its rows' other metrics. */
interface MetricsRead {
  board: PreparedBoard;
  window: WindowConfig;
  nowMs: number;
  metric?: string;
  /** Charges the reads of the other metrics' listings to the caller (throws when its budget lacks them). */
  admit?: (reads: number) => void;
}

/** A history row; on a board with metrics, with every metric's count as kept (withMetrics). */
export type HistoryRow = ListedItem & { metrics?: Record<string, number> };

/** A metric's listing at one boundary: its rows' scores, and whether it holds every row it may keep (`top`). */
interface MetricListing {
  name: string;
  scores?: Map<string, number>;
  full: boolean;
}

/** A row's `metrics` in the board's metric order: a count where the metric's listing tells it (see withMetrics). */
function countsOf(row: ListedItem, listings: MetricListing[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const { name, scores, full } of listings) {
    const count = scores?.get(row.item) ?? (scores && !full ? 0 : undefined);
    if (count !== undefined) counts[name] = count;
  }
  return counts;
}

/** A view is computed from its window on each read: it keeps no history, so the answer names the window. */
function viewHasNoHistory(board: string, view: { name: string; window: string }): never {
  throw new NotFoundError('SNAPSHOT_NOT_FOUND', M.viewKeepsNoHistory(board, view.name, view.window));
}

function missingSnapshot(board: string, window: string, keeps: boolean, atSec: number | undefined): never {
  throw new NotFoundError(
    'SNAPSHOT_NOT_FOUND',
    keeps ? M.noSnapshot(board, window, atSec) : M.keepsNoSnapshots(board, window),
  );
}
