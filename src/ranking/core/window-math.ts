import { InvalidInputError } from '../../common/errors';
import { RANKING_MESSAGES as M } from './ranking.messages';
import { parseDurationSec, stepStartSec } from '../../common/duration';
import { isName, NAME_RULE } from '../../common/names';
import { MAX_FUTURE_SKEW_SEC } from '../../common/limits';
import { MAX_SLOTS_PER_WINDOW, WINDOWS_PER_BOARD } from './ranking.limits';
import { CalendarSpec, Period, periodAt } from '../options/calendar/calendar-math';
import { CALENDAR_MESSAGES } from '../options/calendar/calendar.limits';
import type { WindowPut, WindowSlots } from '../options/window-option';
import { resolveWindow, type WindowOptionsPut, type WindowOptionsSpec } from '../options/window-registry';

/**
 * A window counts the newest periodSec / intervalSec slots of intervalSec each, the current one included;
 * each window option adds its part (WindowOptionsSpec: `snapshots`, a calendar window's `calendar`, an
 * all-time window's `allTime`).
 */
export interface WindowSpec extends WindowSlots, WindowOptionsSpec {}

/** A window as stored: `createdAtMs` tells likes made before a reset remade the window from later ones. */
export interface WindowConfig extends WindowSpec {
  createdAtMs: number;
}

/** A window of a board PUT: its name and span, and every window option's fields. */
export interface WindowInput extends Partial<WindowOptionsPut> {
  name?: string;
  period?: string | number;
  interval?: string | number;
}

/** How a window's slots fall at one time, as the scripts take it (window_lib's window arguments). */
export interface SlotRule {
  periodSec: number;
  intervalSec: number;
  /** 0 for a rolling window; a calendar window's current period start (unix s). */
  originSec: number;
}

// The current period of each calendar window, reused while the time stays inside it: the zone rules
// (Temporal) cost far more than a comparison, and every call on the board asks.
const currentPeriods = new WeakMap<CalendarSpec, Period>();

/** The calendar period holding `atMs` (unix ms). */
export function calendarPeriod(calendar: CalendarSpec, atMs: number): Period {
  const cached = currentPeriods.get(calendar);
  if (cached && cached.startMs <= atMs && atMs < cached.endMs) return cached;
  const period = periodAt(calendar, atMs);
  currentPeriods.set(calendar, period);
  return period;
}

/** The slot rule of a window at `nowMs`: a calendar window is one slot, its current period. */
export function slotRule(window: WindowSpec, nowMs: number): SlotRule {
  if (!window.calendar) return { periodSec: window.periodSec, intervalSec: window.intervalSec, originSec: 0 };
  const { startMs, endMs } = calendarPeriod(window.calendar, nowMs);
  const lengthSec = (endMs - startMs) / 1000;
  return { periodSec: lengthSec, intervalSec: lengthSec, originSec: startMs / 1000 };
}

/** [period, interval, origin]: a window's slot rule at `nowMs` as the scripts take it (window_lib). */
export function slotRuleArgs(window: WindowSpec, nowMs: number): [number, number, number] {
  const rule = slotRule(window, nowMs);
  return [rule.periodSec, rule.intervalSec, rule.originSec];
}

/**
 * The span a window's figures cover at `nowMs`: from the start of the oldest live slot to the end of
 * the current one, so between periodSec - intervalSec and periodSec seconds of history.
 */
export function windowSpan(nowMs: number, window: WindowSpec): { fromSec: number; toSec: number } {
  if (window.calendar) {
    const { startMs, endMs } = calendarPeriod(window.calendar, nowMs);
    return { fromSec: startMs / 1000, toSec: endMs / 1000 };
  }
  const currentSec = stepStartSec(Math.floor(nowMs / 1000), window.intervalSec);
  return { fromSec: currentSec - window.periodSec + window.intervalSec, toSec: currentSec + window.intervalSec };
}

/** Whether a window still counts the slot of an event at `atSec` (its slot is live at `nowMs`). */
export function windowHolds(window: WindowSpec, atSec: number, nowMs: number): boolean {
  if (window.allTime) return true;
  if (window.calendar) return Math.floor(atSec) >= windowSpan(nowMs, window).fromSec;
  return stepStartSec(Math.floor(atSec), window.intervalSec) >= windowSpan(nowMs, window).fromSec;
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
    const calendar = windows.every((window) => window.calendar) ? windows[0].calendar : undefined;
    if (calendar) {
      const closed = periodAt(calendar, Math.round(atSec * 1000));
      return {
        kind: 'past',
        message: CALENDAR_MESSAGES.atInClosedPeriod(field, closed.startMs / 1000, closed.endMs / 1000, atSec),
      };
    }
    const oldest = Math.min(...windows.map((window) => windowSpan(nowMs, window).fromSec));
    return { kind: 'past', message: M.atTooOld(field, oldest, atSec, nowSec) };
  }
  return undefined;
}

/**
 * Checks a requested window list and resolves durations and default names (each window's options: the
 * window registry's resolveWindow); throws naming the problem.
 */
export function resolveWindows(inputs: WindowInput[]): WindowSpec[] {
  if (inputs.length < WINDOWS_PER_BOARD.min || inputs.length > WINDOWS_PER_BOARD.max) {
    throw new InvalidInputError(M.windowCount(WINDOWS_PER_BOARD.min, WINDOWS_PER_BOARD.max));
  }
  const seen = new Set<string>();
  return inputs.map((input, index) => {
    const field = `windows.${index}`;
    const window = resolveWindow(input as WindowPut, field, rollingSlots);
    if (!isName(window.name)) throw new InvalidInputError(M.badWindowName(field, NAME_RULE));
    if (seen.has(window.name)) throw new InvalidInputError(M.windowNameTwice(field, window.name));
    seen.add(window.name);
    return window;
  });
}

/** A rolling window's name and slots. */
function rollingSlots(input: WindowPut, field: string): WindowSlots {
  const periodSec = parseDurationSec(input.period ?? '');
  const intervalSec = parseDurationSec(input.interval ?? '');
  if (periodSec === undefined) throw new InvalidInputError(M.notADuration(`${field}.period`));
  if (intervalSec === undefined) throw new InvalidInputError(M.notADuration(`${field}.interval`));
  if (periodSec % intervalSec !== 0) throw new InvalidInputError(M.periodNotMultiple(field));
  if (periodSec / intervalSec > MAX_SLOTS_PER_WINDOW) {
    throw new InvalidInputError(M.tooManySlots(field, periodSec / intervalSec, MAX_SLOTS_PER_WINDOW));
  }
  return { name: input.name ?? String(input.period), periodSec, intervalSec };
}
