import {
  COSTLIEST_BOARDS,
  type BoardOptionsConfig,
  keptScore,
  optionsWriteCostPerEntry,
  optionsWriteCostPerPlace,
} from '../options/registry';
import { WINDOWS_PER_BOARD } from './ranking.limits';
import { VIEWS_PER_BOARD } from '../options/views/views.limits';
import { SEGMENTS_PER_EVENT } from '../options/segments/segments.limits';

/**
 * What a write call asks of Redis, weighed before the call from its entries and the board's options
 * (pure). The unit is one plain batch entry added in one window (its slot field and its results score):
 * about 3 µs of Redis (2.9-4.1 µs per unit over every shape bench/write-cost.ts measures, redis-server
 * 7.0 under SCHED_FIFO: docs/security.md). An entry is placed in each results zset its amount reaches,
 * each place weighed from what the same bench measured per entry and window, rounded up:
 *   - the places: the board's windows, each of its views (2.5: a view updates its own zset and
 *     formula state beside the window's), and the same again in each segment the entry names (3 each:
 *     the segment's slot, index and results; at least SEGMENT_PLACE_FLOOR);
 *   - each place costs 1, plus what options keep beside it: each board option what it keeps (its
 *     writeCostPerPlace: a score on a max / min board 7 more, on last 10, `ties: first` the strict
 *     order 4), an actor its contribution (5, a new actor);
 *   - what an option does once an entry, whatever its places (its writeCostPerEntry: a leagues board's
 *     placement in its cohort, 5).
 * A late event weighs what a current one does: no write scans the slots after its own (aggregate_lib).
 * What a call drains from expired slots is bounded on its own (EXPIRE_CHUNK) and is not counted here.
 */
export const WRITE_COST_WEIGHTS = {
  view: 2.5,
  segment: 3,
  actor: 5,
} as const;

/**
 * The least a segment place weighs, whatever the options multiply: each entry's segment runs its own
 * crossing checks (two per window and view), growth checks and index writes, which a board place does
 * once a call. Measured in script commands (0.8 a unit: the harness's WRITE_CALL_COMMANDS) by
 * test/integration/parts/segmented-write-commands.int.ts: a segment place ran about 5 + 4 per
 * window commands, 10 more per window with an actor, so 72 plain entries of 8 segments on one window
 * (25 units each before this floor) were one call of 5 981 commands. Per result (a window, or a view at
 * its view weight), plus a fixed part per segment.
 */
export const SEGMENT_PLACE_FLOOR = {
  perResult: 5.5,
  perResultWithActor: 18,
  fixed: 10,
} as const;

/** What an entry's cost depends on: the segments it names and whether it names an actor. */
export interface CostedEntry {
  segments?: readonly string[];
  actor?: string;
}

/** The options of a board a write's cost depends on (a BoardConfig is one). */
export interface CostedBoard extends BoardOptionsConfig {
  windows: readonly unknown[];
  views: readonly unknown[];
}

/**
 * `weigh`, kept per board for entries naming no segment and no actor: every plain increment asks its
 * weights twice (its check and its call's), and the options' sum behind them walks every option. A
 * board's config is not changed in place (a change is a new config), so its weight stays.
 */
function keptForPlainEntries(
  weigh: (entry: CostedEntry, board: CostedBoard) => number,
): (entry: CostedEntry, board: CostedBoard) => number {
  const plain = new WeakMap<CostedBoard, number>();
  return (entry, board) => {
    if (entry.actor !== undefined || entry.segments?.length) return weigh(entry, board);
    let weight = plain.get(board);
    if (weight === undefined) plain.set(board, (weight = weigh(entry, board)));
    return weight;
  };
}

/** The cost units of one entry (or one item write) on `board`. */
export const entryCost = keptForPlainEntries(placedCost);

function placedCost(entry: CostedEntry, board: CostedBoard): number {
  const W = WRITE_COST_WEIGHTS;
  const F = SEGMENT_PLACE_FLOOR;
  const results = board.windows.length + W.view * board.views.length;
  const actor = entry.actor !== undefined;
  const perPlace = 1 + optionsWriteCostPerPlace(board) + (actor ? W.actor : 0);
  const floor = results * (actor ? F.perResultWithActor : F.perResult) + F.fixed;
  const segmentPlace = Math.max(W.segment * results * perPlace, floor);
  return results * perPlace + optionsWriteCostPerEntry(board) + (entry.segments?.length ?? 0) * segmentPlace;
}

/** The cost units of one call applying `entries` on `board`. */
export function callCost(entries: readonly CostedEntry[], board: CostedBoard): number {
  let cost = 0;
  for (const entry of entries) cost += entryCost(entry, board);
  return cost;
}

