import { Injectable, Logger } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { Clock } from '../common/clock';
import { ConflictError, InvalidInputError, NotFoundError } from '../common/errors';
import { PreparedBoard } from './board';
import { BatchEntry, BoardGoneError, ListedItem, RankingStore, Standing, StaleConfigError } from './ranking.store';
import { MAX_SHARDED_DEPTH_ITEMS } from './ranking.limits';
import { groupByShard } from './shard-math';
import { resolveWindows, WindowConfig, WindowInput, windowSpan } from './window-math';

export interface BoardView {
  name: string;
  shards: number;
  windows: Array<{ name: string; period: number; interval: number }>;
}

export interface WindowFigures {
  board: string;
  window: string;
  /** Start of the oldest live slot and end of the current one (unix s): the span the figures cover. */
  from: number;
  to: number;
  /** True while an expired slot larger than one chunk is still being subtracted. */
  draining: boolean;
}

/** Most expire calls one board gets per scheduler pass (each drains at most one chunk). */
const MAX_EXPIRE_CALLS_PER_PASS = 100;

/**
 * Boards, windows, increments, likes and reads. Board configs are cached in process and every script
 * checks the cached version, so a request is one Redis round trip; on a version mismatch the config is
 * reloaded and the call retried once.
 */
@Injectable()
export class RankingService {
  private readonly boards = new Map<string, PreparedBoard>();
  private readonly logger = new Logger('Ranking');

  constructor(
    private readonly store: RankingStore,
    private readonly clock: Clock,
  ) {}

  async putBoard(
    name: string,
    windows: WindowInput[],
    shards?: number,
    reset = false,
  ): Promise<{ created: boolean; board: BoardView }> {
    const specs = resolveWindows(windows);
    const result = await this.store.putBoard(name, specs, shards, reset, randomUUID(), this.clock.nowMs());
    if (result.status === 'conflict') throw new ConflictError(`board "${name}": ${result.message}`);
    this.boards.set(name, this.store.prepare(result.config));
    return { created: result.status === 'created', board: viewOf(result.config) };
  }

  async getBoard(name: string): Promise<BoardView> {
    return viewOf((await this.reload(name)).config);
  }

  async listBoards(): Promise<BoardView[]> {
    const names = (await this.store.listBoardNames()).sort();
    const configs = await Promise.all(names.map((name) => this.store.loadBoard(name)));
    return configs.filter((config) => config !== undefined).map(viewOf);
  }

  async deleteBoard(name: string): Promise<void> {
    const existed = await this.store.deleteBoard(name);
    this.boards.delete(name);
    if (!existed) throw new NotFoundError(`board "${name}" does not exist`);
  }

  async increment(name: string, item: string, amount: number) {
    return this.withBoard(name, async (board) => {
      const result = await this.store.increment(board, this.clock.nowMs(), item, amount);
      return { board: name, item, windows: byWindow(board, result.standings), draining: result.draining };
    });
  }

  /**
   * On a sharded board the shards apply their entries independently: when some shard refuses because
   * the config changed, only its entries are retried (regrouped by the reloaded config), once.
   */
  async incrementBatch(name: string, entries: BatchEntry[]) {
    let pending = entries;
    let applied = 0;
    let draining = false;
    for (let attempt = 0; attempt < 2; attempt++) {
      const board = (attempt === 0 && this.boards.get(name)) || (await this.reload(name));
      const outcome = await this.store.incrementBatch(
        board,
        this.clock.nowMs(),
        groupByShard(pending, board.shards.length),
      );
      applied += outcome.applied;
      draining ||= outcome.draining;
      if (outcome.refused.length === 0) return { board: name, count: applied, draining };
      const unexpected = outcome.errors.find(
        (error) => !(error instanceof StaleConfigError || error instanceof BoardGoneError),
      );
      if (unexpected !== undefined) throw unexpected;
      pending = outcome.refused;
    }
    if (applied > 0)
      throw new ConflictError(
        `board "${name}" changed during the request: ${applied} of ${entries.length} entries applied, ${pending.length} not; retry those`,
      );
    if (!(await this.store.loadBoard(name))) throw new NotFoundError(`board "${name}" does not exist`);
    throw new ConflictError(`board "${name}" changed during the request; retry`);
  }

  /** Likes (undo = false) or takes a like back (undo = true). */
  async like(name: string, item: string, userId: string, undo: boolean) {
    return this.withBoard(name, async (board) => {
      const result = await this.store.like(board, this.clock.nowMs(), item, userId, undo);
      return {
        board: name,
        item,
        userId,
        counted: result.counted,
        windows: byWindow(board, result.standings),
        draining: result.draining,
      };
    });
  }

