import { ConflictError, InvalidInputError, RequestTooCostlyError } from '../../common/errors';
import { MAX_FUTURE_SKEW_SEC } from '../../common/limits';
import { growthErrorOf, Reservation, UNLIMITED } from '../../governance/growth-quotas';
import type { CapRefusal } from '../../redis/refusals';
import { PreparedBoard } from '../core/board';
import { EXACT_AMOUNT_RANGE } from '../core/ranking.limits';
import { AtOutOfSpanError } from '../core/ranking.errors';
import { RANKING_MESSAGES as M } from '../core/ranking.messages';
import type { BatchEntry, WindowStanding } from '../core/ranking.types';
import { atProblem } from '../core/window-math';
import { type CostedEntry, entryCost, segmentsWithin } from '../core/write-cost';
import { SEGMENTS_MESSAGES } from '../options/segments/segments.option';

/** The write rules (pure): event times, request fingerprints, a batch's growth split over its shards, refusals. */

/** The fingerprint part of an optional `at`: nothing when absent. */
export function timeOf(atSec: number | undefined): number[] {
  return atSec === undefined ? [] : [atSec];
}

/** The fingerprint part of an optional `createdAt`: nothing when absent. */
export function createdOf(createdAtSec: number | undefined): Array<string | number> {
  return createdAtSec === undefined ? [] : ['createdAt', createdAtSec];
}

/**
 * Refuses an event time the board cannot take (400 naming `field`): more than the skew ahead, or
 * older than every window's live span. `keyed`: a past `at` is left to the script, which answers a
 * replay of the key first (its event has aged out since) and refuses otherwise. Answers the problem.
 */
export function checkAt(field: string, atSec: number | undefined, nowMs: number, board: PreparedBoard, keyed: boolean) {
  if (atSec === undefined) return undefined;
  const problem = atProblem(field, atSec, nowMs, board.config.windows);
  if (problem && !(problem.kind === 'past' && keyed)) throw new InvalidInputError(problem.message);
  return problem;
}

/**
 * Refuses an amount that is not a non-zero integer within EXACT_AMOUNT_RANGE (400 naming `field`): the
 * routes' DTOs take less (AMOUNT_RANGE), but a library caller's command reaches the services unchecked,
 * and the functions take amounts as decimal integers (increment.lua).
 */
export function checkAmount(field: string, amount: number): void {
  const { min, max } = EXACT_AMOUNT_RANGE;
  if (!Number.isInteger(amount) || amount === 0 || amount < min || amount > max)
    throw new InvalidInputError(M.amountOutOfRange(field, min, max));
}

/** Refuses an item creation time more than the skew ahead (400 naming `field`); any past time is fine. */
export function checkCreatedAt(field: string, createdAtSec: number | undefined, nowMs: number): void {
  if (createdAtSec !== undefined && createdAtSec > nowMs / 1000 + MAX_FUTURE_SKEW_SEC)
    throw new InvalidInputError(M.atInFuture(field, MAX_FUTURE_SKEW_SEC, createdAtSec, nowMs / 1000));
}

/** The fingerprint part of optional segments: nothing when absent. */
export function segmentsOf(segments: string[] | undefined): Array<string | string[]> {
  return segments === undefined ? [] : ['segments', segments];
}

/**
 * Refuses segments (400 naming `field`) on a board that takes none, or naming one segment twice (the
 * event would count twice in it). Names and their count are the DTO's checks.
 */
export function checkSegments(field: string, segments: string[] | undefined, board: PreparedBoard): void {
  if (segments === undefined) return;
  if (board.config.segmentsMax === undefined)
    throw new InvalidInputError(SEGMENTS_MESSAGES.noSegments(board.config.name, field));
  if (new Set(segments).size !== segments.length) throw new InvalidInputError(SEGMENTS_MESSAGES.segmentTwice(field));
}

/**
 * Refuses (422 REQUEST_TOO_COSTLY, before any call) an entry whose own call would weigh more than
 * `bound`: only a board declared before the bound, or under a higher one, takes such an entry's shape
 * (BOARD_WRITE_TOO_COSTLY refuses the others when declared), and a write is one atomic call.
 */
export function checkEntryCost(entry: CostedEntry, board: PreparedBoard, bound: number): void {
  const cost = entryCost(entry, board.config);
  if (cost <= bound) return;
  const within = segmentsWithin(entry, board.config, bound);
  throw new RequestTooCostlyError(M.writeTooCostly(board.config.name, cost, bound, within));
}

/** A like is kept as long as a window holds it: on a board with an all-time window, (item, user) pairs would pile up for good. */
export function checkLikeable(board: PreparedBoard): void {
  const allTime = board.config.windows.find((w) => w.allTime);
  if (allTime) throw new InvalidInputError(M.likeOnAllTime(board.config.name, allTime.name));
}

