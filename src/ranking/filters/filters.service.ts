import { Injectable } from '@nestjs/common';
import { InvalidInputError } from '../../common/errors';
import { RANKING_MESSAGES } from '../core/ranking.messages';
import { RankedSources, BoardCache } from '../boards/board-cache';
import { figures, WindowFigures } from '../core/answers';
import { PreparedBoard } from '../core/board';
import type { WindowConfig } from '../core/window-math';
import { ascendingScores } from '../options/registry';
import { withRowTiebreaks } from '../options/tiebreak/tiebreak.option';
import { FILTERED_DEPTH_ITEMS, groupScan, GROUPS_MESSAGES as M } from '../options/groups/groups.limits';
import { FilteredRow, scanFiltered } from '../core/filter-merge';
import type { ViewConfig } from '../options/views/trending-math';
import { ViewFilterReader } from '../core/view-filter';
import { FiltersStore, WindowAt } from './filters.store';
import { spanFigures, spanRead } from '../core/span-read';
import { RowMetrics } from '../core/row-metrics';

/** A filtered read: a page of a window's listing without excluded items and groups, at most perGroup rows of a group. */
export interface FilteredRead {
  board: string;
  window?: string;
  segment?: string;
  /** Scan the listing of the window's newest slots covering this duration (as GET top?span reads it). */
  span?: string;
  offset: number;
  limit: number;
  perGroup?: number;
  /** Only items with at least this many distinct actors in the window, or span (a board with actors). */
  minActors?: number;
  excludeItems?: string[];
  excludeGroups?: string[];
  /** Rank by this metric of a board with metrics (absent: the first; unknown: 400 UNKNOWN_METRIC). */
  metric?: string;
  /** Told the calls of each round past the route's first read (it may refuse: the read budget). */
  admit?: (calls: number) => void;
}

/** What GET top filters by (perGroup, minActors). */
export interface TopFilters {
  window?: string;
  segment?: string;
  span?: string;
  offset?: number;
  limit: number;
  perGroup?: number;
  minActors?: number;
  metric?: string;
}

/** A filtered page: rows with their board rank and group; `truncated` when the scan bound stopped it short. */
export type FilteredPage = WindowFigures & {
  items: Array<{
    rank: number;
    item: string;
    score: number;
    tiebreak?: number;
    group?: string;
    metrics?: Record<string, number>;
  }>;
  truncated: boolean;
};

/** Filtered reads (perGroup, exclusions) and the groups of listed rows, on boards with `groups: true`. */
@Injectable()
export class FiltersService {
  constructor(
    private readonly sources: RankedSources,
    private readonly cache: BoardCache,
    private readonly store: FiltersStore,
    private readonly views: ViewFilterReader,
    private readonly reads: RowMetrics,
  ) {}

  /** A filtered page of a window (a view: 400); rows keep their board rank. */
  read(ask: FilteredRead): Promise<FilteredPage> {
    const depth = ask.offset + ask.limit;
    if (depth > FILTERED_DEPTH_ITEMS) throw new InvalidInputError(M.tooDeep(depth));
    return this.sources.read(
      ask.board,
      ask.window,
      (board, window, nowMs) => this.page(board, window, nowMs, ask),
      (board, view, nowMs) => this.viewPage(board, view, nowMs, ask),
      ask.segment,
      ask.metric,
      ask.admit,
    );
  }

  /**
   * GET top with ?perGroup or ?minActors (a span's too): its rows carry previousRank null. The route's
   * guard counted one read; `admit` is told the calls past it.
   */
  async topFiltered(
    board: string,
    query: TopFilters,
    admit: (calls: number) => void,
  ): Promise<Omit<FilteredPage, 'items'> & { items: Array<FilteredPage['items'][number] & { previousRank: null }> }> {
    const { window, segment, span, limit, perGroup, minActors, metric } = query;
    const offset = query.offset ?? 0;
    const page = await this.read({ board, window, segment, span, offset, limit, perGroup, minActors, metric, admit });
    return { ...page, items: page.items.map((row) => ({ ...row, previousRank: null })) };
  }

  /**
   * False when `rows` surely get no group from attach (none, or a cached board without the groups
   * option): a hot read then skips attach's board lookup and promises.
   */
  mayGroup(name: string, rows: readonly unknown[]): boolean {
    if (rows.length === 0) return false;
    const cached = this.cache.cached(name);
    return cached === undefined || cached.config.groups === true;
  }

