import { Injectable } from '@nestjs/common';
import { InvalidInputError, RequestTooCostlyError } from '../../common/errors';
import { PreparedBoard } from '../core/board';
import { ascendingScores, keptScore, optionsCountWeight, strictRanks } from '../options/registry';
import { RankingSettings } from '../core/ranking.settings';
import { RankedSources } from '../boards/board-cache';
import { figures, WindowFigures } from '../core/answers';
import { RANKING_MESSAGES as M } from '../core/ranking.messages';
import type { LookupRow } from '../core/ranking.types';
import { LookupStore } from './lookup.store';
import { RowMetrics } from '../core/row-metrics';
import { LOOKUP_COUNTS_PER_CALL, LOOKUP_COUNTS_PER_READ, METRIC_COUNTS_PER_CALL } from '../core/ranking.limits';

/** A lookup as the client asks it. */
export interface LookupRequest {
  name: string;
  window?: string;
  items: string[];
  relative: boolean;
  withData: boolean;
  /** Look the ids up in this segment (a board without segments: 400). */
  segment?: string;
  /** Score and rank the ids by this metric of a board with metrics (absent: the first); rows carry them all. */
  metric?: string;
  /**
   * Told the reads of the client's budget the lookup spends (lookupReads) once the board is known and
   * before Redis is read: the HTTP route charges its client's read budget with them, and may throw to
   * refuse the lookup.
   */
  admit?: (reads: number) => void;
}

/**
 * What a lookup costs Redis, in counts: each id is read on its shard; for board ranks on a sharded
 * board every shard counts the items above each id's score (ids x shards), each count weighing what
 * the board's options make it (optionsCountWeight: a `ties: first` count also orders tie marks).
 */
export function lookupCounts(board: PreparedBoard, ids: number, boardRanks: boolean): number {
  const shards = boardRanks ? board.shards.length : 1;
  return ids * shards * optionsCountWeight(board.config);
}

/**
 * Reads of the client's read budget a lookup spends: one per LOOKUP_COUNTS_PER_READ counts, its
 * metrics' count entries included (one weighs what LOOKUP_COUNTS_PER_CALL / METRIC_COUNTS_PER_CALL of
 * a count does: each bound is about one call's time), and at least one per Redis call it makes.
 */
export function lookupReads(counts: number, metrics: { entries: number; calls: number }, calls: number): number {
  const weighed = counts + (metrics.entries * LOOKUP_COUNTS_PER_CALL) / METRIC_COUNTS_PER_CALL;
  return Math.max(Math.ceil(weighed / LOOKUP_COUNTS_PER_READ), calls + metrics.calls);
}

/** 422 REQUEST_TOO_COSTLY past `most` counts (LOOKUP_COUNTS_PER_REQUEST), naming the most ids this board takes. */
function refuseCostly(board: PreparedBoard, ids: number, counts: number, most: number): void {
  if (counts <= most) return;
  const mostIds = Math.floor(most / (counts / ids));
  throw new RequestTooCostlyError(M.lookupTooCostly(ids, board.shards.length, counts, most, mostIds));
}

/**
 * Ranks among the given rows (a friends board): 1 + the rows ranked before it. Board ranks order the
 * rows (strict on a `ties: first` board) when `byBoardRank`; else their scores do (competition ranks).
 * One sort: n log n for the 1 000 ids a lookup may hold.
 */
export function relativeRanks(rows: LookupRow[], byBoardRank: boolean): LookupRow[] {
  const keyOf = (row: LookupRow) => (byBoardRank ? (row.rank ?? Infinity) : -row.score);
  const listed = (row: LookupRow) => !row.hidden && (byBoardRank ? row.rank !== null : row.score > 0);
  const ranked = rows.filter(listed).sort((a, b) => keyOf(a) - keyOf(b));
  const rankOf = new Map<LookupRow, number>();
  ranked.forEach((row, i) => {
    const previous = ranked[i - 1];
    rankOf.set(row, previous && keyOf(previous) === keyOf(row) ? (rankOf.get(previous) as number) : i + 1);
  });
  return rows.map((row) => ({ ...row, rank: rankOf.get(row) ?? null }));
}

/** POST /boards/:board/lookup: given ids' scores and ranks in one window, in the order given. */
@Injectable()
export class LookupService {
  constructor(
    private readonly sources: RankedSources,
    private readonly store: LookupStore,
    private readonly settings: RankingSettings,
    private readonly reads: RowMetrics,
  ) {}

  lookup(request: LookupRequest): Promise<WindowFigures & { items: LookupRow[] }> {
    const { name, items, relative, withData } = request;
    const seen = new Set<string>();
    for (const item of items) {
      if (seen.has(item)) throw new InvalidInputError(M.lookupIdTwice(item));
      seen.add(item);
    }
    let admitted = false; // a read sent again (a window still draining) is charged once
    return this.sources.read(
      name,
      request.window,
      async (board, window, nowMs) => {
        // Ranks among the ids need only scores on a sum board of shared ranks; the board order decides
        // when ranks are strict, lower scores rank higher (order: asc), or any sign is listed (max / min / last).
        const byBoardRank =
          strictRanks(board.config) || ascendingScores(board.config) || keptScore(board.config) !== undefined;
        const ask = { items, boardRanks: !relative || byBoardRank, withData };
        const counts = lookupCounts(board, items.length, ask.boardRanks);
        refuseCostly(board, items.length, counts, this.settings.lookupCountsPerRequest);
        if (!admitted) {
          const calls = this.store.plannedCalls(board, items.length, ask.boardRanks);
          request.admit?.(lookupReads(counts, this.reads.metricsCost(board, items), calls));
        }
        admitted = true;
        const result = await this.store.lookup({ board, window, nowMs }, ask);
        const rows = relative ? relativeRanks(result.rows, byBoardRank) : result.rows;
        const counted = await this.reads.withMetrics({ board, window, nowMs }, { ...result, items: rows });
        return { ...figures(name, window, nowMs, counted.draining), items: counted.items };
      },
      (_, view) => Promise.reject(new InvalidInputError(M.lookupReadsWindows(name, view.name))),
      request.segment,
      request.metric,
      request.admit,
    );
  }
}
