import { Injectable } from '@nestjs/common';
import { InvalidInputError, NotFoundError, RequestTooCostlyError, WindowDrainingError } from '../../common/errors';
import { RankedSources } from '../boards/board-cache';
import { PreparedBoard } from '../core/board';
import { CalendarSpec, periodAt } from '../options/calendar/calendar-math';
import { ARCHIVE_ROWS_PER_READ, CALENDAR_MESSAGES as C } from '../options/calendar/calendar.limits';
import { MAX_READ_DRAIN_CALLS } from '../core/ranking.limits';
import { RANKING_MESSAGES as M } from '../core/ranking.messages';
import type { ListedItem } from '../core/ranking.types';
import { rankRows } from '../core/shard-math';
import { withRowTiebreaks } from '../options/tiebreak/tiebreak.option';
import type { WindowConfig } from '../core/window-math';
import type { ArchivePage } from './calendar.functions';
import { ArchivesAsk, ArchivesStore } from './archives.store';
import { HistoryStore } from '../history/history.store';
import { archiveMetrics, type MetricsRead } from '../history/metric-counts';

/** One closed period's final standings. */
export interface ArchivedPeriod {
  from: number;
  to: number;
  /** On a board with metrics, each row with every metric's count as kept (history/metric-counts.ts). */
  items: Array<ListedItem & { metrics?: Record<string, number> }>;
  /** The `offset` (GET /boards/:board/archive) of the period's rows after these; null when none follow. */
  nextOffset: number | null;
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

/**
 * What an archive read reads and charges: the window's listing, or with `segment` the segment's, ranked
 * by `metric` (a board with metrics); `admit` is charged the reads past the first.
 */
export interface ArchiveScope {
  segment?: string;
  metric?: string;
  admit?: (reads: number) => void;
}

/** A read that found an archive still being taken: RankedSources sends it again. */
const DRAINING = { draining: true } as const;

/** Archives of calendar windows as a client asks them: the period holding a time, or pages newest first. */
@Injectable()
export class ArchivesService {
  constructor(
    private readonly store: ArchivesStore,
    private readonly sources: RankedSources,
    private readonly history: HistoryStore,
  ) {}

  /**
   * The final standings of the closed period holding `atSec` (default: the latest kept), rows
   * offset..offset+limit; with `segment`, the segment's. Each call drains one chunk of the window; an
   * archive still being taken then makes RankedSources send it again, and after MAX_READ_DRAIN_CALLS
   * it is a 503 WINDOW_DRAINING.
   */
  archive(
    name: string,
    windowName: string | undefined,
    atSec: number | undefined,
    page: { offset: number; limit: number },
    scope: ArchiveScope = {},
  ): Promise<ArchiveAnswer> {
    return this.readCalendar<ArchiveAnswer>(name, windowName, scope, async (board, window, calendar, nowMs) => {
      refuseDeepPage(board, page);
      const ask = { latestSec: atSec, most: 1, rows: { skip: page.offset, most: page.limit }, admit: scope.admit };
      const { archives, draining } = await this.kept(board, window, nowMs, ask);
      if (draining) return DRAINING;
      const period = archives[0] && periodOf(board, calendar, archives[0], ask.rows);
      if (!period || (atSec !== undefined && atSec >= period.to)) {
        throw new NotFoundError('ARCHIVE_NOT_FOUND', C.noArchive(name, window.name, atSec));
      }
      const read = { board, window, nowMs, metric: scope.metric, admit: scope.admit };
      const [counted] = (await this.withMetrics(read, [archives[0].atSec], [period], page.offset)).periods;
      if (!counted) return DRAINING;
      return { board: name, window: window.name, timeZone: calendar.timeZone, ...counted };
    });
  }

  /**
   * Kept periods newest first, at most `limit` per page and `rows.perPeriod` rows of each (default: all
   * the archive keeps); `cursor`: the nextCursor of the page before (drains as `archive`). The rows all
   * shards answer stay within ARCHIVE_ROWS_PER_READ: a page then holds fewer periods (nextCursor goes
   * on), or fewer rows of each (nextOffset: read the rest with `archive`).
   */
  archives(
    name: string,
    windowName: string | undefined,
    limit: number,
    cursor: number | undefined,
    rows: { perPeriod?: number } = {},
    scope: ArchiveScope = {},
  ): Promise<ArchivesPage> {
    return this.readCalendar<ArchivesPage>(name, windowName, scope, async (board, window, calendar, nowMs) => {
      const latestSec = cursor === undefined ? undefined : cursor - 1;
      const ask = { latestSec, ...archivesPageSize(board, window, limit, rows.perPeriod), admit: scope.admit };
      const { archives, draining } = await this.kept(board, window, nowMs, ask);
      if (draining) return DRAINING;
      const starts = archives.map((archive) => archive.atSec);
      const read = { board, window, nowMs, metric: scope.metric, admit: scope.admit };
      const all = archives.map((a) => periodOf(board, calendar, a, ask.rows));
      const { periods, cut } = await this.withMetrics(read, starts, all, ask.rows.skip);
      if (periods.length === 0 && archives.length > 0) return DRAINING;
      const more = cut || periods.length === ask.most;
      const nextCursor = more ? periods[periods.length - 1].from : null;
      return { board: name, window: window.name, timeZone: calendar.timeZone, periods, nextCursor };
    });
  }