  /** `rows` each with its item's group (absent: none) on a groups board; as they are elsewhere. */
  async attach<Row extends { item: string }>(name: string, rows: Row[]): Promise<Array<Row & { group?: string }>> {
    if (rows.length === 0) return rows;
    const found = await this.cache.withBoard(name, (board) =>
      board.config.groups === true
        ? this.store.groupsOf(
            board,
            rows.map((row) => row.item),
          )
        : Promise.resolve(null),
    );
    if (found === null) return rows;
    return rows.map((row) => (found.has(row.item) ? { ...row, group: found.get(row.item) } : row));
  }

  private async page(
    board: PreparedBoard,
    window: WindowConfig,
    nowMs: number,
    ask: FilteredRead,
  ): Promise<FilteredPage> {
    checkFilters(board, ask);
    const read = { board, window, nowMs };
    if (ask.span === undefined) return this.windowPage(read, ask);
    const { spanSec } = spanRead(board, window, nowMs, ask.span);
    // The span is summed once for the read (its actor counts with it), in bounded calls, then scanned
    // as a window's listing is (its rows weigh as without minActors).
    const staged = { spanSec, minActors: ask.minActors ?? 0, admit: ask.admit };
    const page = await this.store.withStagedSpan(read, staged, (spanToken) =>
      this.scan(read, ask, { ...groupScan(), spanToken }),
    );
    // A span's rows are its sums alone, as GET top?span answers them: no metric counts of the window.
    return { ...spanFigures({ ...read, spanSec }), items: page.items, truncated: page.truncated };
  }

  /** A filtered page of the window's own listing, with the rows' metric counts. */
  private async windowPage(read: WindowAt, ask: FilteredRead): Promise<FilteredPage> {
    const page = await this.scan(read, ask, { ...groupScan(), spanToken: '' });
    // Rows carry their pair's tiebreak (a board keeping pairs) and every metric's count (a board with
    // metrics), as GET top's do.
    const rows = await this.reads.withMetrics(read, { draining: page.draining, items: page.items });
    const { draining, items } = rows;
    const { board, window, nowMs } = read;
    return { ...figures(board.config.name, window, nowMs, draining), items, truncated: page.truncated };
  }

  /** The shards scanned in rounds (scanFiltered): the page's rows with their ranks (and tiebreaks). */
  private async scan(
    read: WindowAt,
    ask: FilteredRead,
    how: { scan: number; calls: number; spanToken: string },
  ): Promise<{ items: FilteredPage['items']; truncated: boolean; draining: boolean }> {
    const { board } = read;
    const sent = {
      scan: how.scan,
      want: ask.offset + ask.limit,
      perGroup: ask.perGroup ?? 0,
      excludeItems: ask.excludeItems ?? [],
      excludeGroups: ask.excludeGroups ?? [],
      minActors: ask.minActors ?? 0,
      spanToken: how.spanToken,
    };
    const plan = { ...ask, shards: board.shards.length, perGroup: sent.perGroup, calls: how.calls };
    const page = await scanFiltered({ ...plan, ascending: ascendingScores(board.config) }, (shard, start, seen) =>
      this.store.scan(read, board.shards[shard], { start, seen, ...sent }),
    );
    const items = withRowTiebreaks(
      board.config,
      page.rows.map(rowAnswer),
      page.rows.map((row) => row.tie),
    );
    return { items, truncated: page.truncated, draining: page.draining };
  }

  /** A filtered page of a view (a span: 400): rows keep their view rank; minActors counted in the view's window. */
  private viewPage(board: PreparedBoard, view: ViewConfig, nowMs: number, ask: FilteredRead): Promise<FilteredPage> {
    if (ask.span !== undefined) throw new InvalidInputError(RANKING_MESSAGES.spanOnView(board.config.name, view.name));
    checkFilters(board, ask);
    const { offset, limit, admit } = ask;
    const filters = {
      minActors: ask.minActors ?? 0,
      perGroup: ask.perGroup ?? 0,
      excludeItems: ask.excludeItems ?? [],
      excludeGroups: ask.excludeGroups ?? [],
    };
    return this.views.filtered(board, view, nowMs, { offset, limit, ...filters, admit }) as Promise<FilteredPage>;
  }
}

/** Refuses (400) filters the board cannot answer: perGroup without groups, minActors without actors. */
function checkFilters(board: PreparedBoard, ask: FilteredRead): void {
  if (ask.perGroup !== undefined && board.config.groups !== true)
    throw new InvalidInputError(M.perGroupNeedsGroups(board.config.name));
  if (ask.minActors !== undefined && board.config.actors !== true)
    throw new InvalidInputError(RANKING_MESSAGES.minActorsNeedsActors(board.config.name));
}

function rowAnswer(row: FilteredRow): { rank: number; item: string; score: number; group?: string } {
  return { rank: row.rank, item: row.item, score: row.score, ...(row.group === '' ? {} : { group: row.group }) };
}
