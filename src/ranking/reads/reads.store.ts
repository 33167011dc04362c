import { Injectable } from '@nestjs/common';
import { RedisService } from '../../redis/redis.service';
import { RedisFunctions } from '../../redis/redis-functions';
import { PreparedBoard, ShardKeys } from '../core/board';
import { RankedReader, RankedSource, ShardPage } from '../core/ranked-reader';
import { guard } from '../core/ranking.errors';
import type { RankedRow, ScoredItem, Standing } from '../core/ranking.types';
import { BoardCall, boardCall } from '../core/script-call';
import type { WindowConfig } from '../core/window-math';
import { HistoryStore } from '../history/history.store';
import { ShardsStore } from '../shards/shards.store';
import { ListingReply, SegmentPage, SegmentRow, ReadsFunctions } from './reads.functions';
import { WindowDrainingError } from '../../common/errors';
import { MAX_READ_DRAIN_CALLS, METRIC_COUNTS_PER_CALL } from '../core/ranking.limits';
import { RANKING_MESSAGES as M } from '../core/ranking.messages';
import { RankingSettings } from '../core/ranking.settings';
import { ascendingScores, keptScore, strictRanks } from '../options/registry';
import { tiebreakMarkOrder, tiebreakOfMark } from '../options/tiebreak/tiebreak.option';

/** A read of one window of a board at one time. */
export interface WindowRead {
  board: PreparedBoard;
  window: WindowConfig;
  nowMs: number;
}

/** A live segment as listed: the most items one of its windows lists over the board. */
export type SegmentAnswer = { name: string; items: number };

/** Names in byte order (as Redis orders them). */
const byteOrder = (a: string, b: string): number => Buffer.compare(Buffer.from(a), Buffer.from(b));

/** A window's row as a shard answers it: its previous rank in that shard's latest snapshot. */
type WindowRow = ScoredItem & { previousRank: number | null };

/**
 * Window reads as a ranked source (read_top, read_item, read_around, read_neighbours, count_above):
 * the reader answers them on one shard or many. An unsharded row's previous rank comes with it; a
 * sharded board's are the board-wide ones of its latest snapshots (HistoryStore.previousRanks).
 */
@Injectable()
export class ReadsStore {
  private readonly budgetFields: number;
  private readonly reader: RankedReader;
  /** Refuses (503 REDIS_BUSY) before each command of a sharded read while Redis is busy. */
  private readonly admit: () => void;
  private readonly fns: ReadsFunctions['functions'];

  constructor(
    redis: RedisService,
    private readonly functions: RedisFunctions,
    part: ReadsFunctions,
    settings: RankingSettings,
    private readonly shards: ShardsStore,
    private readonly history: HistoryStore,
  ) {
    this.budgetFields = settings.expireChunk;
    this.fns = part.functions;
    functions.define([part.library]);
    this.admit = () => redis.admit();
    this.reader = new RankedReader(this.admit);
  }

  async top(read: WindowRead, offset: number, limit: number): Promise<{ draining: boolean; items: RankedRow[] }> {
    const previous = this.previousRanks(read);
    const page = await this.reader.top(read.board, this.sourceOf(read), offset, limit);
    return { draining: page.draining, items: withTiebreaks(read, await withBoardPreviousRanks(page.rows, previous)) };
  }

  async item(
    read: WindowRead,
    item: string,
  ): Promise<{ draining: boolean; standing: Standing; ranked: number; hidden: boolean }> {
    const { draining, score, rank, listed, row, hidden } = await this.reader.item(
      read.board,
      this.sourceOf(read),
      item,
    );
    const [standing] = withTiebreaks(read, [{ score, rank, tie: row?.tie }]);
    return { draining, standing, ranked: listed, hidden };
  }

  async around(read: WindowRead, item: string, radius: number): Promise<{ draining: boolean; items: RankedRow[] }> {
    const page = await this.reader.around(read.board, this.sourceOf(read), item, radius);
    const previous = page.rows.length === 0 ? undefined : this.previousRanks(read);
    return { draining: page.draining, items: withTiebreaks(read, await withBoardPreviousRanks(page.rows, previous)) };
  }

  /**
   * Each metric's count of `items` in the window (metrics option; `read.board` any metric's board): the
   * items of each shard in calls of at most METRIC_COUNTS_PER_CALL counts, each expiring every metric's
   * window first. The calls are not one snapshot: a write landing between two of them shows in the
   * later call's rows only, as a write between the page's read and its counts does.
   */
  async metricCounts(read: WindowRead, items: string[]): Promise<{ draining: boolean; counts: Map<string, number[]> }> {
    const { board, window, nowMs } = read;
    const metrics = board.config.metrics ?? [];
    const chunks = metricChunks(board, items);
    const replies = await Promise.all(
      chunks.map(({ shard, items: chunk }) => {
        const metricKeys = metrics.flatMap((metric) => {
          const keys = board.metric(metric).shards[shard].keys;
          return [keys.slots(window.name), keys.top(window.name)];
        });
        const call = { ...boardCall(board, board.shards[shard], nowMs, this.budgetFields), window };
        return guard(this.functions.call(this.fns.metricCounts, { ...call, metricKeys, items: chunk }));
      }),
    );
    const counts = new Map<string, number[]>();
    chunks.forEach((chunk, i) => chunk.items.forEach((item, k) => counts.set(item, replies[i].counts[k])));
    return { draining: replies.some((reply) => reply.draining), counts };
  }

