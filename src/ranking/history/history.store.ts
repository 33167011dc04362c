import { Injectable } from '@nestjs/common';
import { RedisFunctions } from '../../redis/redis-functions';
import { PreparedBoard, ShardKeys } from '../core/board';
import { guard } from '../core/ranking.errors';
import { HISTORY_ROWS_PER_CALL, MAX_CACHED_PREVIOUS_LISTINGS } from '../core/ranking.limits';
import type { HistoryPoint, ScoredItem, SnapshotListing } from '../core/ranking.types';
import { BoardCall, boardCall } from '../core/script-call';
import { mergeListings, rankRows } from '../core/shard-math';
import { ascendingScores } from '../options/registry';
import { slotStartSec, WindowConfig } from '../core/window-math';
import { SnapshotCount, SnapshotPoint, HistoryFunctions } from './history.functions';
import { RankingSettings } from '../core/ranking.settings';

/** A page of an item's history: from `fromSec` to `toSec` (unix s, boundaries of kept snapshots). */
export interface ItemHistoryRead {
  board: PreparedBoard;
  window: WindowConfig;
  nowMs: number;
  item: string;
  fromSec: number;
  toSec: number;
}

/** Snapshots: a window's listing at a boundary, an item through them, and each window's previous ranks. */
@Injectable()
export class HistoryStore {
  private readonly budgetFields: number;
  /**
   * Sharded boards: each window's latest snapshot merged over the shards (item -> rank), read once per
   * slot per instance (snapshots never change once taken), so previousRank costs no round trip per request.
   */
  private readonly previousListings = new Map<
    string,
    { version: string; slotSec: number; ranks: Promise<Map<string, number>> }
  >();
  private readonly fns: HistoryFunctions['functions'];

  constructor(
    private readonly functions: RedisFunctions,
    part: HistoryFunctions,
    settings: RankingSettings,
  ) {
    this.budgetFields = settings.expireChunk;
    this.fns = part.functions;
    functions.define([part.library]);
  }

  /**
   * The window's snapshot at or before `atSec` (undefined: the latest), merged over the shards (each
   * shard's snapshot at or before that time; the answer is at the latest of theirs) and cut to the
   * window's `top`, without the rows the listing leaves out now (moderation), ranked among the rest as
   * top ranks (`shown` false: with them, the rows as kept, which a retraction's cut reads). keeps: false
   * when the window keeps no snapshots; listing undefined when none is kept for that time.
   */
  async history(
    board: PreparedBoard,
    window: WindowConfig,
    nowMs: number,
    atSec: number | undefined,
    { shown = true } = {},
  ): Promise<{ keeps: boolean; listing?: SnapshotListing }> {
    const replies = await Promise.all(
      board.shards.map((shard) =>
        guard(this.functions.call(this.fns.historyRead, { ...this.on(board, shard, nowMs), window, atSec })),
      ),
    );
    if (!replies.some((reply) => reply.keeps)) return { keeps: false };
    const found = replies.flatMap((reply) => (reply.snapshot ? [reply.snapshot] : []));
    if (found.length === 0) return { keeps: true };
    const leftOut = new Set(shown ? found.flatMap((snapshot) => snapshot.leftOut) : []);
    const rows = mergeListings(
      found.map((snapshot) => snapshot.rows),
      ascendingScores(board.config),
    )
      .slice(0, window.snapshots?.top)
      .filter((row) => !leftOut.has(row.item));
    return {
      keeps: true,
      listing: { atSec: Math.max(...found.map((snapshot) => snapshot.atSec)), items: rankRows(rows, 0, 0) },
    };
  }

  /**
   * An item's rank and score in each kept snapshot between fromSec and toSec, oldest first. On a sharded
   * board the item's shard answers its scores and the other shards count the rows above them: a rank
   * beyond the snapshot's rows is answered as not listed, as on an unsharded board. The rows the
   * listing leaves out now (moderation) are counted by the same calls and not ranked, as the window's
   * history answers them; an item left out now (`hidden`) keeps its scores, rank null. One page: about
   * HISTORY_ROWS_PER_CALL snapshot rows are scanned per call (on each shard); nextSec is where the
   * next page starts (null: the range is answered).
   */
  async itemHistory(
    read: ItemHistoryRead,
  ): Promise<{ keeps: boolean; nextSec: number | null; hidden: boolean; points: HistoryPoint[] }> {
    const { board, window, nowMs, item, fromSec, toSec } = read;
    const home = board.shardOf(item);
    const top = window.snapshots?.top ?? 0;
    const mostSnapshots = Math.max(1, Math.floor(HISTORY_ROWS_PER_CALL / Math.max(1, top)));
    const own = await guard(
      this.functions.call(this.fns.historyItem, {
        ...this.on(board, home, nowMs),
        window,
        item,
        fromSec,
        toSec,
        mostSnapshots,
      }),
    );
    const elsewhere = await this.aboveElsewhere(read, home, own.points);
    return {
      keeps: own.keeps,
      nextSec: own.nextSec,
      hidden: own.hidden,
      points: own.points.map((point) => {
        const other = elsewhere.get(point.atSec) ?? { above: 0, leftOut: 0 };
        const rank = point.above < 0 ? null : point.above + other.above + 1;
        if (rank === null || rank > top) return { at: point.atSec, rank: null, score: null };
        if (own.hidden) return { at: point.atSec, rank: null, score: point.score };
        return { at: point.atSec, rank: rank - point.leftOut - other.leftOut, score: point.score };
      }),
    };
  }

