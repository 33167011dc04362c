import { Injectable, Logger } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { Clock } from '../common/clock';
import { WriteAnswer } from '../common/retry-safe';
import { idemRequest } from '../redis/idempotency';
import { ConflictError, InvalidInputError, NotFoundError } from '../common/errors';
import { PreparedBoard } from './board';
import { BoardCache, isRefusal } from './board-cache';
import { RANKING_MESSAGES as M } from './ranking.messages';
import { BatchEntry, ListedItem, RankingStore, Standing } from './ranking.store';
import { MAX_SHARDED_DEPTH_ITEMS } from './ranking.limits';
import { groupByShard } from './shard-math';
import { resolveWindows, WindowConfig, WindowInput, windowSpan } from './window-math';

export interface BoardView {
  name: string;
  shards: number;
  windows: Array<{ name: string; period: number; interval: number }>;
}

/** What an item write answers: each window's new standing. */
export interface ItemWritten {
  board: string;
  item: string;
  windows: Record<string, Standing>;
  /** True while an expired slot larger than one chunk is still being subtracted. */
  draining: boolean;
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

/** The ranking use cases: boards, increments, likes, reads and the expiry pass (configs come from BoardCache). */
@Injectable()
export class RankingService {
  private readonly logger = new Logger('Ranking');

  constructor(
    private readonly store: RankingStore,
    private readonly cache: BoardCache,
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
    if (result.status === 'conflict')
      throw new ConflictError('BOARD_CONFIG_CONFLICT', M.boardConflict(name, result.message));
    this.cache.remember(result.config);
    return { created: result.status === 'created', board: viewOf(result.config) };
  }

  async getBoard(name: string): Promise<BoardView> {
    return viewOf((await this.cache.reload(name)).config);
  }

  async listBoards(): Promise<BoardView[]> {
    const names = (await this.store.listBoardNames()).sort();
    const configs = await Promise.all(names.map((name) => this.store.loadBoard(name)));
    return configs.filter((config) => config !== undefined).map(viewOf);
  }

  async deleteBoard(name: string): Promise<void> {
    const existed = await this.store.deleteBoard(name, this.clock.nowMs());
    this.cache.forget(name);
    if (!existed) throw new NotFoundError('BOARD_NOT_FOUND', M.boardNotFound(name));
  }

  async increment(name: string, item: string, amount: number, idemKey?: string): Promise<WriteAnswer<ItemWritten>> {
    const idem = idemRequest(idemKey, ['increment', name, item, amount]);
    return this.cache.withBoard(name, async (board) => {
      const result = await this.store.increment(board, this.clock.nowMs(), item, amount, idem);
      return {
        replayed: result.replayed,
        body: { board: name, item, windows: byWindow(result), draining: result.draining },
      };
    });
  }

  /**
   * On a sharded board the shards apply their entries independently: when some shard refuses because
   * the config changed, only its entries are retried (regrouped by the reloaded config), once.
   */
  async incrementBatch(
    name: string,
    entries: BatchEntry[],
    idemKey?: string,
  ): Promise<WriteAnswer<{ board: string; count: number; draining: boolean }>> {
    const idem = idemRequest(idemKey, ['increments', name, entries.map((e) => [e.item, e.amount])]);
    // The request's time is when it arrived, whatever loading the config costs.
    const nowMs = this.clock.nowMs();
    let pending = entries;
    let applied = 0;
    let draining = false;
    let replayed = true;
    for (let attempt = 0; attempt < 2; attempt++) {
      const board = attempt === 0 ? await this.cache.get(name) : await this.cache.reload(name);
      const outcome = await this.store.incrementBatch(board, nowMs, groupByShard(pending, board.shards.length), idem);
      applied += outcome.applied;
      draining ||= outcome.draining;
      replayed &&= outcome.replayed;
      if (outcome.refused.length === 0) return { replayed, body: { board: name, count: applied, draining } };
      const unexpected = outcome.errors.find((error) => !isRefusal(error));
      if (unexpected !== undefined) throw unexpected;
      pending = outcome.refused;
    }
    if (applied > 0)
      throw new ConflictError('BATCH_PARTIAL', M.batchPartial(name, applied, entries.length, pending.length));
    if (!(await this.store.loadBoard(name))) throw new NotFoundError('BOARD_NOT_FOUND', M.boardNotFound(name));
    throw new ConflictError('CONFIG_CHANGED', M.configChanged(name));
  }

  /** Likes (undo = false) or takes a like back (undo = true). */
  async like(
    name: string,
    item: string,
    userId: string,
    undo: boolean,
    idemKey?: string,
  ): Promise<WriteAnswer<ItemWritten & { userId: string; counted: boolean }>> {
    const idem = idemRequest(idemKey, [undo ? 'unlike' : 'like', name, item, userId]);
    return this.cache.withBoard(name, async (board) => {
      const result = await this.store.like(board, this.clock.nowMs(), item, userId, undo, idem);
      return {
        replayed: result.replayed,
        body: {
          board: name,
          item,
          userId,
          counted: result.counted,
          windows: byWindow(result),
          draining: result.draining,
        },
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
        throw new InvalidInputError(M.shardedPageTooDeep(MAX_SHARDED_DEPTH_ITEMS));
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
  async expireAll(): Promise<{ boards: number; failures: number; stillDraining: number; skipped: number }> {
    const names = await this.store.listBoardNames();
    let failures = 0;
    let stillDraining = 0;
    let skipped = 0;
    for (const name of names) {
      try {
        const draining = await this.cache.withBoard(name, async (board) => {
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
        // A PUT of this board is under way (shards not synced yet): the next pass expires it.
        if (error instanceof ConflictError) {
          skipped++;
          continue;
        }
        failures++;
        this.logger.warn(`expiring board "${name}" failed: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    return { boards: names.length, failures, stillDraining, skipped };
  }

  private async withWindow<T>(
    name: string,
    windowName: string | undefined,
    read: (board: PreparedBoard, window: WindowConfig, nowMs: number) => Promise<T>,
  ): Promise<T> {
    return this.cache.withBoard(name, (board) => {
      const window = board.window(windowName);
      if (!window) {
        const known = board.config.windows.map((w) => w.name);
        throw new NotFoundError('WINDOW_NOT_FOUND', M.windowNotFound(name, windowName, known));
      }
      return read(board, window, this.clock.nowMs());
    });
  }
}

function viewOf(config: { name: string; shards: number; windows: WindowConfig[] }): BoardView {
  return {
    name: config.name,
    shards: config.shards,
    windows: config.windows.map((w) => ({ name: w.name, period: w.periodSec, interval: w.intervalSec })),
  };
}

/** Each window's standing by name, in the order of the names the write was answered with. */
function byWindow(written: { windowNames: string[]; standings: Standing[] }): Record<string, Standing> {
  return Object.fromEntries(written.windowNames.map((name, i) => [name, written.standings[i]]));
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
