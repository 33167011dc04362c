import { DURATION_RULE, parseDurationSec } from '../../../common/duration';
import { InvalidInputError } from '../../../common/errors';
import { isName, NAME_RULE } from '../../../common/names';
import {
  DECAY_MAX_HALF_LIVES_PER_WINDOW,
  DECAY_REBASE_CHUNK,
  DECAY_REBASE_HALF_LIVES,
  DECAY_ZERO_TOLERANCE,
  DEFAULT_HOT_TAU_SEC,
  DEFAULT_RISING_MIN_COUNT,
  HOT_EPOCH_SEC,
  RISING_MIN_COUNT,
  VIEWS_PER_BOARD,
} from './views.limits';
import { VIEWS_MESSAGES as M } from './views.messages';
import { metricWindowKeyName } from '../metrics/metrics.option';

/**
 * Trending views (pure): their config, and the formulas the scripts apply (views_lib.lua keeps the same
 * maths in Lua; the property test holds both to a model that keeps every event).
 */

export const VIEW_MODES = ['decay', 'hot', 'rising', 'unique', 'wilson', 'controversial'] as const;
export type ViewMode = (typeof VIEW_MODES)[number];

/** What a view reads of one of the board's windows (core/window-math's WindowSpec holds it). */
export interface ViewWindow {
  name: string;
  periodSec: number;
  intervalSec: number;
  calendar?: object;
  allTime?: true;
}

export interface ViewInput {
  name: string;
  mode: string;
  window: string;
  halfLife?: string | number;
  tau?: string | number;
  baseline?: string;
  minCount?: number;
  positive?: string;
  negative?: string;
}

/** A view as stored with the board: what the scripts read (views_lib.lua). */
export interface ViewConfig {
  name: string;
  mode: ViewMode;
  /** The window it reads (rising: the short one). */
  window: string;
  halfLifeSec?: number;
  rebaseHalfLives?: number;
  rebaseChunk?: number;
  zeroTolerance?: number;
  tauSec?: number;
  epochSec?: number;
  baseline?: string;
  minCount?: number;
  windowPeriodSec?: number;
  baselinePeriodSec?: number;
  /** wilson, controversial: the metrics it reads, and their window's names in keys (metric_views_lib.lua). */
  positive?: string;
  negative?: string;
  sources?: [string, string];
  intervalSec?: number;
  /** The definition as one string: a view whose spec changes is rebuilt from its windows' slots. */
  spec: string;
}

/** A view as GET /boards/:board answers it (durations in seconds). */
export interface ViewView {
  name: string;
  mode: ViewMode;
  window: string;
  halfLife?: number;
  tau?: number;
  baseline?: string;
  minCount?: number;
  positive?: string;
  negative?: string;
}

const FIELDS_OF: Record<ViewMode, string[]> = {
  decay: ['halfLife'],
  hot: ['tau'],
  rising: ['baseline', 'minCount'],
  unique: [],
  wilson: ['positive', 'negative'],
  controversial: ['positive', 'negative'],
};
const OPTIONAL_FIELDS = ['halfLife', 'tau', 'baseline', 'minCount', 'positive', 'negative'] as const;

