import { Injectable } from '@nestjs/common';
import { RedisFunctions } from '../../redis/redis-functions';
import { RedisService } from '../../redis/redis.service';
import { PreparedBoard, type ShardKeys } from '../core/board';
import { guard } from '../core/ranking.errors';
import type { ScoredItem } from '../core/ranking.types';
import { boardCall } from '../core/script-call';
import { mergeListings } from '../core/shard-math';
import { ascendingScores } from '../options/registry';
import type { WindowConfig } from '../core/window-math';
import {
  ARCHIVE_INDEX_ROWS_PER_CHUNK_FIELD,
  ARCHIVE_ROWS_PER_CALL,
  ARCHIVE_ROWS_PER_READ,
  ARCHIVES_PER_CUT_READ,
  archiveIndexCalls,
  CALENDAR_MESSAGES as C,
} from '../options/calendar/calendar.limits';
import { RequestTooCostlyError, WindowDrainingError } from '../../common/errors';
import { RankingSettings } from '../core/ranking.settings';
import { PAGED_READ_ATTEMPTS } from '../core/ranking.limits';
import { HistoryStore } from '../history/history.store';
import { type ArchivePage, type ArchiveReadReply, type ArchiveRows, CalendarFunctions } from './calendar.functions';
import { sliceStore } from '../core/slice-store';

/** Which archives a read asks for: up to `most` periods starting at or before `latestSec`, `rows` of each. */
export interface ArchivesAsk {
  latestSec: number | undefined;
  most: number;
  rows: ArchiveRows;
  /** Charges the client's read budget for each call past the first (a one-shard board's pass, below). */
  admit?: (reads: number) => void;
}

/** Calendar windows' archives as stored, merged over a sharded board's shards. */
@Injectable()
export class ArchivesStore extends sliceStore(CalendarFunctions) {
  constructor(
    redis: RedisService,
    functions: RedisFunctions,
    part: CalendarFunctions,
    settings: RankingSettings,
    private readonly history: HistoryStore,
  ) {
    super(redis, functions, part, settings);
  }

  /**
   * Sharded boards, before an item retraction takes the item's rows out of a calendar window's archives:
   * each archive listing the item is cut, on every shard, to the board's rows (as HistoryStore.cutToBoard
   * does for snapshots: the rows past the board's `top` that shards keep must not move in). Read
   * ARCHIVES_PER_CUT_READ archives at a time; while an archive is still being taken, nothing is cut (its
   * rows are not all written: the retraction rewrites it as on one shard).
   */
  async cutToBoard(board: PreparedBoard, window: WindowConfig, item: string, nowMs: number): Promise<void> {
    const top = window.snapshots?.top;
    if (!board.sharded || top === undefined || !window.calendar) return;
    for (let latestSec: number | undefined = undefined; ;) {
      const page = await this.archives(
        board,
        window,
        nowMs,
        {
          latestSec,
          most: ARCHIVES_PER_CUT_READ,
          rows: { skip: 0, most: top },
        },
        { shown: false },
      );
      if (page.draining || page.archives.length === 0) return;
      for (const archive of page.archives) {
        const last = archive.rows[top - 1];
        if (last === undefined || !archive.rows.some((row) => row.item === item)) continue;
        await this.history.cutEveryShard(board, window, nowMs, archive.atSec, last);
      }
      latestSec = page.archives[page.archives.length - 1].atSec - 1;
    }
  }