  /** metricCounts' count entries (a row's count of each metric) and calls for the rows of `items`. */
  metricsCost(board: PreparedBoard, items: readonly string[]): { entries: number; calls: number } {
    const metrics = board.config.metrics?.length ?? 0;
    if (metrics === 0) return { entries: 0, calls: 0 };
    return { entries: new Set(items).size * metrics, calls: metricChunks(board, items).length };
  }

  /**
   * Up to `limit` of the board's live segments after `after` (byte order), each with the most items one
   * of its windows lists over the whole board: an item's segment rows live on the item's shard, so each
   * window's count is added up over the shards before the largest is taken. Each shard's call weighs at
   * most `units` (segmentPageUnits), so a shard may stop early: the page then ends at the first name
   * some shard has not looked past, and `next` says where the next page starts (null: nothing follows).
   */
  async segments(board: PreparedBoard, nowMs: number, after: string, limit: number, units: number) {
    const pages = await Promise.all(
      board.shards.map((shard) => this.segmentPage(board, shard, nowMs, after, limit, units)),
    );
    const open = pages.filter((page) => !page.ended).map((page) => page.last);
    const cutoff = open.length === 0 ? undefined : open.reduce((a, b) => (byteOrder(a, b) <= 0 ? a : b));
    const windowItems = new Map<string, number[]>();
    for (const row of pages.flatMap((page) => page.rows)) {
      if (cutoff !== undefined && byteOrder(row.name, cutoff) > 0) continue;
      const sums = windowItems.get(row.name);
      windowItems.set(row.name, sums ? sums.map((items, w) => items + row.windowItems[w]) : row.windowItems);
    }
    const names = [...windowItems.keys()].sort(byteOrder);
    const rows: SegmentAnswer[] = names
      .slice(0, limit)
      .map((name) => ({ name, items: Math.max(0, ...windowItems.get(name)!) }));
    const next = names.length > limit ? names[limit - 1] : (cutoff ?? null);
    return { rows, next };
  }

  /**
   * One shard's page of segments, each counted only once drained: a call that stopped before a segment
   * still holding expired data (its budget spent) is sent again from its last name, each time draining
   * one more budget, up to MAX_READ_DRAIN_CALLS; still draining then, it is a 503 WINDOW_DRAINING, as a
   * window read (the scheduler and the next reads go on draining).
   */
  private async segmentPage(
    board: PreparedBoard,
    shard: ShardKeys,
    nowMs: number,
    after: string,
    limit: number,
    units: number,
  ): Promise<SegmentPage> {
    const rows: SegmentRow[] = [];
    let last = after;
    for (let call = 1; ; call++) {
      const page = await guard(
        this.functions.call(this.fns.segmentPage, {
          ...boardCall(board, shard, nowMs, this.budgetFields),
          after: last,
          limit: limit - rows.length,
          units,
        }),
      );
      rows.push(...page.rows);
      last = page.last === '' ? last : page.last;
      if (!page.draining) return { ...page, last, rows };
      if (call >= MAX_READ_DRAIN_CALLS)
        throw new WindowDrainingError(M.windowDraining(board.config.name, MAX_READ_DRAIN_CALLS));
    }
  }

  /** A sharded board's previous ranks (read beside the rows); undefined when the rows carry their own. */
  private previousRanks(read: WindowRead): Promise<Map<string, number>> | undefined {
    if (!read.board.sharded) return undefined;
    // Its first command: shed like the shards' reads it comes with.
    this.admit();
    const previous = this.history.previousRanks(read.board, read.window, read.nowMs);
    // Handled here, awaited later: a failing page read must not leave it an unhandled rejection.
    previous.catch(() => undefined);
    return previous;
  }

