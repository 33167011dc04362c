import { Injectable } from '@nestjs/common';
import { PreparedBoard, ShardKeys } from '../core/board';
import { guard } from '../core/ranking.errors';
import {
  PAGED_READ_ATTEMPTS,
  HISTORY_ROWS_PER_CALL,
  MAX_CACHED_PREVIOUS_LISTINGS,
  PREVIOUS_RANKS_FRESH_MS,
} from '../core/ranking.limits';
import type { HistoryPoint, ScoredItem, SnapshotListing } from '../core/ranking.types';
import { BoardCall, boardCall } from '../core/script-call';
import { boardOrder, mergeListings, rankRows } from '../core/shard-math';
import { ascendingScores } from '../options/registry';
import { withRowTiebreaks } from '../options/tiebreak/tiebreak.option';
import { stepStartSec } from '../../common/duration';
import { slotRule, WindowConfig } from '../core/window-math';
import { ListingAsk, HistoryFunctions, ShardAsked, SnapshotPage, StoredSnapshot } from './history.functions';
import { mergedSnapshots, pagesWanted, type ShardSnapshot } from './snapshot-pages';
import { WindowDrainingError } from '../../common/errors';
import { sliceStore } from '../core/slice-store';
import { aboveElsewhere, type ItemHistoryRead } from './counts-elsewhere';

/** Snapshots: a window's listing at a boundary, an item through them, and each window's previous ranks. */
@Injectable()
export class HistoryStore extends sliceStore(HistoryFunctions) {
  /**
   * Sharded boards: each window's latest snapshot merged over the shards (item -> rank), read at most
   * once per PREVIOUS_RANKS_FRESH_MS and slot per instance, so previousRank costs no round trip per request.
   */
  private readonly previousListings = new Map<
    string,
    { version: string; slotSec: number; readAtMs: number; ranks: Promise<Map<string, number>> }
  >();

  /**
   * The window's snapshot at or before `atSec` (undefined: the latest), merged over the shards (each
   * shard's snapshot at or before that time; the answer is at the latest of theirs; on a calendar window
   * only the shards' archives of that period: a shard that scored nothing in it has none, and its
   * older period's rows are not the board's) and cut to the window's `top`, without the rows the
   * listing leaves out now (moderation), ranked among the rest as top ranks (`shown` false: with them,
   * the rows as kept, which a retraction's cut reads). keeps: false when the window keeps no snapshots;
   * listing undefined when none is kept for that time.
   */
  async history(
    board: PreparedBoard,
    window: WindowConfig,
    nowMs: number,
    atSec: number | undefined,
    { shown = true } = {},
  ): Promise<{ keeps: boolean; listing?: SnapshotListing }> {
    return this.merged(board, window, await this.readShards(board, window, nowMs, atSec), shown);
  }

  /**
   * An item's rank and score in each kept snapshot between fromSec and toSec, oldest first. On a sharded
   * board the item's shard answers its scores and the other shards count the rows above them: a rank
   * beyond the snapshot's rows is answered as not listed, as on an unsharded board. The rows the
   * listing leaves out now (moderation) are counted by the same calls and not ranked, as the window's
   * history answers them; an item left out now (`hidden`) keeps its scores, rank null. One page: about
   * HISTORY_ROWS_PER_CALL snapshot rows are scanned per call (on each shard); nextSec is where the
   * next page starts (null: the range is answered). draining: on a calendar window, a period archived
   * on the item's shard is still being archived on another (archive_lib, shard by shard, in chunks:
   * its rows there are not all counted; that shard's call drained a chunk): the caller reads again.
   */
  async itemHistory(
    read: ItemHistoryRead,
  ): Promise<{ keeps: boolean; nextSec: number | null; hidden: boolean; points: HistoryPoint[]; draining: boolean }> {
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
    const { draining, above: elsewhere } = await aboveElsewhere(this, read, home, own.points);
    const points = own.points.map((point): HistoryPoint => {
      const other = elsewhere.get(point.atSec) ?? { above: 0, leftOut: 0 };
      const rank = point.above < 0 ? null : point.above + other.above + 1;
      if (rank === null || rank > top) return { at: point.atSec, rank: null, score: null };
      if (own.hidden) return { at: point.atSec, rank: null, score: point.score };
      return { at: point.atSec, rank: rank - point.leftOut - other.leftOut, score: point.score };
    });
    const marks = own.points.map((point) => point.mark);
    return {
      keeps: own.keeps,
      nextSec: own.nextSec,
      hidden: own.hidden,
      points: withRowTiebreaks(board.config, points, marks),
      draining,
    };
  }

