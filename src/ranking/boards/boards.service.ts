import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { Clock } from '../../common/clock';
import { BoardWriteTooCostlyError, ConflictError, InvalidInputError, NotFoundError } from '../../common/errors';
import { BoardConfig } from '../core/board';
import { BoardOptionsConfig, BoardOptionsView, checkOptions, optionsOf, optionsView } from '../options/registry';
import { GROUP_OF_MESSAGES, groupBoardWindows, groupOfSetting } from '../options/group-of/group-of.option';
import { MAX_GROUPS_PER_BOARD } from '../options/group-of/group-of.limits';
import { RANKING_MESSAGES as M } from '../core/ranking.messages';
import { WINDOWS_PER_BOARD } from '../core/ranking.limits';
import { VIEWS_MESSAGES } from '../options/views/views.messages';
import { resolveViews, ViewConfig, ViewInput, ViewView, viewViewOf } from '../options/views/trending-math';
import { resolveWindows, WindowConfig, WindowInput, WindowSpec } from '../core/window-math';
import { windowOptionsView, type WindowOptionsView } from '../options/window-registry';
import { RankingSettings } from '../core/ranking.settings';
import { costliestWrite } from '../core/write-cost';
import { BoardCache } from './board-cache';
import { BoardsStore } from './boards.store';

/**
 * A window as GET /boards shows it, with what its options show (windowOptionsView): a calendar window's
 * period and interval are its longest period; an all-time window has neither.
 */
export interface WindowView extends Partial<WindowOptionsView> {
  name: string;
  period?: number;
  interval?: number;
}

export interface BoardView extends Partial<BoardOptionsView> {
  name: string;
  shards: number;
  windows: WindowView[];

  /** Present when the board has a cap. */
  maxItems?: number;
  /** Present when the board has views. */
  views?: ViewView[];
}

/** A page of GET /boards: from `offset`, or after the name `cursor` when given. */
export interface BoardPage {
  limit: number;
  offset: number;
  cursor?: string;
}

/** A PUT of a board as the client sent it: `shards`, `maxItems`, `views` and the options undefined keep the stored ones. */
export interface PutBoardInput extends BoardOptionsConfig {
  name: string;
  /** Absent on a group board only (groupOf): its one window is its member board's. */
  windows?: WindowInput[];
  shards?: number;
  /** Drop the stored data when the windows, shards or aggregate change; undefined: false. */
  reset?: boolean;
  maxItems?: number;
  views?: ViewInput[];
}

/** Boards: their configs (checked, stored, cached), the registry's pages, deletion, the change version. */
@Injectable()
export class BoardsService {
  constructor(
    private readonly store: BoardsStore,
    private readonly cache: BoardCache,
    private readonly clock: Clock,
    private readonly settings: RankingSettings,
  ) {}

  async putBoard(input: PutBoardInput): Promise<{ created: boolean; board: BoardView }> {
    const { name, shards, reset = false } = input;
    const maxItems = input.groupOf ? MAX_GROUPS_PER_BOARD : input.maxItems; // a group board holds its groups
    const windows = resolveWindows(windowsOf(input));
    const metrics = input.metrics ?? (await this.store.loadBoard(name))?.metrics ?? [];
    const views =
      input.views === undefined
        ? await this.keptViews(name, windows, metrics)
        : resolveViews(input.views, windows, metrics);
    await this.checkAllTime({ ...input, maxItems }, windows);
    const options = await this.checkBoardOptions(input, windows, views);
    await this.checkWriteCost(input, { windows, views, options });
    const version = randomUUID();
    const result = await this.store.putBoard({
      name,
      windows,
      shards,
      maxItems,
      views,
      ...optionsOf(input),
      ...(input.groupOf && { groupOf: groupOfSetting(input.groupOf) }),
      aggregate: input.aggregate,
      reset,
      version,
      nowMs: this.clock.nowMs(),
    });
    if (result.status === 'conflict' && result.dropping)
      throw new ConflictError('BOARD_BEING_DELETED', M.boardBeingDeleted(name));
    if (result.status === 'conflict')
      throw new ConflictError('BOARD_CONFIG_CONFLICT', M.boardConflict(name, result.message));
    this.cache.remember(result.config);
    return { created: result.status === 'created', board: viewOf(result.config) };
  }

  async getBoard(name: string): Promise<BoardView> {
    return viewOf((await this.cache.reload(name)).config);
  }

  /**
   * One page of boards in byte order of name: from `offset`, or after the name `cursor` (stable while
   * boards come and go). Only the page's configs are read. `total` counts registered names, which may
   * for a moment include a board whose PUT or DELETE is under way (such a name is not listed);
   * `nextCursor` is the last name of a full page, null at the end.
   */
  async listBoards(page: BoardPage): Promise<{ boards: BoardView[]; total: number; nextCursor: string | null }> {
    const from = page.cursor === undefined ? { offset: page.offset } : { after: page.cursor };
    const { names, total } = await this.store.boardNamesPage(from, page.limit);
    const configs = await this.store.loadBoards(names);
    return {
      boards: configs.filter((config) => config !== undefined).map(viewOf),
      total,
      nextCursor: names.length === page.limit ? names[names.length - 1] : null,
    };
  }

