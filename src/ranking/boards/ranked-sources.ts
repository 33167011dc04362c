import { Injectable, Optional } from '@nestjs/common';
import { Clock } from '../../common/clock';
import { InvalidInputError, NotFoundError, WindowDrainingError } from '../../common/errors';
import { PreparedBoard } from '../core/board';
import { MAX_READ_DRAIN_CALLS } from '../core/ranking.limits';
import { RANKING_MESSAGES as M } from '../core/ranking.messages';
import type { ViewConfig } from '../options/views/trending-math';
import type { WindowConfig } from '../core/window-math';
import { METRICS_MESSAGES, metricOf } from '../options/metrics/metrics.option';
import { BoardCache } from './board-cache';
import { GroupSources } from './group-sources';
import { SEGMENTS_MESSAGES } from '../options/segments/segments.option';

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
   * taken before anything expires.) With `segment`, the window or view is read as that segment's (a
   * 400 on a board without segments).
   */
  async read<T extends object>(
    name: string,
    sourceName: string | undefined,
    onWindow: SourceRead<WindowConfig, T>,
    onView: SourceRead<ViewConfig, T>,
    segment?: string,
    metric?: string,
  ): Promise<T> {
    for (let call = 1; ; call++) {
      const answer = await this.cache.withBoard(name, (board): Promise<T | { draining: true }> => {
        if (board.config.groupOf && this.groups && segment === undefined && metric === undefined)
          return this.groups.read(board, sourceName, this.clock.nowMs(), onWindow);
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
