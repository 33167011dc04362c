import { Injectable } from '@nestjs/common';
import { WriteAnswer } from '../common/retry-safe';
import { ClientBudget } from '../governance/growth-quotas';
import { BoardPage, BoardsService, BoardView } from './boards/boards.service';
import { RankedSources } from './boards/ranked-sources';
import { ViewRowAnswer, WindowFigures } from './core/answers';
import type { HistoryPoint, ListedItem } from './core/ranking.types';
import type { ViewInput } from './core/trending-math';
import type { WindowInput } from './core/window-math';
import { DuePassOptions, DuePassResult, ExpiryService } from './expiry/expiry.service';
import { HistoryService } from './history/history.service';
import { ReadsService } from './reads/reads.service';
import { ViewsService } from './views/views.service';
import { BatchInput, BatchWritten, ItemWritten, WritesService } from './writes/writes.service';

export type { ViewRowAnswer, WindowFigures } from './core/answers';
export type { BoardPage, BoardView } from './boards/boards.service';
export type { DuePassOptions, DuePassResult } from './expiry/expiry.service';
export type { BatchInput, ItemWritten } from './writes/writes.service';

/** An item's standing as answered: a window's (score, rank, percentile) or a view's row with its percentile. */
export type ItemAnswer = Awaited<ReturnType<ReadsService['item']>> | Awaited<ReturnType<ViewsService['item']>>;

/**
 * The ranking use cases in one place, each handed to the slice that owns it (boards, writes, reads,
 * views, history, expiry): what the controller, the live streams and the dashboard call.
 */
@Injectable()
export class RankingService {
  constructor(
    private readonly boards: BoardsService,
    private readonly writes: WritesService,
    private readonly reads: ReadsService,
    private readonly views: ViewsService,
    private readonly snapshots: HistoryService,
    private readonly expiry: ExpiryService,
    private readonly sources: RankedSources,
  ) {}

  /** `shards`, `maxItems`, `views` and `segmentsMax` undefined keep the stored ones. */
  putBoard(
    name: string,
    windows: WindowInput[],
    shards?: number,
    reset = false,
    maxItems?: number,
    views?: ViewInput[],
    segmentsMax?: number,
  ): Promise<{ created: boolean; board: BoardView }> {
    return this.boards.putBoard({ name, windows, shards, reset, maxItems, views, segmentsMax });
  }

  getBoard(name: string): Promise<BoardView> {
    return this.boards.getBoard(name);
  }

  listBoards(page: BoardPage): Promise<{ boards: BoardView[]; total: number; nextCursor: string | null }> {
    return this.boards.listBoards(page);
  }

  deleteBoard(name: string): Promise<void> {
    return this.boards.deleteBoard(name);
  }

  /** The board's change version: grows with every write (what the live stream polls). */
  changeVersion(name: string): Promise<number> {
    return this.boards.changeVersion(name);
  }

  /** `budget`: the client's quotas on growth (none: the write may create anything). */
  increment(
    name: string,
    item: string,
    amount: number,
    idemKey?: string,
    budget?: ClientBudget,
    atSec?: number,
    createdAtSec?: number,
    segments?: string[],
  ): Promise<WriteAnswer<ItemWritten>> {
    return this.writes.increment({ name, item, amount, idemKey, budget, atSec, createdAtSec, segments });
  }

  incrementBatch(
    name: string,
    inputs: BatchInput[],
    idemKey?: string,
    budget?: ClientBudget,
  ): Promise<WriteAnswer<BatchWritten>> {
    return this.writes.incrementBatch({ name, inputs, idemKey, budget });
  }

  /** Likes (undo = false) or takes a like back (undo = true: never refused, it creates nothing). */
  like(
    name: string,
    item: string,
    userId: string,
    undo: boolean,
    idemKey?: string,
    budget?: ClientBudget,
    atSec?: number,
  ): Promise<WriteAnswer<ItemWritten & { userId: string; counted: boolean }>> {
    return this.writes.like({ name, item, userId, undo, idemKey, budget, atSec });
  }

  /** A page of a window or a view (`segment`: of a window as that segment's). */
  top(
    name: string,
    windowName: string | undefined,
    offset: number,
    limit: number,
    segment?: string,
  ): Promise<WindowFigures & { items: ViewRowAnswer[] }> {
    const page = { offset, limit };
    return this.sources.read(
      name,
      windowName,
      (board, window, nowMs) => this.reads.top(board, window, nowMs, page),
      (board, view, nowMs) => this.views.top(board, view, nowMs, page),
      segment,
    );
  }

  /** An item's score, rank and percentile in a window or a view (`segment`: of a window as that segment's). */
  item(name: string, windowName: string | undefined, item: string, segment?: string): Promise<ItemAnswer> {
    return this.sources.read<ItemAnswer>(
      name,
      windowName,
      (board, window, nowMs) => this.reads.item(board, window, nowMs, item),
      (board, view, nowMs) => this.views.item(board, view, nowMs, item),
      segment,
    );
  }

  /** An item with up to `radius` neighbours on each side, in a window or a view (`segment`: as top). */
  around(
    name: string,
    windowName: string | undefined,
    item: string,
    radius: number,
    segment?: string,
  ): Promise<WindowFigures & { item: string; items: ViewRowAnswer[] }> {
    const around = { item, radius };
    return this.sources.read(
      name,
      windowName,
      (board, window, nowMs) => this.reads.around(board, window, nowMs, around),
      (board, view, nowMs) => this.views.around(board, view, nowMs, around),
      segment,
    );
  }

  /** The window's snapshot at or before `atSec` (default: the latest). */
  history(
    name: string,
    windowName: string | undefined,
    atSec: number | undefined,
  ): Promise<{ board: string; window: string; at: number; from: number; to: number; items: ListedItem[] }> {
    return this.snapshots.history(name, windowName, atSec);
  }

  /** An item's rank and score in every kept snapshot from `fromSec` to `toSec`, a page at a time. */
  itemHistory(
    name: string,
    windowName: string | undefined,
    item: string,
    fromSec: number | undefined,
    toSec: number | undefined,
  ): Promise<{ board: string; window: string; item: string; points: HistoryPoint[]; nextFrom: number | null }> {
    return this.snapshots.itemHistory(name, windowName, item, fromSec, toSec);
  }

  /** One scheduler pass over the due boards (see ExpiryService.expireDue). */
  expireDue(options: DuePassOptions): Promise<DuePassResult> {
    return this.expiry.expireDue(options);
  }

  /** The due index's safety net, one instance per interval (see ExpiryService.sweepDueIndex). */
  sweepDueIndex(intervalMs: number): Promise<number | null> {
    return this.expiry.sweepDueIndex(intervalMs);
  }
}