  /**
   * Sharded boards: the window's latest snapshot over every shard without the items left out now
   * (moderation, answered by the same read of each shard), item -> rank, cached per slot. A moderation
   * change forgets this instance's cache (forgetPreviousRanks); other instances follow at their next slot.
   */
  previousRanks(board: PreparedBoard, window: WindowConfig, nowMs: number): Promise<Map<string, number>> {
    if (!window.snapshots) return Promise.resolve(new Map());
    const key = `${board.config.name}\x1f${board.keys.windowKeyName(window.name)}`;
    const slotSec = slotStartSec(Math.floor(nowMs / 1000), window.intervalSec);
    const cached = this.previousListings.get(key);
    if (cached && cached.version === board.config.version && cached.slotSec === slotSec) return cached.ranks;
    if (this.previousListings.size >= MAX_CACHED_PREVIOUS_LISTINGS) this.previousListings.clear();
    const ranks = this.history(board, window, nowMs, undefined).then(
      ({ listing }) => new Map((listing?.items ?? []).map((row) => [row.item, row.rank])),
    );
    this.previousListings.set(key, { version: board.config.version, slotSec, ranks });
    ranks.catch(() => this.previousListings.delete(key));
    return ranks;
  }

  /**
   * Forgets this instance's cached previous ranks of a board (an item retraction rewrote its snapshots,
   * or a moderation change shows other rows); other instances' caches follow at their next slot.
   */
  forgetPreviousRanks(boardName: string): void {
    for (const key of this.previousListings.keys()) {
      if (key.startsWith(`${boardName}\x1f`)) this.previousListings.delete(key);
    }
  }

  /**
   * Sharded boards, before an item retraction takes the item's rows out of the window's kept snapshots:
   * at each boundary where the item is listed board-wide, every shard's snapshot is cut to the board's
   * rows. Each shard keeps its own top rows, so the merge also holds rows past the board's `top` (which
   * an unsharded board never stored): once the item's row goes, the next would move in. Cut first, the
   * board answers what an unsharded one does. Changes no answer by itself (the merge reads the board's
   * rows only). Costs, per boundary listing the item, one read and one cut of each shard.
   */
  async cutToBoard(board: PreparedBoard, window: WindowConfig, item: string, nowMs: number): Promise<void> {
    const top = window.snapshots?.top;
    if (!board.sharded || top === undefined || window.calendar) return;
    const toSec = Math.floor(nowMs / 1000);
    for (let fromSec: number | null = 0; fromSec !== null;) {
      const page = await this.itemHistory({ board, window, nowMs, item, fromSec, toSec });
      for (const point of page.points.filter((p) => p.rank !== null)) {
        const { listing } = await this.history(board, window, nowMs, point.at, { shown: false });
        const last = listing?.items[top - 1];
        if (last === undefined) continue;
        await this.cutEveryShard(board, window, nowMs, point.at, last);
      }
      fromSec = page.nextSec;
    }
  }

  /**
   * Cuts the window's kept listing at `atSec` (a snapshot, or a calendar window's archive) on every
   * shard of the board to the rows down to `last` (snapshot_cut.lua; see cutToBoard).
   */
  async cutEveryShard(
    board: PreparedBoard,
    window: WindowConfig,
    nowMs: number,
    atSec: number,
    last: ScoredItem,
  ): Promise<void> {
    const cut = { ...this.on(board, board.shards[0], nowMs), window, atSec, last };
    await Promise.all(board.shards.map((shard) => guard(this.functions.call(this.fns.snapshotCut, { ...cut, shard }))));
  }

  /** Rows above each listed point's score (and those left out) on the shards other than the item's own, by boundary. */
  private async aboveElsewhere(read: ItemHistoryRead, home: ShardKeys, points: SnapshotPoint[]) {
    const { board, window, nowMs } = read;
    const listed = points.filter((point) => point.above >= 0);
    const others = await Promise.all(
      board.shards
        .filter((shard) => shard !== home && listed.length > 0)
        .map((shard) =>
          guard(
            this.functions.call(this.fns.historyCount, { ...this.on(board, shard, nowMs), window, points: listed }),
          ),
        ),
    );
    const sum = (i: number, field: keyof SnapshotCount) =>
      others.reduce((total, counts) => total + counts[i][field], 0);
    return new Map(listed.map((point, i) => [point.atSec, { above: sum(i, 'above'), leftOut: sum(i, 'leftOut') }]));
  }

  private on(board: PreparedBoard, shard: ShardKeys, nowMs: number): BoardCall {
    return boardCall(board, shard, nowMs, this.budgetFields);
  }
}
