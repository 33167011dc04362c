import { Injectable } from '@nestjs/common';
import { WriteAnswer } from '../common/retry-safe';
import { SharedReads } from '../common/shared-reads';
import type { ClientBudget } from '../governance/growth-quotas';
import type { ReadCharge } from '../governance/read-charge';
import { AliasMap } from './aliases/alias-map';
import { BoardCache, RankedSources, SourceRead } from './boards/board-cache';
import { ArchivesService } from './calendar/archives.service';
import { BoardPage, BoardsService, BoardView, PutBoardInput } from './boards/boards.service';
import type { PreparedBoard } from './core/board';
import type { ViewConfig } from './options/views/trending-math';
import type { WindowConfig } from './core/window-math';
import { AroundAnswer, PageAnswer, PageAsk } from './core/answers';
import { InvalidInputError } from '../common/errors';
import { RANKING_MESSAGES as M } from './core/ranking.messages';
import { DuePassOptions, DuePassResult, ExpiryService } from './expiry/expiry.service';
import { HistoryService } from './history/history.service';
import { ReadsService, SegmentPageAsk } from './reads/reads.service';
import { FiltersService } from './filters/filters.service';
import { StandingService } from './standing/standing.service';
import { SpansService } from './spans/spans.service';
import { ViewsService } from './views/views.service';
import {
  BatchCommand,
  BatchInput,
  BatchWritten,
  IncrementCommand,
  ItemWritten,
  LikeChange,
  LikeWritten,
  WriteCommands,
} from './writes/write-commands';
import { WritePipeline } from './writes/write-pipeline';

export type { ViewRowAnswer, WindowFigures } from './core/answers';
export type { BoardPage, BoardView } from './boards/boards.service';
export type { DuePassOptions, DuePassResult } from './expiry/expiry.service';

/** The positional increment's arguments after the board's name (the library's first API). */
type PositionalIncrement = [
  item: string,
  amount: number,
  idemKey?: string,
  budget?: ClientBudget,
  atSec?: number,
  createdAtSec?: number,
  segments?: string[],
];

/** The positional like's arguments after the board's name: `undo` true takes the like back. */
type PositionalLike = [
  item: string,
  userId: string,
  undo: boolean,
  idemKey?: string,
  budget?: ClientBudget,
  atSec?: number,
  segments?: string[],
];

/** An item's standing as answered: a window's (score, rank, percentile) or a view's row with its percentile. */
export type ItemAnswer = Awaited<ReturnType<ReadsService['item']>> | Awaited<ReturnType<ViewsService['item']>>;

/** How a read is asked besides its source: `span` (a duration) reads only a rolling window's newest slots. */
export interface ReadOptions {
  span?: string;
  /** Read the window as this segment's (a board without segments: 400). */
  segment?: string;
  /** Rank by this counter of a board with metrics (absent: the first; unknown: 400 UNKNOWN_METRIC). */
  metric?: string;
  /** Charges the calls a read makes beyond its own (a group board over a sharded member board settling first). */
  charge?: ReadCharge;
}

/** How one read is made of each kind of source: a whole window, a window's newest slots (`span`), a view. */
interface SourceReaders<T> {
  window: SourceRead<WindowConfig, T>;
  span: (board: PreparedBoard, window: WindowConfig, nowMs: number, span: string) => Promise<T>;
  view: SourceRead<ViewConfig, T>;
}

/** A span names a rolling window's slots: a view has none of its own. */
function spanOnView(board: string, view: string): never {
  throw new InvalidInputError(M.spanOnView(board, view));
}

/**
 * The ranking use cases in one place, each handed to the slice that owns it (boards, writes, reads,
 * views, history, expiry): what the controller, the live streams and the dashboard call.
 */
@Injectable()
export class RankingService {
  /** Top pages asked in one event-loop turn with the same question share one read (SharedReads says why that stays exact). */
  private readonly sharedTops = new SharedReads<PageAnswer>();

  constructor(
    private readonly boards: BoardsService,
    private readonly writes: WritePipeline,
    private readonly commands: WriteCommands,
    private readonly reads: ReadsService,
    private readonly views: ViewsService,
    private readonly snapshots: HistoryService,
    private readonly calendars: ArchivesService,
    private readonly expiry: ExpiryService,
    private readonly sources: RankedSources,
    private readonly spans: SpansService,
    private readonly filters: FiltersService,
    private readonly standing: StandingService,
    private readonly aliases: AliasMap,
    private readonly cache: BoardCache,
  ) {}

