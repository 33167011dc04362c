import { Injectable } from '@nestjs/common';
import { InvalidInputError, NotFoundError } from '../../common/errors';
import { RankedSources } from '../boards/ranked-sources';
import { RANKING_MESSAGES as M } from '../core/ranking.messages';
import { CALENDAR_MESSAGES } from '../options/calendar/calendar.limits';
import type { HistoryPoint, ListedItem, SnapshotListing } from '../core/ranking.types';
import { HistoryStore } from './history.store';

/** An item's history page; `hidden`: moderation leaves the item out now (every rank null, scores kept). */
export interface ItemHistoryAnswer {
  board: string;
  window: string;
  item: string;
  points: HistoryPoint[];
  nextFrom: number | null;
  hidden?: true;
}

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
  ): Promise<{ board: string; window: string; at: number; from: number; to: number; items: ListedItem[] }> {
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
          items: found.items,
        };
      },
      (_, view) => viewHasNoHistory(name, view),
      segment,
      metric,
    );
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
  ): Promise<ItemHistoryAnswer> {
    if (fromSec !== undefined && toSec !== undefined && fromSec > toSec)
      throw new InvalidInputError(M.historyRange(fromSec, toSec));
    return this.sources.read(
      name,
      windowName,
      async (board, window, nowMs) => {
        const range = { fromSec: fromSec ?? 0, toSec: toSec ?? Math.floor(nowMs / 1000) };
        const { keeps, points, nextSec, hidden } = await this.store.itemHistory({
          board,
          window,
          nowMs,
          item,
          ...range,
        });
        if (!keeps) missingSnapshot(name, window.name, false, undefined);
        const answer = { board: name, window: window.name, item, points, nextFrom: nextSec };
        return hidden ? { ...answer, hidden: true } : answer;
      },
      (_, view) => viewHasNoHistory(name, view),
      segment,
      metric,
    );
  }
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
