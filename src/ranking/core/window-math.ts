import { InvalidInputError } from '../../common/errors';
import { RANKING_MESSAGES as M } from './ranking.messages';
import { parseDurationSec } from '../../common/duration';
import { isName, NAME_RULE } from '../../common/names';
import { MAX_FUTURE_SKEW_SEC } from '../../common/limits';
import { MAX_SLOTS_PER_WINDOW, WINDOWS_PER_BOARD } from './ranking.limits';

/** A window counts the newest periodSec / intervalSec slots of intervalSec each, the current one included. */
export interface WindowSpec {
  name: string;
  periodSec: number;
  intervalSec: number;
  /** Absent: the window keeps no history. */
  snapshots?: SnapshotSpec;
}

/** At each slot boundary the window's top `top` rows are stored; the newest `keep` boundaries are kept. */
export interface SnapshotSpec {
  keep: number;
  top: number;
}

/** A window as stored: `createdAtMs` tells likes made before a reset remade the window from later ones. */
export interface WindowConfig extends WindowSpec {
  createdAtMs: number;
}

export interface WindowInput {
  name?: string;
  period: string | number;
  interval: string | number;
  snapshots?: SnapshotSpec;
}

export function slotStartSec(timeSec: number, intervalSec: number): number {
  return timeSec - (((timeSec % intervalSec) + intervalSec) % intervalSec);
}

/**
 * The span a window's figures cover at `nowMs`: from the start of the oldest live slot to the end of
 * the current one, so between periodSec - intervalSec and periodSec seconds of history.
 */
export function windowSpan(nowMs: number, window: WindowSpec): { fromSec: number; toSec: number } {
  const currentSec = slotStartSec(Math.floor(nowMs / 1000), window.intervalSec);
  return { fromSec: currentSec - window.periodSec + window.intervalSec, toSec: currentSec + window.intervalSec };
}

/** Whether a window still counts the slot of an event at `atSec` (its slot is live at `nowMs`). */
export function windowHolds(window: WindowSpec, atSec: number, nowMs: number): boolean {
  return slotStartSec(Math.floor(atSec), window.intervalSec) >= windowSpan(nowMs, window).fromSec;
}

/**
 * An event's time as the scripts take it (unix ms): `atSec` (fractions kept to the ms), at most now, since
 * an event a little ahead of our clock (MAX_FUTURE_SKEW_SEC) is clock skew: it happened now. No `at`: now.
 */
export function eventTimeMs(atSec: number | undefined, nowMs: number): number {
  return atSec === undefined ? nowMs : Math.min(Math.round(atSec * 1000), nowMs);
}

/**
 * Why an event at `atSec` is refused at `nowMs` (`field` names it), or undefined when some window still
 * counts its slot. Windows whose live span no longer holds it simply skip it.
 */
export function atProblem(
  field: string,
  atSec: number,
  nowMs: number,
  windows: readonly WindowSpec[],
): { kind: 'future' | 'past'; message: string } | undefined {
  const nowSec = nowMs / 1000;
  if (atSec > nowSec + MAX_FUTURE_SKEW_SEC) {
    return {
      kind: 'future',
      message: M.atInFuture(field, MAX_FUTURE_SKEW_SEC, atSec, nowSec),
    };
  }
  if (!windows.some((window) => windowHolds(window, eventTimeMs(atSec, nowMs) / 1000, nowMs))) {
    const oldest = Math.min(...windows.map((window) => windowSpan(nowMs, window).fromSec));
    return { kind: 'past', message: M.atTooOld(field, oldest, atSec, nowSec) };
  }
  return undefined;
}

/** Checks a requested window list and resolves durations and default names; throws naming the problem. */
export function resolveWindows(inputs: WindowInput[]): WindowSpec[] {
  if (inputs.length < WINDOWS_PER_BOARD.min || inputs.length > WINDOWS_PER_BOARD.max) {
    throw new InvalidInputError(M.windowCount(WINDOWS_PER_BOARD.min, WINDOWS_PER_BOARD.max));
  }
  const seen = new Set<string>();
  return inputs.map((input, index) => {
    const periodSec = parseDurationSec(input.period);
    const intervalSec = parseDurationSec(input.interval);
    const field = `windows.${index}`;
    if (periodSec === undefined) throw new InvalidInputError(M.notADuration(`${field}.period`));
    if (intervalSec === undefined) throw new InvalidInputError(M.notADuration(`${field}.interval`));
    if (periodSec % intervalSec !== 0) throw new InvalidInputError(M.periodNotMultiple(field));
    if (periodSec / intervalSec > MAX_SLOTS_PER_WINDOW) {
      throw new InvalidInputError(M.tooManySlots(field, periodSec / intervalSec, MAX_SLOTS_PER_WINDOW));
    }
    const name = input.name ?? String(input.period);
    if (!isName(name)) throw new InvalidInputError(M.badWindowName(field, NAME_RULE));
    if (seen.has(name)) throw new InvalidInputError(M.windowNameTwice(field, name));
    seen.add(name);
    const snapshots = input.snapshots && { keep: input.snapshots.keep, top: input.snapshots.top };
    return { name, periodSec, intervalSec, ...(snapshots ? { snapshots } : {}) };
  });
}