/** Checks a board's requested views against its windows; throws naming the problem. */
export function resolveViews(
  inputs: ViewInput[],
  windows: ViewWindow[],
  metrics: readonly string[] = [],
): ViewConfig[] {
  if (inputs.length > VIEWS_PER_BOARD.max) throw new InvalidInputError(M.viewCount(VIEWS_PER_BOARD.max));
  const taken = new Set(windows.map((w) => w.name));
  const windowOf = new Map(windows.map((w) => [w.name, w]));
  return inputs.map((input, index) => {
    const field = `views.${index}`;
    const refuse = (problem: string) => new InvalidInputError(M.viewField(field, problem));
    if (!isName(input.name)) throw refuse(`name must be ${NAME_RULE}`);
    if (taken.has(input.name)) throw new InvalidInputError(M.viewNameTaken(field, input.name));
    taken.add(input.name);
    if (!(VIEW_MODES as readonly string[]).includes(input.mode))
      throw refuse(`mode must be one of ${VIEW_MODES.join(', ')}`);
    const mode = input.mode as ViewMode;
    for (const other of OPTIONAL_FIELDS) {
      if (input[other] !== undefined && !FIELDS_OF[mode].includes(other))
        throw refuse(`${other} is not a field of a ${mode} view`);
    }
    const window = windowOf.get(input.window);
    if (!window) throw refuse(`window "${input.window}" is not a window of the board`);
    // Views are formulas over a rolling window's slots (decay by slot age, rising against a baseline).
    for (const name of [input.window, input.baseline]) {
      if (name !== undefined && windowOf.get(name)?.calendar)
        throw refuse(`reads rolling windows; "${name}" is a calendar window`);
      if (name !== undefined && windowOf.get(name)?.allTime)
        throw refuse(`reads rolling windows; "${name}" is an all-time window`);
    }
    const view = { input, base: { name: input.name, mode, window: input.window }, window, refuse };
    if (mode === 'decay') return decayView(view);
    if (mode === 'hot') return hotView(view);
    if (mode === 'wilson' || mode === 'controversial') return metricPairView(view, field, metrics);
    // unique: distinct actors in the window (actor_lib.lua keeps their pairs; exact, not an estimate).
    if (mode === 'unique')
      return { ...view.base, spec: JSON.stringify([view.base, window.periodSec, window.intervalSec]) };
    return risingView(view, windowOf);
  });
}

/** A view being resolved: what the client sent, the fields every view has, the window it reads. */
interface ViewDraft {
  input: ViewInput;
  base: { name: string; mode: ViewMode; window: string };
  window: ViewWindow;
  refuse: (problem: string) => InvalidInputError;
}

function decayView({ input, base, window, refuse }: ViewDraft): ViewConfig {
  const halfLifeSec = input.halfLife === undefined ? undefined : parseDurationSec(input.halfLife);
  if (halfLifeSec === undefined) throw refuse(`halfLife must be a duration (${DURATION_RULE})`);
  if (window.periodSec / halfLifeSec > DECAY_MAX_HALF_LIVES_PER_WINDOW)
    throw refuse(
      `halfLife must be at least ${window.periodSec / DECAY_MAX_HALF_LIVES_PER_WINDOW} s: window "${window.name}" may span at most ${DECAY_MAX_HALF_LIVES_PER_WINDOW} half-lives`,
    );
  const defined = { ...base, halfLifeSec };
  return {
    ...defined,
    rebaseHalfLives: DECAY_REBASE_HALF_LIVES,
    rebaseChunk: DECAY_REBASE_CHUNK,
    zeroTolerance: DECAY_ZERO_TOLERANCE,
    spec: JSON.stringify([defined, window.periodSec, window.intervalSec]),
  };
}

function hotView({ input, base, window, refuse }: ViewDraft): ViewConfig {
  const tauSec = input.tau === undefined ? DEFAULT_HOT_TAU_SEC : parseDurationSec(input.tau);
  if (tauSec === undefined) throw refuse(`tau must be a duration (${DURATION_RULE})`);
  const defined = { ...base, tauSec, epochSec: HOT_EPOCH_SEC };
  return { ...defined, spec: JSON.stringify([defined, window.periodSec, window.intervalSec]) };
}

/** wilson, controversial: two distinct metrics of the board, positive and negative, in one window. */
function metricPairView({ input, base, window }: ViewDraft, field: string, metrics: readonly string[]): ViewConfig {
  if (metrics.length === 0) throw new InvalidInputError(M.viewNeedsMetrics(field, base.mode));
  const [positive, negative] = (['positive', 'negative'] as const).map((role) => {
    const metric = input[role];
    if (typeof metric !== 'string' || !metrics.includes(metric))
      throw new InvalidInputError(M.viewMetric(field, role, metric, metrics));
    return metric;
  });
  if (positive === negative) throw new InvalidInputError(M.viewMetricsSame(field, positive));
  const defined = { ...base, positive, negative, windowPeriodSec: window.periodSec, intervalSec: window.intervalSec };
  const sources: [string, string] = [
    metricWindowKeyName(window.name, positive, metrics),
    metricWindowKeyName(window.name, negative, metrics),
  ];
  return { ...defined, sources, spec: JSON.stringify([defined, sources]) };
}

