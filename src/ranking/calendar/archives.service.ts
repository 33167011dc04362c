import { Injectable } from '@nestjs/common';
import { InvalidInputError, NotFoundError, WindowDrainingError } from '../../common/errors';
import { RankedSources } from '../boards/ranked-sources';
import { PreparedBoard } from '../core/board';
import { CalendarSpec, periodAt } from '../core/calendar-math';
import { MAX_READ_DRAIN_CALLS } from '../core/ranking.limits';
import { RANKING_MESSAGES as M } from '../core/ranking.messages';
import type { ListedItem } from '../core/ranking.types';
import { rankRows } from '../core/shard-math';
import type { WindowConfig } from '../core/window-math';
import type { StoredSnapshot } from '../history/history.functions';
import { ArchivesStore } from './archives.store';

/** One closed period's final standings. */
export interface ArchivedPeriod {
  from: number;
  to: number;
  items: ListedItem[];
}

export interface ArchiveAnswer extends ArchivedPeriod {
  board: string;
  window: string;
  timeZone: string;
}

export interface ArchivesPage {
  board: string;
  window: string;
  timeZone: string;
  periods: ArchivedPeriod[];
  /** The `from` of the oldest period answered when more may follow; null at the end. */
  nextCursor: number | null;
}

/** A read that found an archive still being taken: RankedSources sends it again. */
const DRAINING = { draining: true } as const;

/** Archives of calendar windows as a client asks them: the period holding a time, or pages newest first. */
@Injectable()
export class ArchivesService {
  constructor(
    private readonly store: ArchivesStore,
    private readonly sources: RankedSources,
  ) {}

  /**
   * The final standings of the closed period holding `atSec` (default: the latest kept), rows
   * offset..offset+limit; with `segment`, the segment's. Each call drains one chunk of the window; an
   * archive still being taken then makes RankedSources send it again, and after MAX_READ_DRAIN_CALLS
   * it is a 503 WINDOW_DRAINING.
   */
  async archive(
    name: string,
    windowName: string | undefined,
    atSec: number | undefined,
    page: { offset: number; limit: number },
    segment?: string,
  ): Promise<ArchiveAnswer> {
    const answer = await this.sources.read<ArchiveAnswer | typeof DRAINING>(
      name,
      windowName,
      async (board, window, nowMs) => {
        const calendar = calendarOf(name, window);
        const { archives, draining } = await this.kept(board, window, nowMs, atSec, 1);
        if (draining) return DRAINING;
        const period = archives[0] && periodOf(calendar, archives[0]);
        if (!period || (atSec !== undefined && atSec >= period.to)) {
          throw new NotFoundError('ARCHIVE_NOT_FOUND', M.noArchive(name, window.name, atSec));
        }
        const items = period.items.slice(page.offset, page.offset + page.limit);
        return { board: name, window: window.name, timeZone: calendar.timeZone, ...period, items };
      },
      (_, view) => Promise.reject(new InvalidInputError(M.notCalendar(name, view.name))),
      segment,
    );
    return settled(name, answer);
  }

  /** Kept periods newest first, `limit` per page; `cursor`: the nextCursor of the page before (drains as `archive`). */
  async archives(
    name: string,
    windowName: string | undefined,
    limit: number,
    cursor: number | undefined,
    segment?: string,
  ): Promise<ArchivesPage> {
    const answer = await this.sources.read<ArchivesPage | typeof DRAINING>(
      name,
      windowName,
      async (board, window, nowMs) => {
        const calendar = calendarOf(name, window);
        const latestSec = cursor === undefined ? undefined : cursor - 1;
        const { archives, draining } = await this.kept(board, window, nowMs, latestSec, limit);
        if (draining) return DRAINING;
        const periods = archives.map((archive) => periodOf(calendar, archive));
        const nextCursor = periods.length === limit ? periods[periods.length - 1].from : null;
        return { board: name, window: window.name, timeZone: calendar.timeZone, periods, nextCursor };
      },
      (_, view) => Promise.reject(new InvalidInputError(M.notCalendar(name, view.name))),
      segment,
    );
    return settled(name, answer);
  }

  /** The stored archives; 404 ARCHIVE_NOT_FOUND when the window keeps none. */
  private async kept(
    board: PreparedBoard,
    window: WindowConfig,
    nowMs: number,
    latestSec: number | undefined,
    most: number,
  ) {
    const found = await this.store.archives(board, window, nowMs, latestSec, most);
    if (!found.keeps) throw new NotFoundError('ARCHIVE_NOT_FOUND', M.keepsNoArchive(board.config.name, window.name));
    return found;
  }
}

/** RankedSources.read answers a draining answer never: it sends the read again, then refuses it. */
function settled<T extends object>(board: string, answer: T | typeof DRAINING): T {
  if ('draining' in answer) throw new WindowDrainingError(M.windowDraining(board, MAX_READ_DRAIN_CALLS));
  return answer;
}

function calendarOf(board: string, window: WindowConfig): CalendarSpec {
  if (!window.calendar) throw new InvalidInputError(M.notCalendar(board, window.name));
  return window.calendar;
}

/** An archive (kept under its period's start) with its period's end from the zone's rules. */
function periodOf(calendar: CalendarSpec, archive: StoredSnapshot): ArchivedPeriod {
  const { startMs, endMs } = periodAt(calendar, archive.atSec * 1000);
  return { from: startMs / 1000, to: endMs / 1000, items: rankRows(archive.rows, 0, 0) };
}