  private sourceOf(read: WindowRead): RankedSource<WindowRow> {
    const { board, window } = read;
    const on = (shard: ShardKeys) => ({ ...this.on(read, shard), window });
    return {
      strict: strictRanks(board.config),
      ascending: ascendingScores(board.config),
      tiebreak: board.config.tiebreak !== undefined,
      head: (shard, offset, limit) => this.head(read, shard, offset, limit),
      standing: async (shard, item) => {
        const own = await guard(this.functions.call(this.fns.readItem, { ...on(shard), item }));
        const { score, rank } = own.standing;
        const row =
          rank === null ? undefined : { item, score, previousRank: null, ...(own.tie ? { tie: own.tie } : {}) };
        const above = rank === null ? 0 : rank - 1;
        return { draining: own.draining, row, score, above, listed: own.ranked, hidden: own.hidden };
      },
      countAbove: (shards, score, tie) => this.countAbove(read, shards, score, tie),
      around: async (shard, item, radius) => {
        const reply = await guard(this.functions.call(this.fns.readAround, { ...on(shard), item, radius }));
        return { ...pageOf(reply), firstPosition: reply.firstPosition };
      },
      neighbours: async (shard, pivot, radius) => {
        const reply = await guard(this.functions.call(this.fns.readNeighbours, { ...on(shard), ...pivot, radius }));
        const anySign = keptScore(board.config) !== undefined;
        const unranked = (rows: ScoredItem[]) => rows.map((row) => ({ ...row, previousRank: null }));
        return {
          draining: reply.draining,
          position: reply.position,
          above: reply.above,
          before: unranked(reply.before),
          // On a sum board rows after the place may sum to 0 or less: they are not listed.
          after: unranked(reply.after.filter((row) => anySign || row.score > 0)),
        };
      },
    };
  }

  /** A page of one shard: a sharded board's previous ranks are the board's (top reads them apart), no shard reads its own. */
  private async head(read: WindowRead, shard: ShardKeys, offset: number, limit: number) {
    const call = { ...this.on(read, shard), window: read.window, offset, limit, previousRanks: !read.board.sharded };
    return pageOf(await guard(this.functions.call(this.fns.readTop, call)));
  }

  /** Items ahead of a score (and tie mark) over every shard, or every shard but the item's own: what the reader asks. */
  private async countAbove(read: WindowRead, shards: ShardKeys[], score: number, tie: string | undefined) {
    const { board, window, nowMs } = read;
    const except = board.shards.find((shard) => !shards.includes(shard));
    const marks = tie === undefined ? undefined : [tie];
    const counts = await this.shards.countAbove({
      board,
      except,
      windows: [window],
      nowMs,
      scores: [score],
      marks,
      ranked: true,
    });
    return { draining: counts.draining, above: counts.above[0], listed: counts.ranked[0] };
  }

  private on(read: WindowRead, shard: ShardKeys): BoardCall {
    return boardCall(read.board, shard, read.nowMs, this.budgetFields);
  }
}

/** A listing page's rows, each with its previous rank as the script answered it. */
function pageOf(reply: ListingReply): ShardPage<WindowRow> {
  const rows = reply.rows.map((row, i) => ({ ...row, previousRank: reply.previousRanks[i] }));
  return { draining: reply.draining, rows, higherThanFirst: reply.higherThanFirst };
}

/** Ranked rows with the board's previous ranks when they were read apart (a sharded board), else their own. */
async function withBoardPreviousRanks(
  rows: Array<WindowRow & { rank: number }>,
  previous: Promise<Map<string, number>> | undefined,
): Promise<RankedRow[]> {
  const ranks = await previous;
  return rows.map(({ rank, item, score, previousRank, tie }) => ({
    rank,
    item,
    score,
    previousRank: ranks === undefined ? previousRank : (ranks.get(item) ?? null),
    ...(tie === undefined ? {} : { tie }),
  }));
}

/** Rows (or a standing) on a board with a tiebreak, each with its pair's tiebreak (its mark's) beside its score; the mark goes. */
function withTiebreaks<Row extends { tie?: string; rank: number | null }>(read: WindowRead, rows: Row[]) {
  const order = tiebreakMarkOrder(read.board.config);
  return rows.map(({ tie, ...row }) => {
    const tiebreak = order === undefined || row.rank === null ? undefined : tiebreakOfMark(order, tie);
    return tiebreak === undefined ? row : { ...row, tiebreak };
  });
}

/** metricCounts' calls: the rows of each shard in parts of at most METRIC_COUNTS_PER_CALL counts. */
function metricChunks(board: PreparedBoard, items: readonly string[]): Array<{ shard: number; items: string[] }> {
  const metrics = board.config.metrics ?? [];
  const perCall = Math.max(1, Math.floor(METRIC_COUNTS_PER_CALL / Math.max(1, metrics.length)));
  const byShard = new Map<number, string[]>();
  for (const item of new Set(items)) {
    const shard = board.shards.indexOf(board.shardOf(item));
    const held = byShard.get(shard);
    if (held) held.push(item);
    else byShard.set(shard, [item]);
  }
  return [...byShard].flatMap(([shard, shardItems]) =>
    Array.from({ length: Math.ceil(shardItems.length / perCall) }, (_, k) => ({
      shard,
      items: shardItems.slice(k * perCall, (k + 1) * perCall),
    })),
  );
}