function risingView({ input, base, window, refuse }: ViewDraft, windowOf: Map<string, ViewWindow>): ViewConfig {
  const baseline = input.baseline === undefined ? undefined : windowOf.get(input.baseline);
  if (!baseline) throw refuse(`baseline "${input.baseline}" is not a window of the board`);
  if (baseline.periodSec <= window.periodSec)
    throw refuse(
      `baseline "${baseline.name}" (${baseline.periodSec} s) must be longer than window "${window.name}" (${window.periodSec} s)`,
    );
  const minCount = input.minCount ?? DEFAULT_RISING_MIN_COUNT;
  if (!Number.isInteger(minCount) || minCount < RISING_MIN_COUNT.min || minCount > RISING_MIN_COUNT.max)
    throw refuse(`minCount must be an integer from ${RISING_MIN_COUNT.min} to ${RISING_MIN_COUNT.max}`);
  const defined = {
    ...base,
    baseline: baseline.name,
    minCount,
    windowPeriodSec: window.periodSec,
    baselinePeriodSec: baseline.periodSec,
  };
  return { ...defined, spec: JSON.stringify([defined, window.intervalSec, baseline.intervalSec]) };
}

/** What a client sees of a view, and what a PUT without `views` sends again (it keeps them). */
export function viewViewOf(view: ViewConfig): ViewView {
  return {
    name: view.name,
    mode: view.mode,
    window: view.window,
    ...(view.halfLifeSec === undefined ? {} : { halfLife: view.halfLifeSec }),
    ...(view.tauSec === undefined ? {} : { tau: view.tauSec }),
    ...(view.baseline === undefined ? {} : { baseline: view.baseline, minCount: view.minCount }),
    ...(view.positive === undefined ? {} : { positive: view.positive, negative: view.negative }),
  };
}

/** hot: sign(s)·log10(max(|s|, 1)) + (firstSeen − epoch)/τ. */
export function hotScore(sum: number, firstSeenSec: number, tauSec: number, epochSec = HOT_EPOCH_SEC): number {
  return Math.sign(sum) * Math.log10(Math.max(Math.abs(sum), 1)) + (firstSeenSec - epochSec) / tauSec;
}

/**
 * rising: expected is the baseline's sum scaled to the short window's period; an item with nothing in the
 * baseline beyond what the short window holds is new, its expected floored at 1 (no surge by division by
 * zero). Listed (a score) when observed > expected and observed >= minCount.
 */
export function risingOf(
  observed: number,
  baseline: number,
  view: { windowPeriodSec: number; baselinePeriodSec: number; minCount: number },
): { expected: number; isNew: boolean; score: number | undefined } {
  const isNew = baseline - observed <= 0;
  let expected = (baseline * view.windowPeriodSec) / view.baselinePeriodSec;
  if (isNew) expected = Math.max(expected, 1);
  const listed = observed >= view.minCount && observed > expected && expected > 0;
  return { expected, isNew, score: listed ? (observed - expected) ** 2 / expected : undefined };
}

export type RisingPhase = 'new' | 'rising' | 'peaking' | 'cooling';

/**
 * A listed rising item's phase, from its counts in the short window's current slot (`elapsedSec` into it)
 * and the slot before, as rates so a young slot is not taken for a fall: `rising` while the current rate
 * keeps up with the previous slot's, `peaking` while it holds at least half of it, then `cooling`.
 */
export function risingPhase(input: {
  isNew: boolean;
  currentSlot: number;
  previousSlot: number;
  elapsedSec: number;
  intervalSec: number;
}): RisingPhase {
  if (input.isNew) return 'new';
  const currentRate = input.currentSlot / Math.max(input.elapsedSec, 1);
  const previousRate = input.previousSlot / input.intervalSec;
  if (currentRate >= previousRate) return 'rising';
  return currentRate >= previousRate / 2 ? 'peaking' : 'cooling';
}

/** decay: a rank score (forward-decayed against `landmarkSec`) as the decayed sum as of `nowMs`. */
export function decayedValue(rankScore: number, landmarkSec: number, nowMs: number, halfLifeSec: number): number {
  return rankScore * 2 ** ((landmarkSec - nowMs / 1000) / halfLifeSec);
}
