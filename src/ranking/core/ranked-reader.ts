import { InvalidInputError } from '../../common/errors';
import type { PreparedBoard, ShardKeys } from './board';
import { MAX_SHARDED_DEPTH_ITEMS } from './ranking.limits';
import { RANKING_MESSAGES as M } from './ranking.messages';
import type { ScoredItem } from './ranking.types';
import { mergeListings, mergeShardHeads, rankRows } from './shard-math';

/** A page of one shard's listing: its rows in board order and how many of the shard's items score above the first. */
export interface ShardPage<Row extends ScoredItem> {
  draining: boolean;
  rows: Row[];
  higherThanFirst: number;
}

/** An around read of one unsharded source: the page, and the first row's 0-based position (-1: item not listed). */
export interface ShardAround<Row extends ScoredItem> extends ShardPage<Row> {
  firstPosition: number;
}

/** An item on its own shard: its row when listed, its score (0 when it holds nothing), the shard's items above it and listed. */
export interface ShardStanding<Row extends ScoredItem> {
  draining: boolean;
  row: Row | undefined;
  score: number;
  above: number;
  listed: number;
  /** Held at a score the source lists, and left out of its listing (moderation); absent: false. */
  hidden?: boolean;
}

/** Over a set of shards: how many items score above a score, and how many are listed. */
export interface ShardCount {
  draining: boolean;
  above: number;
  listed: number;
}

/** One shard's rows just before and just after the place a (score, item) pair takes in board order. */
export interface ShardNeighbours<Row extends ScoredItem> {
  draining: boolean;
  /** The shard's items before the place, and those scoring above the pair's score. */
  position: number;
  above: number;
  before: Row[];
  after: Row[];
}

/**
 * A ranked source of a board (a window, a span of it, a trending view — next a segment's or a
 * calendar period's window): what it answers on one shard, each in one call. The reader turns these
 * into board answers on one shard or many, so no source writes its own merge or rank arithmetic.
 */
export interface RankedSource<Row extends ScoredItem> {
  head(shard: ShardKeys, offset: number, count: number): Promise<ShardPage<Row>>;
  standing(shard: ShardKeys, item: string): Promise<ShardStanding<Row>>;
  /** `tie`: the item's tie mark (a sharded `ties: first` board): items of an equal score and an earlier mark count too. */
  countAbove(shards: ShardKeys[], score: number, tie?: string): Promise<ShardCount>;
  around(shard: ShardKeys, item: string, radius: number): Promise<ShardAround<Row>>;
  /** Absent (a view): a sharded around reads the page of the board listing around the item's rank instead. */
  neighbours?(shard: ShardKeys, pivot: ScoredItem, radius: number): Promise<ShardNeighbours<Row>>;
  /**
   * Strict ranks (a window of a `ties: first` board): a row's rank is its position, ties included. On a
   * sharded board its rows carry tie marks (ScoredItem.tie), which order equal scores in the merge.
   */
  readonly strict?: boolean;
  /** Lower scores rank higher (an `order: asc` board): shards' rows merge lowest score first. */
  readonly ascending?: boolean;
  /** Rows carry marks that rank too (a tiebreak's, shared by equal pairs): ranks compare (score, mark). */
  readonly tiebreak?: boolean;
}

/** A row with its board-wide competition rank, the source's own fields kept. */
export type Ranked<Row extends ScoredItem> = Row & { rank: number };

export interface RankedPage<Row extends ScoredItem> {
  draining: boolean;
  rows: Array<Ranked<Row>>;
}

export interface RankedStanding<Row extends ScoredItem> {
  draining: boolean;
  row: Row | undefined;
  score: number;
  rank: number | null;
  /** Items listed board-wide (for the percentile). */
  listed: number;
  /** Held at a score the source lists, and left out of its listing (moderation). */
  hidden: boolean;
}

/** Ranks rows like rankRows (competition ranks on their scores, or `strict` positions), keeping each row's own fields. */
function ranked<Row extends ScoredItem>(
  rows: Row[],
  firstPosition: number,
  higherThanFirst: number,
  strict = false,
): Array<Ranked<Row>> {
  return rankRows(rows, firstPosition, higherThanFirst, strict).map((row, i) => ({ ...rows[i], rank: row.rank }));
}

/** An unsharded source's page ranked from its first row's 0-based position (-1: the item asked is not listed, no rows). */
function rankedPage<Row extends ScoredItem>(
  page: ShardPage<Row>,
  firstPosition: number,
  strict: boolean | undefined,
): RankedPage<Row> {
  const rows = firstPosition === -1 ? [] : ranked(page.rows, firstPosition, page.higherThanFirst, strict);
  return { draining: page.draining, rows };
}

/** The three questions of every ranked source — a page, an item's standing, an item's neighbours — on one shard or many. */
export class RankedReader {
  constructor(private readonly admit: () => void = () => {}) {}

  async top<Row extends ScoredItem>(
    board: PreparedBoard,
    source: RankedSource<Row>,
    offset: number,
    limit: number,
  ): Promise<RankedPage<Row>> {
    if (!board.sharded) return rankedPage(await source.head(board.shards[0], offset, limit), offset, source.strict);
    // The board's head down to offset + limit, read progressively (mergeShardHeads): ranks count from the top.
    const depth = offset + limit;
    let draining = false;
    const { rows } = await mergeShardHeads(
      board.shards.length,
      depth,
      async (shard, from, count) => {
        this.admit();
        const page = await source.head(board.shards[shard], from, count);
        draining ||= page.draining;
        return page.rows;
      },
      source.ascending,
    );
    return { draining, rows: ranked(rows, 0, 0, source.strict).slice(offset, depth) };
  }