  /**
   * Sharded boards: the window's latest snapshot over every shard without the items left out now
   * (moderation, answered by the same read of each shard), item -> rank, cached per slot (a calendar
   * window's: per period). A moderation change or an item retraction forgets this instance's cache
   * (forgetPreviousRanks); other instances read again once their entry is PREVIOUS_RANKS_FRESH_MS old,
   * as an instance cannot tell from its cache that another one changed what the listing leaves out.
   */
  previousRanks(board: PreparedBoard, window: WindowConfig, nowMs: number): Promise<Map<string, number>> {
    if (!window.snapshots) return Promise.resolve(new Map());
    const key = `${board.config.name}\x1f${board.keys.windowKeyName(window.name)}`;
    const slotSec = window.calendar
      ? slotRule(window, nowMs).originSec
      : stepStartSec(Math.floor(nowMs / 1000), window.intervalSec);
    const cached = this.previousListings.get(key);
    if (
      cached &&
      cached.version === board.config.version &&
      cached.slotSec === slotSec &&
      nowMs - cached.readAtMs < PREVIOUS_RANKS_FRESH_MS
    )
      return cached.ranks;
    if (this.previousListings.size >= MAX_CACHED_PREVIOUS_LISTINGS) this.previousListings.clear();
    const forget = () => {
      if (this.previousListings.get(key) === entry) this.previousListings.delete(key);
    };
    const ranks = this.previousListing(board, window, nowMs).then((listing) => {
      if (!listing.final) forget();
      return listing.ranks;
    });
    const entry = { version: board.config.version, slotSec, readAtMs: nowMs, ranks };
    this.previousListings.set(key, entry);
    ranks.catch(forget);
    return ranks;
  }

  /**
   * The board's latest listing, item -> rank. On a calendar window, while a shard is still writing out
   * the archive of a period (archive_lib: in chunks, over later calls), the board's newest archive is
   * the newest period before it, as an unsharded board's previous listing stays the older one until
   * the new archive is complete: then each shard is read again at that time, and the answer is not
   * final (not cached: the next read finds the new archive once written).
   */
  private async previousListing(
    board: PreparedBoard,
    window: WindowConfig,
    nowMs: number,
  ): Promise<{ ranks: Map<string, number>; final: boolean }> {
    const replies = await this.readShards(board, window, nowMs, undefined);
    const pending = replies.flatMap((reply) => (reply.pendingSec === null ? [] : [reply.pendingSec]));
    let { listing } = this.merged(board, window, replies, true);
    const oldestPendingSec = Math.min(...pending);
    if (window.calendar && listing && listing.atSec >= oldestPendingSec) {
      ({ listing } = await this.history(board, window, nowMs, oldestPendingSec - 1));
    }
    const ranks = new Map((listing?.items ?? []).map((row) => [row.item, row.rank]));
    return { ranks, final: pending.length === 0 };
  }

  /**
   * Forgets this instance's cached previous ranks of a board (an item retraction rewrote its snapshots,
   * or a moderation change shows other rows); other instances' caches follow within PREVIOUS_RANKS_FRESH_MS.
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
        const replies = await this.readShards(board, window, nowMs, point.at);
        const last = this.mergedRows(board, window, replies, false)?.rows[top - 1];
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

  /**
   * One shard's kept listings of `board` (a metric's board) at the boundaries asked: their row counts,
   * their archives' records of items, the rows ahead of rows (listing_counts.lua; MetricCounts).
   */
  listingCounts(board: PreparedBoard, window: WindowConfig, nowMs: number, shard: ShardKeys, asked: ListingAsk[]) {
    return guard(this.functions.call(this.fns.listingCounts, { ...this.on(board, shard, nowMs), window, asked }));
  }

  /** listingCounts over shards of one node (listing_counts_shards.lua; listing-counts.ts listingCountsOf). */
  listingCountsShards(board: PreparedBoard, window: WindowConfig, nowMs: number, shards: ShardAsked[]) {
    return guard(this.functions.call(this.fns.listingCountsShards, { board, window, nowMs, shards }));
  }