  /**
   * `read` of a calendar window (as `segment`'s): another window or a view is a 400; an answer still
   * draining after RankedSources sent the read again is a 503 WINDOW_DRAINING.
   */
  private async readCalendar<T extends object>(
    name: string,
    windowName: string | undefined,
    as: ArchiveScope,
    read: (
      board: PreparedBoard,
      window: WindowConfig,
      calendar: CalendarSpec,
      nowMs: number,
    ) => Promise<T | typeof DRAINING>,
  ): Promise<T> {
    const answer = await this.sources.read<T | typeof DRAINING>(
      name,
      windowName,
      async (board, window, nowMs) => read(board, window, calendarOf(name, window), nowMs),
      (_, view) => Promise.reject(new InvalidInputError(C.notCalendar(name, view.name))),
      as.segment,
      as.metric,
    );
    return settled(name, answer);
  }

  /**
   * On a board with metrics, the periods' rows each with `metrics` (archiveMetrics); none (an empty
   * list) while another metric's archive is still being taken. Rows whose counts would take more than
   * the read's bound are left out: fewer periods (cut: true), the last answered with fewer rows, its
   * `nextOffset` (rows from `skip`) where they go on.
   */
  private async withMetrics(
    read: MetricsRead,
    starts: number[],
    periods: ArchivedPeriod[],
    skip: number,
  ): Promise<{ periods: ArchivedPeriod[]; cut: boolean }> {
    const pages = periods.map((period, i) => ({ atSec: starts[i], rows: period.items }));
    const { draining, counts } = await archiveMetrics(this.history, read, pages);
    if (draining) return { periods: [], cut: false };
    const answered = periods.slice(0, counts.length).map((period, p) => {
      const items = period.items.slice(0, counts[p].length);
      const nextOffset = items.length < period.items.length ? skip + items.length : period.nextOffset;
      return {
        ...period,
        nextOffset,
        items: items.map((row, r) => (counts[p][r] ? { ...row, metrics: counts[p][r] } : row)),
      };
    });
    return { periods: answered, cut: answered.length < periods.length };
  }

  /** The stored archives; 404 ARCHIVE_NOT_FOUND when the window keeps none. */
  private async kept(board: PreparedBoard, window: WindowConfig, nowMs: number, ask: ArchivesAsk) {
    const found = await this.store.archives(board, window, nowMs, ask);
    if (!found.keeps) throw new NotFoundError('ARCHIVE_NOT_FOUND', C.keepsNoArchive(board.config.name, window.name));
    return found;
  }
}

/** RankedSources.read answers a draining answer never: it sends the read again, then refuses it. */
function settled<T extends object>(board: string, answer: T | typeof DRAINING): T {
  if ('draining' in answer) throw new WindowDrainingError(M.windowDraining(board, MAX_READ_DRAIN_CALLS));
  return answer;
}

/** A page of a sharded board whose shards would answer more than ARCHIVE_ROWS_PER_READ rows: 422. */
function refuseDeepPage(board: PreparedBoard, page: { offset: number; limit: number }): void {
  const end = page.offset + page.limit;
  if (board.sharded && board.shards.length * end > ARCHIVE_ROWS_PER_READ)
    throw new RequestTooCostlyError(C.archiveTooDeep(board.shards.length, end, ARCHIVE_ROWS_PER_READ));
}

function calendarOf(board: string, window: WindowConfig): CalendarSpec {
  if (!window.calendar) throw new InvalidInputError(C.notCalendar(board, window.name));
  return window.calendar;
}

/**
 * Periods and rows of each of an archives page: all the archive keeps (or `perPeriod`) of up to `limit`
 * periods, with fewer periods, then fewer rows, when all shards would answer more than
 * ARCHIVE_ROWS_PER_READ rows.
 */
function archivesPageSize(
  board: PreparedBoard,
  window: WindowConfig,
  limit: number,
  perPeriod: number | undefined,
): Omit<ArchivesAsk, 'latestSec'> {
  const shards = board.shards.length;
  const kept = window.snapshots?.top ?? ARCHIVE_ROWS_PER_READ;
  const rowsEach = Math.max(1, Math.min(perPeriod ?? kept, kept, Math.floor(ARCHIVE_ROWS_PER_READ / shards)));
  const most = Math.min(limit, Math.max(1, Math.floor(ARCHIVE_ROWS_PER_READ / (shards * rowsEach))));
  return { most, rows: { skip: 0, most: rowsEach } };
}

/**
 * An archive page (kept under its period's start) with its period's end from the zone's rules: its
 * rows ranked (competition ranks from the rows ahead of the first), those of `rows` answered.
 */
function periodOf(
  board: PreparedBoard,
  calendar: CalendarSpec,
  archive: ArchivePage,
  rows: ArchivesAsk['rows'],
): ArchivedPeriod {
  const { startMs, endMs } = periodAt(calendar, archive.atSec * 1000);
  const first = rows.skip - archive.skipped;
  const ranked = rankRows(archive.rows, archive.skipped, archive.ahead).slice(first, first + rows.most);
  const marks = archive.rows.slice(first, first + rows.most).map((row) => row.tie);
  const items = withRowTiebreaks(board.config, ranked, marks);
  const more = archive.more || archive.rows.length > first + rows.most;
  const nextOffset = more ? rows.skip + items.length : null;
  return { from: startMs / 1000, to: endMs / 1000, items, nextOffset };
}