  /**
   * Up to `most` archives of periods starting at or before `latestSec` (undefined: the newest), newest
   * first, each a page of rows cut inside Redis (archive_read.lua). Each shard keeps its own top rows of
   * a period, so the board's top rows are among their union: on a sharded board every shard answers
   * its rows from the top (`skip` + `most` of them) and the page is cut here. A shard's newest `most`
   * periods hold every one of the board's newest `most` it has. Each shard keeps the newest `keep`
   * periods it scored in, so one that scored in none of the last few still holds older periods, whose
   * other shards' rows are gone: only the newest `keep` periods of all shards are the board's. While a
   * shard is still taking an archive (in chunks, archive_lib.lua) the answer is `draining` and lists
   * nothing. On a moderated board the rows of items left out now (moderation) are not answered and the
   * rest rank among themselves (`shown` false: the rows as stored, which a retraction's cut reads): one
   * shard cuts that page itself from the positions of the items left out (archive_read.lua, without a
   * scan from the top), each shard of a sharded board answers its rows from the top and they are cut here.
   */
  async archives(
    board: PreparedBoard,
    window: WindowConfig,
    nowMs: number,
    ask: ArchivesAsk,
    { shown = true } = {},
  ): Promise<{ keeps: boolean; draining: boolean; archives: ArchivePage[] }> {
    const replies = await replyOf(this, { board, window, nowMs, ask, shown });
    if (!replies.some((reply) => reply.keeps)) return { keeps: false, draining: false, archives: [] };
    // A shard still taking an archive lists its period later: the read is sent again (RankedSources).
    if (replies.some((reply) => reply.draining)) return { keeps: true, draining: true, archives: [] };
    const moderated = shown && replies.some((reply) => reply.leftOut !== null);
    if (!board.sharded && !moderated) return { keeps: true, draining: false, archives: replies[0].archives };
    return {
      keeps: true,
      draining: false,
      archives: mergedPages(replies, window, ask, { ascending: ascendingScores(board.config), moderated }),
    };
  }
}

/**
 * Each shard's reply to an archive read of `ask`. One shard holds the board's every row: on a moderated
 * board it answers the page of the rows shown now itself, from the positions of the rows left out now,
 * which the first read after a moderation change finds in a pass over the period of at most
 * `indexRows` rows a call (archive_read.lua): the read calls again while the pass has not reached its
 * page, each call a read of the client's budget, at most archiveIndexCalls; past them (a moderation
 * change or a retraction between the calls started the pass again) a 503 WINDOW_DRAINING.
 */
async function replyOf(
  store: ArchivesStore,
  call: { board: PreparedBoard; window: WindowConfig; nowMs: number; ask: ArchivesAsk; shown: boolean },
): Promise<ArchiveReadReply[]> {
  const { board, window, nowMs, ask } = call;
  const rows = board.sharded ? { skip: 0, most: ask.rows.skip + ask.rows.most } : ask.rows;
  const shownPage = call.shown && !board.sharded;
  const indexRows = ARCHIVE_INDEX_ROWS_PER_CHUNK_FIELD * store.budgetFields;
  // A moderated sharded board's shards answer hidden rows too: each at most its share of the read's rows.
  const shardRows = Math.max(1, Math.floor(ARCHIVE_ROWS_PER_READ / (board.shards.length * ask.most)));
  const readOn =
    (shard: ShardKeys): ShardRead =>
    (latestSec, most, asked) =>
      guard(
        store.functions.call(store.fns.archiveRead, {
          ...boardCall(board, shard, nowMs, store.budgetFields),
          window,
          latestSec,
          most,
          rows: asked,
          shownPage,
          shardRows,
          indexRows,
        }),
      );
  const read = async () =>
    board.sharded || ask.most * ask.rows.most <= ARCHIVE_ROWS_PER_CALL
      ? Promise.all(board.shards.map((shard) => readOn(shard)(ask.latestSec, ask.most, rows)))
      : [await inCalls(readOn(board.shards[0]), ask, board.config.name)];
  for (let calls = 1; ; calls++) {
    const replies = await read();
    // Each shard past the first of a moderated sharded board's read is a read of the client's budget.
    if (board.sharded && replies.some((reply) => reply.leftOut !== null)) ask.admit?.(board.shards.length - 1);
    if (!replies.some((reply) => reply.indexing)) return replies;
    if (calls >= archiveIndexCalls(indexRows))
      throw new WindowDrainingError(C.archiveIndexing(board.config.name, calls));
    ask.admit?.(1);
  }
}