  async item<Row extends ScoredItem>(
    board: PreparedBoard,
    source: RankedSource<Row>,
    item: string,
  ): Promise<RankedStanding<Row>> {
    const home = board.shardOf(item);
    const own = await source.standing(home, item);
    const others = board.sharded
      ? await source.countAbove(
          board.shards.filter((shard) => shard !== home),
          own.score,
          own.row?.tie,
        )
      : { draining: false, above: 0, listed: 0 };
    const rank = own.row === undefined ? null : own.above + others.above + 1;
    return {
      draining: own.draining || others.draining,
      row: own.row,
      score: own.score,
      rank,
      listed: own.listed + others.listed,
      hidden: own.hidden === true,
    };
  }

  async around<Row extends ScoredItem>(
    board: PreparedBoard,
    source: RankedSource<Row>,
    item: string,
    radius: number,
  ): Promise<RankedPage<Row>> {
    if (!board.sharded) {
      const page = await source.around(board.shards[0], item, radius);
      return rankedPage(page, page.firstPosition, source.strict);
    }
    if (!source.neighbours) return this.aroundByRank(board, source, item, radius);
    const own = await source.standing(board.shardOf(item), item);
    if (own.row === undefined) return { draining: own.draining, rows: [] };
    const around = await this.aroundOverShards(board, source, own.row, radius);
    return { draining: own.draining || around.draining, rows: around.rows };
  }

  /**
   * A sharded around without a neighbours read: the page of the board listing around the item's rank,
   * bounded like a deep top page. Items tied with it may come before it (its rank is its tie group's
   * first), so the page starts radius rows above its rank and, while it neither holds the item with
   * radius rows after it nor ends the listing, is read again twice as long (at most twice the rows of
   * the last page, which stops at the item's radius-th row past it or the depth bound).
   */
  private async aroundByRank<Row extends ScoredItem>(
    board: PreparedBoard,
    source: RankedSource<Row>,
    item: string,
    radius: number,
  ): Promise<RankedPage<Row>> {
    const own = await this.item(board, source, item);
    if (own.rank === null) return { draining: own.draining, rows: [] };
    const offset = Math.max(0, own.rank - 1 - radius);
    if (offset >= MAX_SHARDED_DEPTH_ITEMS) throw new InvalidInputError(M.shardedAroundTooDeep(MAX_SHARDED_DEPTH_ITEMS));
    let limit = 4 * radius + 1;
    for (;;) {
      limit = Math.min(MAX_SHARDED_DEPTH_ITEMS - offset, limit);
      const page = await this.top(board, source, offset, limit);
      const at = page.rows.findIndex((row) => row.item === item);
      const draining = own.draining || page.draining;
      const ended = page.rows.length < limit;
      if (at !== -1 && (at + radius < page.rows.length || ended))
        return { draining, rows: page.rows.slice(Math.max(0, at - radius), at + radius + 1) };
      // Gone from the listing since its rank was read, or moved out of the page (a racing write).
      const deepest = page.rows[page.rows.length - 1].score;
      if (ended || (at === -1 && (source.ascending ? deepest > own.score : deepest < own.score)))
        return { draining, rows: [] };
      if (offset + limit >= MAX_SHARDED_DEPTH_ITEMS)
        throw new InvalidInputError(M.shardedAroundTooDeep(MAX_SHARDED_DEPTH_ITEMS));
      limit *= 2;
    }
  }

  /** The pivot's neighbours on every shard, merged: up to `radius` rows each side, ranked board-wide. */
  private async aroundOverShards<Row extends ScoredItem>(
    board: PreparedBoard,
    source: RankedSource<Row>,
    pivot: Row,
    radius: number,
  ): Promise<RankedPage<Row>> {
    const neighbours = source.neighbours!.bind(source);
    const replies = await Promise.all(board.shards.map((shard) => neighbours(shard, pivot, radius)));
    const position = replies.reduce((sum, reply) => sum + reply.position, 0);
    const before = mergeListings(
      replies.map((reply) => reply.before),
      source.ascending,
    ).slice(-radius);
    const after = mergeListings(
      replies.map((reply) => reply.after),
      source.ascending,
    ).slice(0, radius);
    const rows = [...before, pivot, ...after];
    const firstPosition = position - before.length;
    // Items above the first row: the replies counted them when it ties the pivot; at the top, none
    // (strict ranks are positions: nothing to count).
    const counted =
      firstPosition === 0 || (rows[0].score === pivot.score && !source.tiebreak) || source.strict
        ? { draining: false, above: firstPosition === 0 ? 0 : replies.reduce((sum, reply) => sum + reply.above, 0) }
        : await source.countAbove(board.shards, rows[0].score, source.tiebreak ? rows[0].tie : undefined);
    const draining = replies.some((reply) => reply.draining) || counted.draining;
    return { draining, rows: ranked(rows, firstPosition, counted.above, source.strict) };
  }
}
