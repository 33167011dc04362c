import { Injectable } from '@nestjs/common';
import { InvalidInputError, RequestTooCostlyError } from '../../common/errors';
import { RankedSources } from '../boards/board-cache';
import { figures, percentileOf, WindowFigures } from '../core/answers';
import { PreparedBoard } from '../core/board';
import type { WindowConfig } from '../core/window-math';
import { LOOKUP_COUNTS_PER_READ } from '../core/ranking.limits';
import { RANKING_MESSAGES as M } from '../core/ranking.messages';
import { strictRanks } from '../options/registry';
import { TailRow, tailRows } from '../options/tail/tail-rows';
import { tiebreakMark, tiebreakMarkOrder } from '../options/tiebreak/tiebreak.option';
import {
  Bucket,
  bucketBounds,
  bucketEdges,
  bucketsOf,
  narrowed,
  nearestRank,
  pickedScore,
  pickOf,
  PROBES_PER_QUANTILE,
  probesOf,
  QUANTILES,
  Quantiles,
  Search,
  searchInBucket,
  searchRounds,
} from './spread-math';
import { StandingStore, WindowRead } from './standing.store';

/** What a read by score asks; `admit` is told its cost in counts before Redis is read past its first round. */
interface ScoreRead {
  name: string;
  window?: string;
  /** Read this metric's window of a board with metrics (absent: the first; unknown: 400 UNKNOWN_METRIC). */
  metric?: string;
  admit?: (counts: number) => void;
}

export type RankAnswer = WindowFigures & { score: number; rank: number | null; percentile: number | null };

export type TailTopAnswer = WindowFigures & { items: Array<TailRow & { previousRank: null }> };

/** Rows each shard answers beyond the exact head, so that rows near its end can still be told exact. */
export const TAIL_LOOKAHEAD_ROWS = 64;
/** The deepest row a page of a `tail` board reaches (offset + limit): each row costs a look at every pruned slot. */
export const TAIL_PAGE_ROWS = 2000;

interface Page {
  offset: number;
  limit: number;
}

export type DistributionAnswer = WindowFigures & {
  count: number;
  min: number | null;
  max: number | null;
  buckets: Bucket[];
  quantiles: Quantiles;
};

const NO_QUANTILES = Object.fromEntries(QUANTILES.map(([name]) => [name, null])) as Quantiles;

/**
 * `admit` (counts) told a read's other calls (a group board over a sharded member board settling
 * first), each a read: LOOKUP_COUNTS_PER_READ counts.
 */
function readsCharged(admit: ScoreRead['admit']): ((calls: number) => void) | undefined {
  return admit && ((calls) => admit(calls * LOOKUP_COUNTS_PER_READ));
}

/**
 * The counts a distribution costs: every shard counts each inner bucket edge, and the quantiles are
 * read at their positions on one shard, or found over many by a search of at most `rounds` rounds,
 * every shard counting each quantile's probes each round.
 */
export function distributionCounts(shards: number, buckets: number, rounds: number): number {
  const quantiles = shards === 1 ? QUANTILES.length : shards * QUANTILES.length * PROBES_PER_QUANTILE * rounds;
  return shards * buckets + quantiles;
}

/** A sharded distribution's read: the most items a shard held at its first round (sizes its calls). */
type HeldRead = WindowRead & { mostHeld: number };

/** A record's would-be rank (GET …/rank) and a window's score distribution (GET …/distribution). */
@Injectable()
export class StandingService {
  constructor(
    private readonly sources: RankedSources,
    private readonly store: StandingStore,
  ) {}