/** One archive_read call of a shard: the periods starting at or before `latestSec`, `most` of them, `rows` of each. */
type ShardRead = (latestSec: number | undefined, most: number, rows: ArchiveRows) => Promise<ArchiveReadReply>;

/**
 * A one-shard read of more rows than ARCHIVE_ROWS_PER_CALL (an archives page of long periods) in calls of
 * at most that many rows of one period each (periodInCalls): each call copies its period's text once and
 * cuts its rows, where one call cut every period's. The first call also tells the periods kept. A
 * period's pages are joined in order: skipped and ahead from its first, more from its last. A period
 * that changed between two of its calls (a retraction, a cut, a moderation change) begins the read
 * again, the first call charged too, at most PAGED_READ_ATTEMPTS times, then a 503 WINDOW_DRAINING.
 */
async function inCalls(read: ShardRead, ask: ArchivesAsk, board: string): Promise<ArchiveReadReply> {
  for (let attempt = 1; ; attempt++) {
    const reply = await inCallsOnce(read, ask);
    if (reply) return reply;
    if (attempt >= PAGED_READ_ATTEMPTS) throw new WindowDrainingError(C.archiveChanged(board, attempt));
    ask.admit?.(1);
  }
}

/** inCalls' read, undefined when a period changed between two of its calls. */
async function inCallsOnce(read: ShardRead, ask: ArchivesAsk): Promise<ArchiveReadReply | undefined> {
  const { skip, most } = ask.rows;
  const first = await read(ask.latestSec, 1, { skip, most: Math.min(ARCHIVE_ROWS_PER_CALL, most) });
  if (!first.keeps || first.draining || first.indexing || first.archives.length === 0) return first;
  const starts = first.kept
    .filter((atSec) => ask.latestSec === undefined || atSec <= ask.latestSec)
    .sort((a, b) => b - a)
    .slice(0, ask.most);
  const answered = await Promise.all(
    starts.map((atSec, p) => periodInCalls(read, atSec, ask, p === 0 ? first : undefined)),
  );
  const periods = answered.filter((period): period is ArchiveReadReply[] => period !== undefined);
  if (periods.length < starts.length) return undefined;
  const replies = periods.flat();
  const archives = periods.flatMap((period, p) => {
    const pages = period.flatMap((reply) => reply.archives.filter((page) => page.atSec === starts[p]));
    if (pages.length < period.length || pages.length === 0) return [];
    const last = pages[pages.length - 1];
    return [{ ...pages[0], rows: pages.flatMap((page) => page.rows), more: last.more, seam: last.seam }];
  });
  const any = (flag: 'draining' | 'indexing') => replies.some((reply) => reply[flag]);
  return { ...first, draining: any('draining'), indexing: any('indexing'), archives };
}

/**
 * The period at `atSec`: its rows `ask.rows` in calls of at most ARCHIVE_ROWS_PER_CALL rows, till one
 * answers that none follow; each call but `made` (its first, already made) a read of the client's budget.
 * Each later call hands on the seam of the page before (archive_read.lua): one that answers no page of
 * the period found it changed since, and the period is undefined.
 */
async function periodInCalls(
  read: ShardRead,
  atSec: number,
  ask: ArchivesAsk,
  made: ArchiveReadReply | undefined,
): Promise<ArchiveReadReply[] | undefined> {
  const { skip, most } = ask.rows;
  const replies: ArchiveReadReply[] = [];
  for (let from = skip, seam: string | undefined; from < skip + most; from += ARCHIVE_ROWS_PER_CALL) {
    const rows = { skip: from, most: Math.min(ARCHIVE_ROWS_PER_CALL, skip + most - from), seam };
    if (from > skip || !made) ask.admit?.(1);
    const reply = from === skip && made ? made : await read(atSec, 1, rows);
    const page = reply.archives[0];
    const settled = !reply.draining && !reply.indexing;
    if (from > skip && settled && page?.atSec !== atSec) return undefined;
    replies.push(reply);
    if (!settled || page?.atSec !== atSec || !page.more) break;
    seam = page.seam;
  }
  return replies;
}