  /** Indexes of `shards` grouped by the Redis node serving each (one group off a Cluster). */
  shardsByNode(shards: ShardKeys[]): number[][] {
    return this.redis.groupByNode(shards.map((shard) => shard.keys.cfg()));
  }

  /**
   * Each shard's snapshot at or before `atSec` (undefined: its latest), and its oldest pending archive: a
   * page of each first (HISTORY_READ_BYTES_PER_CALL of its text), then further pages of the shards whose rows
   * not read yet may still rank within the window's `top` (pagesWanted). A snapshot changed between two
   * pages (a newer boundary read at `atSec`, a retraction's cut) is read again from its first page.
   */
  private async readShards(board: PreparedBoard, window: WindowConfig, nowMs: number, atSec: number | undefined) {
    for (let attempt = 1; ; attempt++) {
      const reads = await Promise.all(board.shards.map((shard) => this.readPage(board, shard, window, nowMs, atSec)));
      if (await this.readOn(board, window, nowMs, reads)) return reads;
      if (attempt >= PAGED_READ_ATTEMPTS)
        throw new WindowDrainingError('the snapshots changed while they were read: retry');
    }
  }

  /** readShards' further pages, joined to `reads`; false when a shard's snapshot changed between pages. */
  private async readOn(board: PreparedBoard, window: WindowConfig, nowMs: number, reads: ShardSnapshot[]) {
    const order = boardOrder(ascendingScores(board.config));
    for (
      let wanted = pagesWanted(reads, window, order);
      wanted.length > 0;
      wanted = pagesWanted(reads, window, order)
    ) {
      const pages = await Promise.all(
        wanted.map((i) =>
          this.readPage(board, board.shards[i], window, nowMs, reads[i].snapshot?.atSec, reads[i].page),
        ),
      );
      for (const [k, i] of wanted.entries()) {
        const [before, next] = [reads[i].snapshot, pages[k].snapshot];
        if (!before || !next) return false;
        const rows = [...before.rows, ...next.rows];
        reads[i] = { ...pages[k], snapshot: { ...before, rows, leftOut: [...before.leftOut, ...next.leftOut] } };
      }
    }
    return true;
  }

  private readPage(
    board: PreparedBoard,
    shard: ShardKeys,
    window: WindowConfig,
    nowMs: number,
    atSec: number | undefined,
    page?: SnapshotPage,
  ): Promise<ShardSnapshot> {
    return guard(this.functions.call(this.fns.historyRead, { ...this.on(board, shard, nowMs), window, atSec, page }));
  }

  /** The shards' snapshots merged at the latest of theirs (see history). */
  private merged(
    board: PreparedBoard,
    window: WindowConfig,
    replies: Array<{ keeps: boolean; snapshot?: StoredSnapshot }>,
    shown: boolean,
  ): { keeps: boolean; listing?: SnapshotListing } {
    if (!replies.some((reply) => reply.keeps)) return { keeps: false };
    const merged = this.mergedRows(board, window, replies, shown);
    if (merged === undefined) return { keeps: true };
    // A tiebreak board's rows carry their marks (tie): merged and ranked by the pair, as live rows are.
    const items = withRowTiebreaks(
      board.config,
      rankRows(merged.rows, 0, 0),
      merged.rows.map((row) => row.tie),
    );
    return { keeps: true, listing: { atSec: merged.atSec, items } };
  }

  /** The rows of the shards' snapshots merged at the latest of theirs, with their marks (undefined: none kept). */
  private mergedRows(
    board: PreparedBoard,
    window: WindowConfig,
    replies: Array<{ keeps: boolean; snapshot?: StoredSnapshot }>,
    shown: boolean,
  ): { atSec: number; rows: ScoredItem[] } | undefined {
    const found = mergedSnapshots(window, replies);
    if (found.length === 0) return undefined;
    const atSec = Math.max(...found.map((snapshot) => snapshot.atSec));
    const leftOut = new Set(shown ? found.flatMap((snapshot) => snapshot.leftOut) : []);
    const rows = mergeListings(
      found.map((snapshot) => snapshot.rows),
      ascendingScores(board.config),
    )
      .slice(0, window.snapshots?.top)
      .filter((row) => !leftOut.has(row.item));
    return { atSec, rows };
  }

  private on(board: PreparedBoard, shard: ShardKeys, nowMs: number): BoardCall {
    return boardCall(board, shard, nowMs, this.budgetFields);
  }
}
