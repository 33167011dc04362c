import { InvalidInputError } from '../../common/errors';
import { parseDurationSec } from '../../common/duration';
import { keptScore } from '../options/registry';
import { figures, WindowFigures } from './answers';
import { PreparedBoard } from './board';
import { SPAN_MAX_FIELDS } from './ranking.limits';
import { RANKING_MESSAGES as M } from './ranking.messages';
import type { WindowConfig } from './window-math';

/**
 * A read of a window's newest `spanSec` seconds of slots at one time: GET top?span's reads (spans/) and
 * POST query's filtered scan (filters/) check and bound it alike.
 */
export interface SpanRead {
  board: PreparedBoard;
  window: WindowConfig;
  nowMs: number;
  spanSec: number;
}

/** Slot fields one shard's read_span may sum: SPAN_MAX_FIELDS shared by the board's shards. */
export function spanFieldsPerShard(board: PreparedBoard): number {
  return Math.max(1, Math.floor(SPAN_MAX_FIELDS / board.shards.length));
}

/** The span as seconds, refused (400 naming it) unless a multiple of the window's interval and at most its period. */
export function spanRead(board: PreparedBoard, window: WindowConfig, nowMs: number, span: string): SpanRead {
  if (window.calendar) throw new InvalidInputError(M.spanOnCalendar(board.config.name, window.name));
  if (window.allTime) throw new InvalidInputError(M.spanOnAllTime(board.config.name, window.name));
  // A span sums its slots: a window keeping a score of each item (max / min / last) holds no amounts to sum.
  const kept = keptScore(board.config);
  if (kept !== undefined) throw new InvalidInputError(M.spanNeedsSum(board.config.name, kept));
  const spanSec = parseDurationSec(span) ?? 0;
  if (spanSec <= 0 || spanSec % window.intervalSec !== 0 || spanSec > window.periodSec)
    throw new InvalidInputError(
      M.spanNotInWindow(board.config.name, window.name, spanSec, window.periodSec, window.intervalSec),
    );
  return { board, window, nowMs, spanSec };
}

/** A span's figures: those of a window whose period is the span (it never drains). */
export function spanFigures(read: SpanRead): WindowFigures {
  return figures(read.board.config.name, { ...read.window, periodSec: read.spanSec }, read.nowMs, false);
}
