import { Injectable } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { ConflictError, NotFoundError } from '../../common/errors';
import { BoardConfig, PreparedBoard } from '../core/board';
import { BOARD_CACHE_ENTRIES } from '../core/ranking.limits';
import { RANKING_MESSAGES as M } from '../core/ranking.messages';
import { BoardGoneError, isRefusal, StaleConfigError } from '../core/ranking.errors';
import { BoardsStore } from './boards.store';

/**
 * Board configs cached in process, so a request is one Redis round trip. Every script checks the
 * cached version; when a script refuses it (the board changed or is gone), the config is reloaded and
 * the call retried once. At most BOARD_CACHE_ENTRIES, the least recently used dropped first.
 */
@Injectable()
export class BoardCache {
  private readonly boards = new LRUCache<string, PreparedBoard>({ max: BOARD_CACHE_ENTRIES });

  constructor(private readonly store: BoardsStore) {}

  /** Caches a config just written (a PUT): the next request uses it without a read. */
  remember(config: BoardConfig): PreparedBoard {
    const board = this.store.prepare(config);
    this.boards.set(config.name, board);
    return board;
  }

  forget(name: string): void {
    this.boards.delete(name);
  }

  /** The cached board, if any (no read). */
  cached(name: string): PreparedBoard | undefined {
    return this.boards.get(name);
  }

  /** The cached board, else the stored one. */
  async get(name: string): Promise<PreparedBoard> {
    return this.boards.get(name) ?? this.reload(name);
  }

  /** Reads the stored config (404 when there is none) and caches it. */
  async reload(name: string): Promise<PreparedBoard> {
    const config = await this.store.loadBoard(name);
    if (!config) {
      this.boards.delete(name);
      throw new NotFoundError('BOARD_NOT_FOUND', M.boardNotFound(name));
    }
    return this.remember(config);
  }

  /**
   * Runs `run` with the cached config; when a script refuses it as stale or gone, once more with the
   * stored one. A second refusal is a 404 (the board is gone) or a 409 the client may retry: nothing
   * was applied by a refused script.
   */
  withBoard<T>(name: string, run: (board: PreparedBoard) => Promise<T>): Promise<T> {
    const cached = this.boards.get(name);
    if (!cached) return this.withStored(name, run);
    // A `catch` on the write's own promise: every write passes here, and an async frame costs each a promise.
    return attempt(run, cached).catch((error: unknown) => this.retryStored(name, error, run));
  }

  /** `run` once more with the stored config when a script refused the cached one (`error`); any other error, rejected. */
  retryStored<T>(name: string, error: unknown, run: (board: PreparedBoard) => Promise<T>): Promise<T> {
    if (!isRefusal(error)) return Promise.reject(error);
    return this.withStored(name, run);
  }

  private async withStored<T>(name: string, run: (board: PreparedBoard) => Promise<T>): Promise<T> {
    const fresh = await this.reload(name);
    try {
      return await run(fresh);
    } catch (error) {
      // Shard 0 was just read, so on a sharded board a missing config is another shard's.
      if (error instanceof BoardGoneError && fresh.sharded)
        throw new ConflictError('BOARD_INCOMPLETE', M.boardIncomplete(name));
      if (error instanceof BoardGoneError) throw new NotFoundError('BOARD_NOT_FOUND', M.boardNotFound(name));
      if (error instanceof StaleConfigError) throw new ConflictError('CONFIG_CHANGED', M.configChanged(name));
      throw error;
    }
  }
}

/** `run(board)`, a synchronous throw included, as a promise. */
function attempt<T>(run: (board: PreparedBoard) => Promise<T>, board: PreparedBoard): Promise<T> {
  try {
    return run(board);
  } catch (error) {
    return Promise.reject(error);
  }
}