/** A script's refusal of an event time as the client's 400, or undefined for any other error. */
export function atRefusal(error: unknown, problem: { message: string } | undefined): InvalidInputError | undefined {
  if (!(error instanceof AtOutOfSpanError)) return undefined;
  return new InvalidInputError(problem?.message ?? M.atBeforeWindows);
}

/** Distinct item ids of a batch: the most new items it can create. */
export function distinctItems(entries: BatchEntry[]): number {
  return new Set(entries.map((entry) => entry.item)).size;
}

/** What entries can make Redis hold beyond their items: actor contributions and segment entries. */
export interface EntryGrowth {
  actorEntries: number;
  segmentEntries: number;
}

/** What of a board's shape its entries' growth depends on: its windows and views. */
export type BoardShape = { windows: readonly unknown[]; views: readonly unknown[] };

/**
 * Keys a segment makes on a shard where it is new, each counted as one more segment entry: each
 * window's slots and results zsets, each view's four keys (segment_growth_lib's GROWTH.new_segment).
 */
export const segmentKeysOf = (shape: BoardShape): number => 2 * shape.windows.length + 4 * shape.views.length;

/**
 * Actor entries one contribution can make: its own, and the item's distinct-actor count in its window
 * (`minActors`) when it is the item's first actor there (segment_lib's GROWTH.new_contribution).
 */
export const ACTOR_ENTRIES_PER_CONTRIBUTION = 2;

/**
 * The most actor contributions and segment entries `entries` can create on a board of this shape: per
 * entry, one contribution in each window of the board and of each of its segments (with an actor), one
 * entry in each window of each of its segments, and the keys of each segment should it be new on its
 * shard. The script counts what they do create.
 */
export function entryGrowthOf(
  entries: ReadonlyArray<Pick<BatchEntry, 'actor' | 'segments'>>,
  shape: BoardShape,
): EntryGrowth {
  const windowCount = shape.windows.length;
  const growth = { actorEntries: 0, segmentEntries: 0 };
  for (const { actor, segments } of entries) {
    const named = segments?.length ?? 0;
    if (actor) growth.actorEntries += ACTOR_ENTRIES_PER_CONTRIBUTION * windowCount * (1 + named);
    growth.segmentEntries += (windowCount + segmentKeysOf(shape)) * named;
  }
  return growth;
}

/**
 * Splits a batch's reservation over its shards' parts, in shard order, each part getting at most what
 * its own entries can create (`most`: by default its distinct items): a part refused for lack of
 * allowance while an earlier one had some to spare only happens when the reservation fell short of
 * the whole batch.
 */
export function allowancesOf(
  groups: Map<number, BatchEntry[]>,
  reserved: number,
  most: (entries: BatchEntry[]) => number = distinctItems,
): Map<number, number> {
  let left = reserved;
  const allowances = new Map<number, number>();
  for (const [shard, entries] of groups) {
    const share = reserved === UNLIMITED ? UNLIMITED : Math.min(left, most(entries));
    if (share !== UNLIMITED) left -= share;
    allowances.set(shard, share);
  }
  return allowances;
}

/** Each window's standing by name, in the order of the names the write was answered with. */
export function byWindow(written: {
  windowNames: readonly string[];
  standings: WindowStanding[];
}): Record<string, WindowStanding> {
  const { windowNames, standings } = written;
  // A window may be named __proto__, which only defining the property (fromEntries) keeps as a key.
  if (windowNames.includes('__proto__')) return Object.fromEntries(windowNames.map((name, i) => [name, standings[i]]));
  // Assigned one by one: no array of pairs, and an object of named properties (JSON writes those fastest).
  const windows: Record<string, WindowStanding> = {};
  for (let i = 0; i < windowNames.length; i++) windows[windowNames[i]] = standings[i];
  return windows;
}

/** A script's growth refusal as the client's error (BOARD_FULL for the board's cap); any other error as it is. */
export function growthError(error: unknown, reservation: Reservation, board: PreparedBoard): unknown {
  return growthErrorOf(
    error,
    reservation,
    (refusal: CapRefusal) =>
      new ConflictError(
        'BOARD_FULL',
        M.boardFull(board.config.name, refusal.held, refusal.cap, board.shards.length, refusal.wanted),
      ),
  );
}

/** A write's tiebreak: refused (400) on a board that keeps none; on one that does, the tiebreak sent (absent: 0). */
export function tiebreakSent(board: PreparedBoard, tiebreak: number | undefined): number | undefined {
  if (board.config.tiebreak === undefined) {
    if (tiebreak !== undefined) throw new InvalidInputError(M.noTiebreak(board.config.name));
    return undefined;
  }
  return tiebreak ?? 0;
}