  async top(
    name: string,
    windowName: string | undefined,
    offset: number,
    limit: number,
  ): Promise<WindowFigures & { items: ListedItem[] }> {
    return this.withWindow(name, windowName, async (board, window, nowMs) => {
      // Every shard sends its head down to offset + limit: bounded, so one request cannot make them all send millions of rows.
      if (board.sharded && offset + limit > MAX_SHARDED_DEPTH_ITEMS) {
        throw new InvalidInputError(
          `offset + limit must be at most ${MAX_SHARDED_DEPTH_ITEMS} on a sharded board (page deeper with /around)`,
        );
      }
      const result = await this.store.top(board, window, nowMs, offset, limit);
      return { ...figures(name, window, nowMs, result.draining), items: result.items };
    });
  }

  async item(name: string, windowName: string | undefined, item: string) {
    return this.withWindow(name, windowName, async (board, window, nowMs) => {
      const { draining, standing, ranked } = await this.store.item(board, window, nowMs, item);
      return {
        ...figures(name, window, nowMs, draining),
        item,
        score: standing.score,
        rank: standing.rank,
        percentile: percentileOf(standing, ranked),
      };
    });
  }

  async around(
    name: string,
    windowName: string | undefined,
    item: string,
    radius: number,
  ): Promise<WindowFigures & { item: string; items: ListedItem[] }> {
    return this.withWindow(name, windowName, async (board, window, nowMs) => {
      const result = await this.store.around(board, window, nowMs, item, radius);
      return { ...figures(name, window, nowMs, result.draining), item, items: result.items };
    });
  }

  /**
   * One scheduler pass: expires every board's windows until nothing expired remains (bounded per board).
   * Safe to run from several instances at once: each expire call is one atomic script.
   */
  async expireAll(): Promise<{ boards: number; failures: number; stillDraining: number }> {
    const names = await this.store.listBoardNames();
    let failures = 0;
    let stillDraining = 0;
    for (const name of names) {
      try {
        const draining = await this.withBoard(name, async (board) => {
          for (let call = 0; call < MAX_EXPIRE_CALLS_PER_PASS; call++) {
            if (!(await this.store.expire(board, this.clock.nowMs()))) return false;
          }
          return true;
        });
        if (draining) stillDraining++;
      } catch (error) {
        if (error instanceof NotFoundError) {
          await this.store.unregisterIfMissing(name);
          continue;
        }
        failures++;
        this.logger.warn(`expiring board "${name}" failed: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    return { boards: names.length, failures, stillDraining };
  }

  private async withWindow<T>(
    name: string,
    windowName: string | undefined,
    read: (board: PreparedBoard, window: WindowConfig, nowMs: number) => Promise<T>,
  ): Promise<T> {
    return this.withBoard(name, (board) => {
      const window = board.window(windowName);
      if (!window) {
        const known = board.config.windows.map((w) => w.name).join(', ');
        throw new NotFoundError(`window "${windowName}" does not exist on board "${name}" (windows: ${known})`);
      }
      return read(board, window, this.clock.nowMs());
    });
  }

  private async withBoard<T>(name: string, run: (board: PreparedBoard) => Promise<T>): Promise<T> {
    const cached = this.boards.get(name);
    if (cached) {
      try {
        return await run(cached);
      } catch (error) {
        if (!(error instanceof StaleConfigError || error instanceof BoardGoneError)) throw error;
      }
    }
    const fresh = await this.reload(name);
    try {
      return await run(fresh);
    } catch (error) {
      // Shard 0 was just read, so on a sharded board a missing config is another shard's.
      if (error instanceof BoardGoneError && fresh.sharded)
        throw new ConflictError(
          `board "${name}" has a shard without its config (a PUT in progress, or one that failed: repeat it)`,
        );
      if (error instanceof BoardGoneError) throw new NotFoundError(`board "${name}" does not exist`);
      if (error instanceof StaleConfigError)
        throw new ConflictError(`board "${name}" changed during the request; retry`);
      throw error;
    }
  }

  private async reload(name: string): Promise<PreparedBoard> {
    const config = await this.store.loadBoard(name);
    if (!config) {
      this.boards.delete(name);
      throw new NotFoundError(`board "${name}" does not exist`);
    }
    const board = this.store.prepare(config);
    this.boards.set(name, board);
    return board;
  }
}

function viewOf(config: { name: string; shards: number; windows: WindowConfig[] }): BoardView {
  return {
    name: config.name,
    shards: config.shards,
    windows: config.windows.map((w) => ({ name: w.name, period: w.periodSec, interval: w.intervalSec })),
  };
}

function byWindow(board: PreparedBoard, standings: Standing[]): Record<string, Standing> {
  return Object.fromEntries(board.config.windows.map((w, i) => [w.name, standings[i]]));
}

function figures(board: string, window: WindowConfig, nowMs: number, draining: boolean): WindowFigures {
  const span = windowSpan(nowMs, window);
  return { board, window: window.name, from: span.fromSec, to: span.toSec, draining };
}

/** Share of the other ranked items scoring at or below this one, in percent (100: nobody scores higher). */
export function percentileOf(standing: Standing, ranked: number): number | null {
  if (standing.rank === null) return null;
  if (ranked <= 1) return 100;
  return Math.round(((ranked - standing.rank) / (ranked - 1)) * 10000) / 100;
}
