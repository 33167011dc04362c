import type { Bounds } from '../../../common/limits';

/** A cohort's most members (`size`). */
export const LEAGUE_SIZE: Bounds = { min: 2, max: 1000 };

/**
 * Write cost units (core/write-cost.ts) of an entry's placement or mirror in its cohort, once an entry.
 * Measured on a private redis-server at load 1.1 (SLOWLOG µs of the call): a batch of 360 new items on
 * the harness's one-shard leagues board (a calendar week, `ties: first`) 7.2-8.0 ms, the same board
 * without leagues 3.0 ms, so 12-14 µs an entry, about 4.5 units of 3 µs (73.5 M against 32.1 M Redis
 * instructions, bench/split-call-instructions.ts). Unweighed, such a batch of 1 800 units was one call
 * past 5 ms; now an entry weighs 10 units there and a call takes 180 of them.
 */
export const LEAGUE_PLACEMENT_WRITE_COST = 5;

/** A cohort's number within its tier and period (a path parameter; a sharded board's interleave its shards). */
export const LEAGUE_COHORTS: Bounds = { min: 1, max: 1_000_000 };

/** How many tiers a board's leagues hold. */
export const LEAGUE_TIERS: Bounds = { min: 1, max: 20 };

/**
 * Units one rollover step rolls at most: a member one, and each part of a cohort (a cohort rolled in
 * parts when the step's units end inside it) LEAGUE_ROLL_PART_UNITS more, so a step of many small
 * cohorts runs no more commands than one of a big cohort. 200 keeps a step's call well under 5 ms
 * with ties first and every member moving (docs/benchmarks.md, bench/league-rollover.ts).
 */
export const LEAGUE_ROLL_BUDGET_UNITS = 200;

/** The units of a part of a cohort beside its members: its own commands (page, bounds, the moves' writes). */
export const LEAGUE_ROLL_PART_UNITS = 10;

/**
 * Rollover steps one scheduler visit of a board runs (shared by its shards, at least one each); the
 * rest at the next pass.
 */
export const LEAGUE_ROLL_STEPS_PER_VISIT = 50;

/**
 * Most calls a moves read makes that roll a step (each call rolls at most one step, then reads what the
 * step left of its units); reads beside them at most one per shard.
 */
export const LEAGUE_MOVES_CALLS = 20;

/**
 * Rows a moves call that rolled a step reads for each unit the step left: a row read (a cohort page of
 * 1 000 rows: about 2.3 ms) costs about half what a rolled member does.
 */
export const LEAGUE_MOVES_ROWS_PER_UNIT = 2;

/**
 * Most calls of a moves page on a board of `shards` shards (LEAGUE_MOVES_CALLS rolling ones, one read per
 * shard): each past the first spends one read of the client's read rate budget.
 */
export const leagueMovesCalls = (shards: number) => LEAGUE_MOVES_CALLS + shards;

/** A moves page: limit bounds and its default. */
export const LEAGUE_MOVES_LIMIT: Bounds = { min: 1, max: 1000 };
export const LEAGUE_MOVES_DEFAULT = 100;

/** Why a board may not take leagues, or a league read is refused. */
export const LEAGUES_MESSAGES = {
  notCalendar: (board: string, window: string) =>
    `leagues.window: "${window}" is not a calendar window of board "${board}" (name one with "calendar")`,
  segments: (board: string) => `leagues: board "${board}" takes segments; leagues do not go with segments yet`,
  notSum: (board: string) =>
    `leagues: board "${board}" aggregates by max, min or last; a league score is a period's sum, so leagues need aggregate sum for now`,
  metrics: (board: string) => `leagues: board "${board}" keeps several metrics; leagues do not go with metrics yet`,
  beyondSize: (field: string, value: number, size: number) =>
    `leagues.${field} is ${value}: at most the cohort size (${size})`,
  noLeagues: (board: string) => `board "${board}" has no leagues (PUT it with "leagues")`,
  noTier: (board: string, tier: string) => `tier "${tier}": board "${board}" has no such league tier`,
  notPlaced: (board: string, item: string) =>
    `item "${item}" has no event this period in the leagues of board "${board}"`,
  notClosed: (board: string, fromSec: number) =>
    `at: the leagues period of board "${board}" from ${fromSec} (unix s) has not ended; its moves come once it has`,
};