/**
 * What an entry asks of a call's Redis time, in cost units, where the units (the commands it runs)
 * weigh an actor's and a segment's work less than its instructions: each command of an actor's
 * contribution (its pair, cap, distinct-actor counts, byactor / byitem, `ties: first`'s order) or of a
 * segment place costs its arguments' conversion and Lua beside it, several times a plain add's. On the
 * costliest segmented board (4 windows, a unique view, `ties: first`, capped actors: 1 787.5 units at 8
 * segments) an existing item with a new actor ran about 1.0 M Redis instructions (71.5 units), each
 * segment with it 1.9-2.0 M (214.5 units) (bench/write-instructions.ts, WRITE_BENCH_FCALL_ONLY=1): a
 * call of 1 800 such units ran 16-25 M, past the ~10 M (about 5 ms) a call may hold Redis. Weighed here
 * at about 5 500 instructions a unit, a call within WRITE_COST_PER_CALL of work runs about 10 M at
 * most. An entry naming neither weighs its cost: a plain batch keeps its calls.
 */
export const CALL_WORK_WEIGHTS = {
  /** Each unit of the board places of an entry with an actor. */
  actorPlaces: 2.6,
  /** Each unit of an entry's segment places. */
  segmentPlaces: 1.7,
} as const;

/** An entry's work in one call (CALL_WORK_WEIGHTS), in cost units. */
export function entryWork(entry: CostedEntry, board: CostedBoard): number {
  const named = entry.segments?.length ?? 0;
  if (entry.actor === undefined && named === 0) return entryCost(entry, board);
  const placed = entryCost({ actor: entry.actor }, board);
  const segmentPlaces = entryCost(entry, board) - placed;
  const places = entry.actor === undefined ? placed : placed * CALL_WORK_WEIGHTS.actorPlaces;
  return places + segmentPlaces * CALL_WORK_WEIGHTS.segmentPlaces;
}

/**
 * What a coalesced increment runs inside Redis, in cost units (about 5 500 instructions each, as
 * entryWork's): a batch entry adds its amount in each window, while a request of an increment call
 * (increment.lua) is answered on its own, its score and rank read in every window and view, its strict
 * order kept on `ties: first`, its record built. Measured by bench/write-instructions.ts
 * (WRITE_BENCH_FCALL_ONLY=1, calls of existing items, 2026-12-05, instructions a request): 8 windows and
 * 8 views 0.91 M, 8 windows with `ties: first` 1.10 M, both with snapshots and capped actors (wc-sum's
 * shape) 1.37 M, with an item cap 0.55 M; 8 windows alone 0.30 M and one window 45 000 on the plain path
 * (increment_plain), which a call leaves when one of its requests is keyed or names more than an amount,
 * so a request weighs the general path's windows. Then what entryWork weighs beyond a unit a place (other options, an actor,
 * segments) as it weighs it. A call within WRITE_COST_PER_CALL runs about 10 M at most.
 */
export const COALESCED_WORK_WEIGHTS = {
  perRequest: 2,
  perWindow: 15,
  perView: 8,
  tiesPerWindow: 10.5,
} as const;

/** What a coalesced increment weighs in its call (the coalescer's maxWeight: WRITE_COST_PER_CALL). */
export const coalescedWork = keptForPlainEntries(requestWork);

function requestWork(entry: CostedEntry, board: CostedBoard): number {
  const W = COALESCED_WORK_WEIGHTS;
  const windows = board.windows.length;
  const views = board.views.length;
  const strict = board.ties === 'first';
  // What entryWork weighs past one unit a place, strict order apart (weighed above, per window).
  const rest =
    entryWork(entry, strict ? { ...board, ties: undefined } : board) - windows - WRITE_COST_WEIGHTS.view * views;
  return W.perRequest + W.perWindow * windows + W.perView * views + (strict ? W.tiesPerWindow * windows : 0) + rest;
}

/**
 * How many of `entries` from `from` on the next call of a shard's part carries: as many as its work
 * (entryWork) keeps within `bound`, and at least one (a single write's cost is bounded on its own:
 * costliestWrite).
 */
export function callEntries(entries: readonly CostedEntry[], from: number, board: CostedBoard, bound: number): number {
  let work = entryWork(entries[from], board);
  let to = from + 1;
  for (; to < entries.length; to++) {
    work += entryWork(entries[to], board);
    if (work > bound) break;
  }
  return to - from;
}

/**
 * The costliest single entry a board can be given: every window and view, each option at its costliest
 * (COSTLIEST_BOARDS), and on a board of sums every segment an event may name and an actor (a board
 * keeping a score of each item, keptScore, takes neither). (What the options' `costliest` settings add
 * up to; a board is bounded by its own costliestWrite.)
 */
