import type { RankedRow } from '../ranking/core/ranking.types';
import { RankingService } from '../ranking/ranking.service';
import { filtered, StreamFilters } from './watch-set';

/** What a stream event carries: the watched rows of one window and the board's change version. */
export interface LiveListing {
  board: string;
  window: string;
  /** Present when the stream reads a segment's rows. */
  segment?: string;
  /** Present when the stream ranks by a metric it named (?metric=). */
  metric?: string;
  from: number | null;
  to: number | null;
  version: number;
  items: RankedRow[];
}

/** The event's fields before its rows: `segment` and `metric` (after `window`) only on streams naming them. */
export function headOf(
  top: Omit<LiveListing, 'version' | 'items'>,
  version: number,
  stream: { segment?: string; filters: StreamFilters },
) {
  const { board, window, from, to } = top;
  const { segment, filters } = stream;
  const named = {
    ...(segment === undefined ? {} : { segment }),
    ...(filters.metric === undefined ? {} : { metric: filters.metric }),
  };
  return { board, window, ...named, from, to, version };
}

/**
 * The first `rows` rows a stream lists: the window's top, or with filters GET top's filtered page
 * (`admit` told the calls past the first, as the route's read budget counts them).
 */
export function readListing(
  ranking: RankingService,
  stream: { board: string; window: string | undefined; segment?: string; filters: StreamFilters },
  rows: number,
  admit: (calls: number) => void,
): Promise<Omit<LiveListing, 'version'>> {
  const { board, window, segment, filters } = stream;
  if (!filtered(filters)) return ranking.top(board, window, 0, rows, { segment, metric: filters.metric });
  return ranking.topFiltered(board, { window, segment, limit: rows, ...filters }, admit);
}