  /**
   * The rank a record of `score` would get if written now: 1 + the items ahead of it (on a `ties: first`
   * board the items already holding that score are ahead: they reached it first). Its percentile is an
   * item's holding it: among the listed items and itself. A score the window would not list (0 or
   * less on a sum board) has neither. On an `order: asc` board the items ahead are those lower; on a
   * board with a tiebreak those of an equal score and a better tiebreak too.
   */
  rank(request: ScoreRead & { score: number; tiebreak?: number }): Promise<RankAnswer> {
    return this.sources.read(
      request.name,
      request.window,
      async (board, window, nowMs) => {
        // A record is its score alone, or on a board with a tiebreak the pair (tiebreak default 0).
        const order = tiebreakMarkOrder(board.config);
        if (request.tiebreak !== undefined && order === undefined)
          throw new InvalidInputError(M.noTiebreak(request.name));
        const mark = order === undefined ? undefined : tiebreakMark(order, request.tiebreak ?? 0);
        request.admit?.(board.shards.length);
        const read = { board, window, nowMs };
        const place = await this.store.place(read, request.score, strictRanks(board.config), mark);
        const rank = place.counted ? place.ahead + 1 : null;
        const percentile = percentileOf({ score: request.score, rank }, place.listed + 1);
        return { ...figures(request.name, window, nowMs, place.draining), score: request.score, rank, percentile };
      },
      (_, view) => Promise.reject(new InvalidInputError(M.standingReadsWindows(request.name, view.name))),
      undefined,
      request.metric,
      readsCharged(request.admit),
    );
  }

  /**
   * The first `limit` rows of a `tail` board's window, each with its `bound` (0: exact score and rank;
   * else the most its true count may exceed its score), certified over every shard (tailRows).
   */
  tailTop(request: ScoreRead & { limit: number }): Promise<TailTopAnswer> {
    return this.sources.read(
      request.name,
      request.window,
      (board, window, nowMs) => this.tailPage(board, window, nowMs, { offset: 0, limit: request.limit }),
      (_, view) => Promise.reject(new InvalidInputError(M.standingReadsWindows(request.name, view.name))),
    );
  }

  /** A page of a `tail` board's window (GET …/top): every shard's first offset + limit rows and more, certified. */
  async tailPage(board: PreparedBoard, window: WindowConfig, nowMs: number, page: Page): Promise<TailTopAnswer> {
    const tail = board.config.tail;
    if (tail === undefined) throw new InvalidInputError(M.noTail(board.config.name));
    const end = page.offset + page.limit;
    if (end > TAIL_PAGE_ROWS) throw new RequestTooCostlyError(M.tailPageTooDeep(board.config.name, TAIL_PAGE_ROWS));
    const asked = Math.max(end, tail.exact) + TAIL_LOOKAHEAD_ROWS;
    const shards = await this.store.tailTop({ board, window, nowMs }, asked);
    const rows = tailRows(
      shards.map((shard) => ({ ...shard, full: shard.rows.length === asked })),
      tail.exact,
    );
    const items = rows.slice(page.offset, end).map((row) => ({ ...row, previousRank: null }));
    return {
      ...figures(
        board.config.name,
        window,
        nowMs,
        shards.some((shard) => shard.draining),
      ),
      items,
    };
  }

  /** The listed items' count, range, `buckets` equal-width buckets over [min, max] and exact quantiles. */
  distribution(request: ScoreRead & { buckets: number }): Promise<DistributionAnswer> {
    let admitted = false; // a read sent again (a window still draining) is charged once
    return this.sources.read(
      request.name,
      request.window,
      async (board, window, nowMs) => {
        const read = { board, window, nowMs };
        const first = await this.store.spread(read, [], []);
        const count = first.reduce((sum, shard) => sum + shard.listed, 0);
        const answer = figures(
          request.name,
          window,
          nowMs,
          first.some((shard) => shard.draining),
        );
        const empty = { ...answer, count, min: null, max: null, buckets: [], quantiles: NO_QUANTILES };
        if (answer.draining || count === 0) return empty;
        const min = Math.min(...first.flatMap((shard) => (shard.min === null ? [] : [shard.min])));
        const max = Math.max(...first.flatMap((shard) => (shard.max === null ? [] : [shard.max])));
        // A quantile's search starts in its bucket: at most the rounds of one bucket's width.
        const rounds = searchRounds(0, Math.ceil((max - min) / request.buckets) + 1);
        if (!admitted) request.admit?.(distributionCounts(board.shards.length, request.buckets, rounds));
        admitted = true;
        const edges = bucketEdges(min, max, request.buckets);
        const mostHeld = Math.max(...first.map((part) => part.most));
        const { below, quantiles } = await this.countAndSelect({ ...read, mostHeld }, edges, count, max);
        return { ...answer, count, min, max, buckets: bucketsOf(edges, below, count), quantiles };
      },
      (_, view) => Promise.reject(new InvalidInputError(M.standingReadsWindows(request.name, view.name))),
      undefined,
      request.metric,
      readsCharged(request.admit),
    );
  }