export const COSTLIEST_ENTRY = Math.max(
  ...COSTLIEST_BOARDS.map((options) => {
    const full = { segments: Array.from({ length: SEGMENTS_PER_EVENT.max }, (_, i) => `s${i}`), actor: 'a' };
    const windows = Array.from({ length: WINDOWS_PER_BOARD.max });
    const views = Array.from({ length: VIEWS_PER_BOARD.max });
    return entryCost(keptScore(options) === undefined ? full : {}, { windows, views, ...options });
  }),
);

/**
 * The costliest single write `board` takes: an entry naming every segment an event may (when the board
 * keeps segments) and an actor (when it takes them), in every window and view. A board whose costliest
 * write weighs more than WRITE_COST_PER_CALL is refused when declared (BOARD_WRITE_TOO_COSTLY).
 */
export function costliestWrite(board: CostedBoard): number {
  const segmented = (board.segmentsMax ?? 0) > 0;
  const entry: CostedEntry = {
    ...(segmented && { segments: Array.from({ length: SEGMENTS_PER_EVENT.max }, (_, i) => `s${i}`) }),
    ...(board.actors === true && { actor: 'a' }),
  };
  return entryCost(entry, board);
}

/**
 * The most segments an entry like `entry` (its actor, or none) may name on `board` within `bound`: -1
 * when even an entry naming none weighs more. Past the board's costliestWrite only on a board declared
 * before the bound or under a higher one (BOARD_WRITE_TOO_COSTLY refuses others when declared).
 */
export function segmentsWithin(entry: CostedEntry, board: CostedBoard, bound: number): number {
  for (let named = SEGMENTS_PER_EVENT.max; named >= 0; named--) {
    const segments = Array.from({ length: named }, (_, i) => `s${i}`);
    if (entryCost({ actor: entry.actor, segments }, board) <= bound) return named;
  }
  return -1;
}

/**
 * The costliest of the calls a batch makes (one per shard holding any of its entries), and how many
 * entries like its costliest one a call may carry within `bound` (at least one). A call of one entry
 * weighs nothing against the bound here: it is the board's single write, bounded when the board was
 * declared (costliestWrite), and on a board declared past the bound refused on its own before the
 * batch is weighed (write-rules' checkEntryCost), so a batch may always carry one entry per shard.
 */
export function batchCost(
  parts: Iterable<readonly CostedEntry[]>,
  board: CostedBoard,
  bound: number,
): { costliestCall: number; entriesWithin: number } {
  let costliestCall = 0;
  let costliestEntry = 0;
  for (const entries of parts) {
    if (entries.length > 1) costliestCall = Math.max(costliestCall, callCost(entries, board));
    for (const entry of entries) costliestEntry = Math.max(costliestEntry, entryCost(entry, board));
  }
  return { costliestCall, entriesWithin: Math.max(1, Math.floor(bound / Math.max(costliestEntry, 1))) };
}

/**
 * Most units of work one admin step (a retraction's, a re-weighting's) does on a shard: its Lua weighs
 * each piece of work at about the Redis commands it runs (actor_lib's STEP: a window looked into, a
 * segment visited and drained, a contribution or a slot with each view reading its window, a kept
 * listing), so a step runs about this many commands whatever the board's windows, views and segments.
 * A tenth of the commands a write call may run (0.8 a cost unit: the worst-case harness's
 * WRITE_CALL_COMMANDS): the drain of what expired a step runs first spends as many units at most
 * (segment_lib's step_drain), and the rest is left to what every call does besides (a share of a
 * decay view's rebase, actor_lib's bound_rebase; the record), to the one contribution a step may take
 * past its units, and to the time a step's commands take on the largest keys, several times a write's
 * per command (views and unique counts updated in Lua). A fifth left too little of it: on the
 * harness's board of 8 windows, 8 views and segments at its `ci` size, after two idle weeks, steps of
 * 288 units ran 12-49 M Redis instructions a call (up to 8 ms), a tenth 5.6-16.4 M
 * (bench/admin-step-instructions.ts). A listing of many rows stored at a boundary is a call of its own
 * (snapshot_lib's leave_apart).
 * A step runs at least the looks it may spend before its first piece of work and one piece (actor_lib's
 * step_units: 129 units on a board of 8 windows), so that every step makes progress: under a
 * WRITE_COST_PER_CALL of about 1 620 (16 units at its least, 100) a step on such a board runs more than
 * this answers.
 */
export function adminStepUnits(writeCostPerCall: number): number {
  return Math.floor(writeCostPerCall * 0.8 * 0.1);
}
