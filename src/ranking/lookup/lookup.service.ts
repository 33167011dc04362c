import { Injectable } from '@nestjs/common';
import { InvalidInputError } from '../../common/errors';
import { RankedSources } from '../boards/ranked-sources';
import { figures, WindowFigures } from '../core/answers';
import { RANKING_MESSAGES as M } from '../core/ranking.messages';
import type { LookupRow } from '../core/ranking.types';
import { LookupStore } from './lookup.store';

/** A lookup as the client asks it. */
export interface LookupRequest {
  name: string;
  window?: string;
  items: string[];
  relative: boolean;
  withData: boolean;
}

/**
 * Ranks among the given rows (a friends board): 1 + the rows ranked before it. Board ranks order the
 * rows (competition ranks, or strict ones on a `ties: first` board) when known; else their scores do.
 */
export function relativeRanks(rows: LookupRow[], byBoardRank: boolean): LookupRow[] {
  const ranked = rows.filter((row) => row.score > 0);
  const before = (row: LookupRow, other: LookupRow) =>
    byBoardRank ? (other.rank ?? Infinity) < (row.rank ?? Infinity) : other.score > row.score;
  return rows.map((row) => ({
    ...row,
    rank: row.score > 0 ? 1 + ranked.filter((other) => before(row, other)).length : null,
  }));
}

/** POST /boards/:board/lookup: given ids' scores and ranks in one window, in the order given. */
@Injectable()
export class LookupService {
  constructor(
    private readonly sources: RankedSources,
    private readonly store: LookupStore,
  ) {}

  lookup(request: LookupRequest): Promise<WindowFigures & { items: LookupRow[] }> {
    const { name, items, relative, withData } = request;
    const seen = new Set<string>();
    for (const item of items) {
      if (seen.has(item)) throw new InvalidInputError(M.lookupIdTwice(item));
      seen.add(item);
    }
    return this.sources.read(
      name,
      request.window,
      async (board, window, nowMs) => {
        // Ranks among the ids need only scores, unless ties are strict: then the board order decides.
        const strict = board.config.ties === 'first';
        const ask = { items, boardRanks: !relative || strict, withData };
        const result = await this.store.lookup({ board, window, nowMs }, ask);
        const rows = relative ? relativeRanks(result.rows, strict) : result.rows;
        return { ...figures(name, window, nowMs, result.draining), items: rows };
      },
      (_, view) => Promise.reject(new InvalidInputError(M.lookupReadsWindows(name, view.name))),
    );
  }
}