/**
 * A moderated board's pages: the rows of each period merged and cut to the window's top as stored,
 * those left out now taken out, `skip` + `most` of the rest answered. Each shard answered its rows
 * through its (skip + most + 1)-th shown one, so the board's first skip + most + 1 shown rows and every
 * row ahead of them are among these: the cut to the top and `more` are exact. A shard that stopped at
 * its most rows first (`more`) leaves unread rows after its last: only the merged rows up to the
 * first such last row are known, and a page that needs rows past them is refused (422).
 */
function shownPages(pages: PeriodPages, starts: number[], ask: ArchivesAsk, merge: PeriodMerge) {
  const leftOut = new Set(pages.replies.flatMap((reply) => reply.leftOut ?? []));
  const end = ask.rows.skip + ask.rows.most;
  return starts.map((atSec) => {
    const merged = merge(atSec);
    const cutAt = (pages.byStart.get(atSec) ?? [])
      .filter((page) => page.more && page.rows.length > 0)
      .map((page) => merged.indexOf(page.rows[page.rows.length - 1]))
      .filter((at) => at >= 0);
    // Rows through the first cut shard's last are known; none of the board's top follows when it is the last.
    const knownRows = Math.min(pages.top, ...cutAt.map((at) => at + 1));
    const shown = merged.slice(0, knownRows).filter((row) => !leftOut.has(row.item));
    if (knownRows < pages.top && shown.length <= end)
      throw new RequestTooCostlyError(C.moderatedArchiveTooDeep(end, ARCHIVE_ROWS_PER_READ));
    return { atSec, rows: shown.slice(0, end), skipped: 0, ahead: 0, more: shown.length > end, seam: '' };
  });
}

/** Every shard's reply to a read, and each period's shard pages. */
interface PeriodPages {
  replies: ArchiveReadReply[];
  byStart: Map<number, ArchivePage[]>;
  /** The window's top: rows of a period as stored. */
  top: number;
}

/** A period's rows over every shard's page, best first, cut to the window's top. */
type PeriodMerge = (atSec: number) => ScoredItem[];

/**
 * The board's pages of a sharded (or moderated) board's archives: each period's shard pages merged
 * (`ascending`: lowest first), cut to `rows`; `moderated`: without the rows left out now.
 */
function mergedPages(
  replies: ArchiveReadReply[],
  window: WindowConfig,
  ask: ArchivesAsk,
  { ascending, moderated }: { ascending: boolean; moderated: boolean },
): ArchivePage[] {
  const byStart = new Map<number, ArchivePage[]>();
  for (const { archives } of replies) {
    for (const archive of archives) byStart.set(archive.atSec, [...(byStart.get(archive.atSec) ?? []), archive]);
  }
  const boardKept = new Set(
    [...new Set(replies.flatMap((reply) => reply.kept))].sort((a, b) => b - a).slice(0, window.snapshots?.keep),
  );
  const starts = [...byStart.keys()]
    .filter((start) => boardKept.has(start))
    .sort((a, b) => b - a)
    .slice(0, ask.most);
  const top = window.snapshots?.top ?? Infinity;
  const merge: PeriodMerge = (atSec) =>
    mergeListings(
      (byStart.get(atSec) ?? []).map((page) => page.rows),
      ascending,
    ).slice(0, top);
  if (moderated) return shownPages({ replies, byStart, top }, starts, ask, merge);
  const end = Math.min(top, ask.rows.skip + ask.rows.most);
  return starts.map((atSec) => {
    const pages = byStart.get(atSec) ?? [];
    const merged = merge(atSec);
    const more = merged.length > end || (end < top && pages.some((page) => page.more));
    return { atSec, rows: merged.slice(0, end), skipped: 0, ahead: 0, more, seam: '' };
  });
}
