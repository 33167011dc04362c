import type { ReadCharge } from '../../governance/read-charge';
import { Injectable, Optional } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { Clock } from '../../common/clock';
import { ConflictError, InvalidInputError, NotFoundError, WindowDrainingError } from '../../common/errors';
import { BoardConfig, PreparedBoard } from '../core/board';
import { BOARD_CACHE_ENTRIES, MAX_READ_DRAIN_CALLS } from '../core/ranking.limits';
import { RANKING_MESSAGES as M } from '../core/ranking.messages';
import { BoardGoneError, isRefusal, StaleConfigError } from '../core/ranking.errors';
import type { WindowConfig } from '../core/window-math';
import { METRICS_MESSAGES, metricOf } from '../options/metrics/metrics.option';
import { SEGMENTS_MESSAGES } from '../options/segments/segments.option';
import type { ViewConfig } from '../options/views/trending-math';
import { BoardsStore } from './boards.store';
import { GroupSources } from './group-sources';

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

/** A read of one ranked source of a board, given its cached config and the time of the read. */
export type SourceRead<Source, T> = (board: PreparedBoard, source: Source, nowMs: number) => Promise<T>;

/**
 * The ranked sources of a board by name: a window or a view. Every read of either (windows, views,
 * history) goes through `read`, which finds the source and keeps the read exact while expired data drains.
 */
@Injectable()
export class RankedSources {
  constructor(
    private readonly cache: BoardCache,
    private readonly clock: Clock,
    @Optional() private readonly groups?: GroupSources,
  ) {}

  /**
   * Runs `onWindow` on the named window, or `onView` on the named view (404 naming both when neither
   * exists), exact: a read whose window still holds expired data after its script drained one chunk
   * (a slot larger than EXPIRE_CHUNK) would list what fell out of the window, so it is sent again, each
   * time draining one more chunk, up to MAX_READ_DRAIN_CALLS; still draining then, it is a 503
   * WINDOW_DRAINING (the scheduler and the next reads go on draining). Each call is as short as any
   * expiry call: Redis is never held longer for it. (History reads answer no `draining`: snapshots are
   * taken before anything expires; but an item history does while an archive of a period it answers
   * is still being written on another shard, or of another metric: history.store.ts, metric-counts.ts.) With `segment`, the
   * window or view is read as that segment's (a 400 on a board without segments).
   */
  async read<T extends object>(
    name: string,
    sourceName: string | undefined,
    onWindow: SourceRead<WindowConfig, T>,
    onView: SourceRead<ViewConfig, T>,
    segment?: string,
    metric?: string,
    charge?: ReadCharge,
  ): Promise<T> {
    for (let call = 1; ; call++) {
      const answer = await this.cache.withBoard(name, (board): Promise<T | { draining: true }> => {
        if (board.config.groupOf && this.groups && segment === undefined && metric === undefined)
          return this.groups.read(board, sourceName, this.clock.nowMs(), onWindow, charge);
        const window = board.window(sourceName);
        const counter = metricOf(name, board.config, metric);
        if (window) return onWindow(segmentOf(board.metric(counter), segment), window, this.clock.nowMs());
        const view = board.view(sourceName);
        if (view && counter !== undefined) throw new InvalidInputError(METRICS_MESSAGES.metricOnView(name, view.name));
        if (view) return onView(segmentOf(board, segment), view, this.clock.nowMs());
        const known = [...board.config.windows, ...board.config.views].map((w) => w.name);
        throw new NotFoundError('WINDOW_NOT_FOUND', M.windowNotFound(name, sourceName, known));
      });
      if (!('draining' in answer && answer.draining)) return answer as T;
      if (call >= MAX_READ_DRAIN_CALLS) throw new WindowDrainingError(M.windowDraining(name, MAX_READ_DRAIN_CALLS));
    }
  }

  /** Runs `read` on a board that takes segments (a 400 on one that takes none; 404 when it does not exist). */
  withSegments<T>(name: string, read: SourceRead<void, T>): Promise<T> {
    return this.cache.withBoard(name, (board) => {
      if (board.config.segmentsMax === undefined) throw new InvalidInputError(SEGMENTS_MESSAGES.noSegmentRead(name));
      return read(board, undefined, this.clock.nowMs());
    });
  }
}

/** The board as its segment reads (the board itself without one); a 400 on a board taking no segments. */
function segmentOf(board: PreparedBoard, segment: string | undefined): PreparedBoard {
  if (segment === undefined) return board;
  if (board.config.segmentsMax === undefined)
    throw new InvalidInputError(SEGMENTS_MESSAGES.noSegmentRead(board.config.name));
  return board.segment(segment);
}