  /**
   * The listed items below each inner bucket edge (summed over the shards) and each quantile's score.
   * On one shard both in one call, the quantiles read at their positions. Over many, the edges' counts
   * (one round) place each quantile in its bucket, where searchQuantiles finds it.
   */
  private async countAndSelect(
    read: HeldRead,
    edges: readonly number[],
    count: number,
    max: number,
  ): Promise<{ below: number[]; quantiles: Quantiles }> {
    const ranks = QUANTILES.map(([, percent]) => nearestRank(percent, count));
    const edgeBounds = bucketBounds(edges);
    if (!read.board.sharded) {
      const [shard] = await this.store.spread(
        read,
        edgeBounds,
        ranks.map((rank) => rank - 1),
      );
      return { below: shard.counts, quantiles: quantilesOf(shard.scores.map((score) => score ?? max)) };
    }
    const below =
      edgeBounds.length === 0 ? [] : (await this.store.countAndPick(read, edgeBounds, [], read.mostHeld)).counts;
    const searches = ranks.map((rank) => searchInBucket(rank, { edges, below, max, count }));
    return { below, quantiles: quantilesOf(await this.searchQuantiles(read, searches)) };
  }

  /**
   * Each quantile's score: the smallest with its nearest rank of items up to it. Each round every
   * shard counts the round's probes in one call, and reads whole the searches left with few enough
   * items to cost no more than a round's probes (pickOf): the take-th lowest of their scores is the
   * answer. A pick that came back short (its call's bound, data moved) goes on by probes.
   */
  private async searchQuantiles(read: HeldRead, started: Search[]): Promise<number[]> {
    const most = read.board.shards.length * PROBES_PER_QUANTILE;
    const pickable = started.map(() => true);
    let searches = started;
    // Each round cuts every interval into PROBES_PER_QUANTILE + 1 parts: `rounds` rounds end every
    // search, one more for a pick that came back short (the cap guards scores past 2^53, where an
    // interval may stop shrinking).
    const rounds = Math.max(...searches.map((search) => searchRounds(search.lo, search.hi))) + 1;
    for (let round = 0; round <= rounds; round++) {
      const picks = searches.map((search, i) => (pickable[i] ? pickOf(search, most) : undefined));
      const probes = searches.map((search, i) => (picks[i] ? [] : probesOf(search)));
      if (probes.every((list) => list.length === 0) && picks.every((pick) => !pick)) break;
      const asked = picks.flatMap((pick) => (pick ? [pick] : []));
      const bounds = probes.flat().map(String);
      const { counts, picked, cut } = await this.store.countAndPick(read, bounds, asked, read.mostHeld);
      let next = 0;
      searches = searches.map((search, i) => {
        const pick = picks[i];
        if (!pick) return narrowed(search, probes[i], counts.slice(next, (next += probes[i].length)));
        const score = cut ? undefined : pickedScore(pick.take, picked[asked.indexOf(pick)]);
        pickable[i] = false;
        return score === undefined ? search : { ...search, lo: score, hi: score };
      });
    }
    return searches.map((search) => search.hi);
  }
}

function quantilesOf(scores: readonly number[]): Quantiles {
  return Object.fromEntries(QUANTILES.map(([name], i) => [name, scores[i]])) as Quantiles;
}
