import { Injectable } from '@nestjs/common';
import { InvalidInputError } from '../../common/errors';
import { RANKING_MESSAGES } from '../core/ranking.messages';
import { RankedSources } from '../boards/ranked-sources';
import { BoardCache } from '../boards/board-cache';
import { figures, WindowFigures } from '../core/answers';
import { PreparedBoard } from '../core/board';
import type { WindowConfig } from '../core/window-math';
import { ascendingScores } from '../options/registry';
import {
  FILTERED_DEPTH_ITEMS,
  GROUP_PAGE_CALLS,
  GROUP_SCAN_ROWS,
  GROUPS_MESSAGES as M,
} from '../options/groups/groups.limits';
import type { GroupRow } from './filters.functions';
import { absorb, FilteredRow, newScan, place, ranked, ShardScan } from './filter-merge';
import { FiltersStore } from './filters.store';

/** A filtered read: a page of a window's listing without excluded items and groups, at most perGroup rows of a group. */
export interface FilteredRead {
  board: string;
  window?: string;
  segment?: string;
  offset: number;
  limit: number;
  perGroup?: number;
  /** Only items with at least this many distinct actors in the window (a board with actors). */
  minActors?: number;
  excludeItems?: string[];
  excludeGroups?: string[];
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
}

/** A filtered page: rows with their board rank and group; `truncated` when the scan bound stopped it short. */
export type FilteredPage = WindowFigures & {
  items: Array<{ rank: number; item: string; score: number; group?: string }>;
  truncated: boolean;
};

/** Filtered reads (perGroup, exclusions) and the groups of listed rows, on boards with `groups: true`. */
@Injectable()
export class FiltersService {
  constructor(
    private readonly sources: RankedSources,
    private readonly cache: BoardCache,
    private readonly store: FiltersStore,
  ) {}

  /** A filtered page of a window (a view: 400); rows keep their board rank. */
  read(ask: FilteredRead): Promise<FilteredPage> {
    const depth = ask.offset + ask.limit;
    if (depth > FILTERED_DEPTH_ITEMS) throw new InvalidInputError(M.tooDeep(depth));
    return this.sources.read(
      ask.board,
      ask.window,
      (board, window, nowMs) => this.page(board, window, nowMs, ask),
      () => {
        throw new InvalidInputError(M.unsupported('window (a view)'));
      },
      ask.segment,
    );
  }

  /**
   * GET top with ?perGroup or ?minActors (span: 400): its rows carry previousRank null. The route's
   * guard counted one read; `admit` is told the calls past it.
   */
  async topFiltered(
    board: string,
    query: TopFilters,
    admit: (calls: number) => void,
  ): Promise<Omit<FilteredPage, 'items'> & { items: Array<FilteredPage['items'][number] & { previousRank: null }> }> {
    if (query.span !== undefined) throw new InvalidInputError(M.unsupported('span'));
    const { window, segment, limit, perGroup, minActors } = query;
    const offset = query.offset ?? 0;
    const page = await this.read({ board, window, segment, offset, limit, perGroup, minActors, admit });
    return { ...page, items: page.items.map((row) => ({ ...row, previousRank: null })) };
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
    if (ask.perGroup !== undefined && board.config.groups !== true)
      throw new InvalidInputError(M.perGroupNeedsGroups(board.config.name));
    if (ask.minActors !== undefined && board.config.actors !== true)
      throw new InvalidInputError(RANKING_MESSAGES.minActorsNeedsActors(board.config.name));
    if (board.config.ties === 'first') throw new InvalidInputError(M.strictTies(board.config.name));
    const depth = ask.offset + ask.limit;
    const scans: ShardScan[] = board.shards.map(newScan);
    const accepted: GroupRow[] = [];
    const draining = await this.scanRounds({ board, window, nowMs }, scans, accepted, ask);
    const truncated = accepted.length < depth && scans.some((scan) => !scan.ended || scan.pending.length > 0);
    const rows = ranked(accepted, scans, ascendingScores(board.config)).slice(ask.offset);
    return { ...figures(board.config.name, window, nowMs, draining), items: rows.map(rowAnswer), truncated };
  }

  /** Scans the shards in rounds until `accepted` holds the page or the call bound is reached; answers draining. */
  private async scanRounds(
    read: { board: PreparedBoard; window: WindowConfig; nowMs: number },
    scans: ShardScan[],
    accepted: GroupRow[],
    ask: FilteredRead,
  ): Promise<boolean> {
    const { board } = read;
    const depth = ask.offset + ask.limit;
    const filter = { depth, perGroup: ask.perGroup ?? 0 };
    const ascending = ascendingScores(board.config);
    const counts = new Map<string, number>();
    const minActors = ask.minActors ?? 0;
    let draining = false;
    for (let call = 1; call <= GROUP_PAGE_CALLS; call++) {
      const seen = Object.fromEntries(counts);
      const open = scans.filter((scan) => !scan.ended).length;
      ask.admit?.(call === 1 ? open - 1 : open);
      const excluded = { excludeItems: ask.excludeItems ?? [], excludeGroups: ask.excludeGroups ?? [] };
      const sent = { scan: GROUP_SCAN_ROWS, want: depth, perGroup: filter.perGroup, seen, ...excluded, minActors };
      const replies = await Promise.all(
        scans.map((scan, i) =>
          scan.ended ? undefined : this.store.scan(read, board.shards[i], { start: scan.start, ...sent }),
        ),
      );
      replies.forEach((reply, i) => {
        if (reply === undefined) return;
        draining ||= reply.draining;
        absorb(scans[i], reply);
      });
      place(scans, accepted, counts, filter, ascending);
      if (accepted.length >= depth || scans.every((scan) => scan.ended)) break;
    }
    return draining;
  }
}

function rowAnswer(row: FilteredRow): { rank: number; item: string; score: number; group?: string } {
  return { rank: row.rank, item: row.item, score: row.score, ...(row.group === '' ? {} : { group: row.group }) };
}