  async deleteBoard(name: string): Promise<void> {
    const existed = await this.store.deleteBoard(name, this.clock.nowMs());
    this.cache.forget(name);
    if (!existed) throw new NotFoundError('BOARD_NOT_FOUND', M.boardNotFound(name));
  }

  /**
   * The board's change version: grows with every write (what the live stream polls). A group board's
   * groups live under its member board, whose version every member write, join and leave bumps.
   */
  async changeVersion(name: string): Promise<number> {
    const board = await this.cache.get(name);
    const own = await this.store.changeVersion(board);
    const member = board.config.groupOf?.board;
    return member === undefined ? own : own + (await this.store.changeVersion(await this.cache.get(member)));
  }

  /**
   * An all-time window never lets an item go, so the board's cap (maxItems) bounds what it holds (what
   * else it would keep for good, an option refuses: its check is told the window).
   */
  private async checkAllTime(input: PutBoardInput, windows: WindowSpec[]): Promise<void> {
    const allTime = windows.find((w) => w.allTime);
    if (!allTime) return;
    const stored = await this.store.loadBoard(input.name);
    if ((input.maxItems ?? stored?.maxItems ?? null) === null)
      throw new InvalidInputError(M.allTimeNeedsCap(input.name, allTime.name));
  }

  /**
   * The options as the board will hold them (omitted settings: the stored ones, the aggregate among
   * them), each checked (checkOptions).
   */
  private async checkBoardOptions(
    input: PutBoardInput,
    windows: WindowSpec[],
    views: ViewConfig[],
  ): Promise<BoardOptionsConfig> {
    const asked: Record<string, unknown> = { ...optionsOf(input) };
    const stored = await this.store.loadBoard(input.name);
    const kept: Record<string, unknown> = stored ? { ...optionsOf(stored) } : {};
    const options = Object.fromEntries(Object.keys(asked).map((field) => [field, asked[field] ?? kept[field]]));
    const holds = {
      views: (input.views?.length ?? stored?.views.length ?? 0) > 0,
      segments: options.segmentsMax !== undefined,
      actors: options.actors === true,
    };
    const aggregate = input.aggregate ?? stored?.aggregate ?? 'sum';
    const shards = input.shards ?? stored?.shards ?? 1;
    const calendarWindows = windows.filter((w) => w.calendar !== undefined).map((w) => w.name);
    const keeping = windows.flatMap((w) =>
      w.snapshots ? [{ calendar: w.calendar !== undefined, ...w.snapshots }] : [],
    );
    const histories = { windows: keeping, mostWindows: WINDOWS_PER_BOARD.max };
    const modes = views.map((view) => ({ name: view.name, mode: view.mode }));
    const allTimeWindow = windows.find((w) => w.allTime)?.name;
    const board = { name: input.name, aggregate, options, holds, views: modes, allTimeWindow, shards, windows };
    checkOptions({ ...board, calendarWindows, histories });
    return { ...options, aggregate } as BoardOptionsConfig;
  }

  /**
   * The board's costliest single write (write-cost's costliestWrite) is one write call: past
   * WRITE_COST_PER_CALL it is refused, unless the stored board already weighs as much (a board declared
   * before the bound, or under a higher one, keeps its config and its writes; it may only get lighter).
   */
  private async checkWriteCost(
    input: PutBoardInput,
    declared: { windows: WindowSpec[]; views: ViewConfig[]; options: BoardOptionsConfig },
  ): Promise<void> {
    const stored = await this.store.loadBoard(input.name);
    const cost = costliestWrite({ ...declared.options, windows: declared.windows, views: declared.views });
    const bound = this.settings.writeCostPerCall;
    if (cost > bound && cost > (stored ? costliestWrite(stored) : 0))
      throw new BoardWriteTooCostlyError(M.boardWriteTooCostly(input.name, cost, bound));
  }

  /** The stored views, checked again against the new windows (a PUT without `views` keeps them). */
  private async keptViews(name: string, windows: WindowSpec[], metrics: readonly string[]): Promise<ViewConfig[]> {
    const stored = (await this.store.loadBoard(name))?.views ?? [];
    try {
      return resolveViews(stored.map(viewViewOf), windows, metrics);
    } catch (error) {
      if (!(error instanceof InvalidInputError)) throw error;
      throw new ConflictError(
        'BOARD_CONFIG_CONFLICT',
        M.boardConflict(name, VIEWS_MESSAGES.keptViewsBroken(error.message)),
      );
    }
  }
}

function viewOf(config: BoardConfig): BoardView {
  return {
    name: config.name,
    shards: config.shards,
    windows: config.windows.map(windowViewOf),
    ...(config.maxItems === null ? {} : { maxItems: config.maxItems }),
    ...(config.views.length === 0 ? {} : { views: config.views.map(viewViewOf) }),
    ...optionsView(config),
  };
}

function windowViewOf(w: WindowConfig): WindowView {
  const { showsSpan, view } = windowOptionsView(w);
  return { name: w.name, ...(showsSpan ? { period: w.periodSec, interval: w.intervalSec } : {}), ...view };
}

/** The windows a PUT declares; a group board's (groupOf) declares none and holds its member window's name. */
function windowsOf(input: PutBoardInput): WindowInput[] {
  if (input.groupOf === undefined) return input.windows ?? [];
  if (input.windows !== undefined) throw new InvalidInputError(GROUP_OF_MESSAGES.notWithout(input.name, 'windows'));
  return groupBoardWindows(input.groupOf);
}