  /** GET top with ?perGroup or ?minActors: a filtered read, rows keep their board rank. */
  topFiltered(...asked: Parameters<FiltersService['topFiltered']>): ReturnType<FiltersService['topFiltered']> {
    return this.filters.topFiltered(...asked);
  }

  /** A board's PUT, as a command: its optional fields undefined keep the stored ones (`reset` undefined: false). */
  putBoard(input: PutBoardInput): Promise<{ created: boolean; board: BoardView }> {
    return this.boards.putBoard(input);
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

  /**
   * An increment, as a command (WriteCommands builds one). The positional form (the library's first
   * API, kept working) builds the command here: `budget` the client's quotas on growth (none: the
   * write may create anything), `atSec`/`createdAtSec` the event's and the item's times.
   */
  increment(command: IncrementCommand): Promise<WriteAnswer<ItemWritten>>;
  increment(name: string, ...positional: PositionalIncrement): Promise<WriteAnswer<ItemWritten>>;
  increment(
    first: IncrementCommand | string,
    ...positional: PositionalIncrement | []
  ): Promise<WriteAnswer<ItemWritten>> {
    if (typeof first !== 'string') return this.writes.increment(first);
    // A name comes with the positional overload's arguments.
    const [item, amount, idemKey, budget, atSec, createdAtSec, segments] = positional as PositionalIncrement;
    const fields = { board: first, item, amount, atSec, createdAtSec, segments };
    return this.writes.increment(this.commands.increment(fields, { idemKey, budget }));
  }

  /** A score on a max / min / last board (409 AGGREGATE_MISMATCH on a sum board). */
  score(
    name: string,
    item: string,
    score: number,
    idemKey?: string,
    budget?: ClientBudget,
    atSec?: number,
    tiebreak?: number,
  ): Promise<WriteAnswer<ItemWritten>> {
    return this.writes.score(this.commands.score({ board: name, item, score, atSec, tiebreak }, { idemKey, budget }));
  }

  /** A batch of increments, as a command or (the library's first API) positionally. */
  incrementBatch(command: BatchCommand): Promise<WriteAnswer<BatchWritten>>;
  incrementBatch(
    name: string,
    entries: BatchInput[],
    idemKey?: string,
    budget?: ClientBudget,
  ): Promise<WriteAnswer<BatchWritten>>;
  incrementBatch(
    first: BatchCommand | string,
    entries?: BatchInput[],
    idemKey?: string,
    budget?: ClientBudget,
  ): Promise<WriteAnswer<BatchWritten>> {
    if (typeof first !== 'string') return this.writes.incrementBatch(first);
    // The positional overload requires the entries.
    return this.writes.incrementBatch(this.commands.batch({ board: first, entries: entries! }, { idemKey, budget }));
  }

  /**
   * A like or an unlike, as a command; positionally (the library's first API) `undo` = true takes the
   * like back (never refused, it creates nothing).
   */
  like(command: LikeChange): Promise<WriteAnswer<LikeWritten>>;
  like(name: string, ...positional: PositionalLike): Promise<WriteAnswer<LikeWritten>>;
  like(first: LikeChange | string, ...positional: PositionalLike | []): Promise<WriteAnswer<LikeWritten>> {
    if (typeof first !== 'string') return this.writes.like(first);
    // A name comes with the positional overload's arguments.
    const [item, userId, undo, idemKey, budget, atSec, segments] = positional as PositionalLike;
    const fields = { board: first, item, userId };
    const sent = { idemKey, budget };
    const command = undo
      ? this.commands.unlike(fields, sent)
      : this.commands.like({ ...fields, atSec, segments }, sent);
    return this.writes.like(command);
  }

  /** A page of a window or a view (of a window's newest slots with `span`). */
  top(
    name: string,
    windowName: string | undefined,
    offset: number,
    limit: number,
    options: ReadOptions = {},
  ): Promise<PageAnswer> {
    const { span, segment, metric } = options;
    const question = JSON.stringify([
      name,
      windowName ?? null,
      offset,
      limit,
      span ?? null,
      segment ?? null,
      metric ?? null,
    ]);
    return this.sharedTops.share(question, () =>
      this.readTop(name, windowName, { offset, limit }, options).then((page) => this.rowsWithGroups(name, page)),
    );
  }

  /** A page's rows each with their item's group (a board with groups: the groups option); else the page itself. */
  private rowsWithGroups<T extends { items: Array<{ item: string }> }>(name: string, page: T): T | Promise<T> {
    if (!this.filters.mayGroup(name, page.items)) return page;
    return this.filters.attach(name, page.items).then((items) => ({ ...page, items }));
  }

  private readTop(
    name: string,
    windowName: string | undefined,
    page: PageAsk,
    options: ReadOptions,
  ): Promise<PageAnswer> {
    return this.readSource(name, windowName, options, {
      window: (board, window, nowMs) =>
        board.config.tail
          ? this.standing.tailPage(board, window, nowMs, page)
          : this.reads.top(board, window, nowMs, page),
      span: (board, window, nowMs, span) => this.spans.top(board, window, nowMs, span, page),
      view: (board, view, nowMs) => this.views.top(board, view, nowMs, page),
    });
  }

  /**
   * An item's score, rank and percentile in a window or a view (of a window's newest slots with `span`);
   * an alias answers its canonical item's, naming it `canonical`; `aliases` lists the item's alternate
   * spellings, when it has some.
   */
  async item(name: string, windowName: string | undefined, asked: string, options: ReadOptions = {}) {
    const { canonical, aliases } = await this.aliases.spellingsOf(await this.cache.get(name), asked);
    const item = canonical ?? asked;
    const answer = await this.readSource<ItemAnswer>(name, windowName, options, {
      window: (board, window, nowMs) => this.reads.item(board, window, nowMs, item),
      span: (board, window, nowMs, span) => this.spans.item(board, window, nowMs, span, item),
      view: (board, view, nowMs) => this.views.item(board, view, nowMs, item),
    });
    // An item the read did not find carries no group: the map may still name it until its expired
    // slots are drained, which a span read (read-only) does not do.
    const found = answer.rank !== null || Number(answer.score) !== 0;
    const [grouped] = found ? await this.filters.attach(name, [answer]) : [answer];
    return { ...grouped, ...(canonical === undefined ? {} : { canonical }), ...(aliases.length ? { aliases } : {}) };
  }

  /** An item with up to `radius` neighbours on each side, in a window or a view (of a window's newest slots with `span`). */
  around(
    name: string,
    windowName: string | undefined,
    item: string,
    radius: number,
    options: ReadOptions = {},
  ): Promise<AroundAnswer> {
    const around = { item, radius };
    const rows = this.readSource(name, windowName, options, {
      window: (board, window, nowMs) => this.reads.around(board, window, nowMs, around),
      span: (board, window, nowMs, span) => this.spans.around(board, window, nowMs, span, around),
      view: (board, view, nowMs) => this.views.around(board, view, nowMs, around),
    });
    return rows.then((page) => this.rowsWithGroups(name, page));
  }

  /** One read of a window (of its newest slots with `span`: a view has none, 400) or a view, as `options.segment`'s. */
  private readSource<T extends object>(
    name: string,
    windowName: string | undefined,
    options: ReadOptions,
    readers: SourceReaders<T>,
  ): Promise<T> {
    const { span } = options;
    return this.sources.read(
      name,
      windowName,
      (board, window, nowMs) =>
        span === undefined ? readers.window(board, window, nowMs) : readers.span(board, window, nowMs, span),
      (board, view, nowMs) => (span === undefined ? readers.view(board, view, nowMs) : spanOnView(name, view.name)),
      options.segment,
      options.metric,
      options.charge,
    );
  }

  /** A page of the board's live segments, each with the items it holds (a board without segments: 400). */
  listSegments(name: string, page: SegmentPageAsk, admit: (units: number) => void = () => undefined) {
    return this.sources.withSegments(name, (board, _, nowMs) => this.reads.segments(board, nowMs, page, admit));
  }

  /** The window's snapshot at or before `atSec` (default: the latest). */
  history(...asked: Parameters<HistoryService['history']>): ReturnType<HistoryService['history']> {
    return this.snapshots.history(...asked);
  }

  /** A calendar window's final standings of the closed period holding `atSec` (default: the latest kept). */
  archive(...asked: Parameters<ArchivesService['archive']>): ReturnType<ArchivesService['archive']> {
    return this.calendars.archive(...asked);
  }

  /** A calendar window's kept archives, newest first, a page at a time (`rows.perPeriod` of each: default all). */
  archives(...asked: Parameters<ArchivesService['archives']>): ReturnType<ArchivesService['archives']> {
    return this.calendars.archives(...asked);
  }

  /** An item's rank and score in every kept snapshot from `fromSec` to `toSec`, a page at a time. */
  itemHistory(...asked: Parameters<HistoryService['itemHistory']>): ReturnType<HistoryService['itemHistory']> {
    return this.snapshots.itemHistory(...asked);
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
