import { Injectable } from '@nestjs/common';
import { PreparedBoard } from '../core/board';
import { guard } from '../core/ranking.errors';
import { boardCall } from '../core/script-call';
import { shardOf } from '../core/shard-math';
import { LeaguesFunctions } from './leagues.functions';
import { LEAGUE_ROLL_BUDGET_UNITS, LEAGUE_ROLL_PART_UNITS } from '../options/leagues/leagues.limits';
import { sliceStore } from '../core/slice-store';

/** Where a league call stands: the board, the time, the league window's current period start. */
export interface LeagueAt {
  board: PreparedBoard;
  nowMs: number;
  currentSec: number;
}

/**
 * The cohort number the routes answer for a shard's cohort `local` (1-based) of shard `shard` among
 * `shards`: cohorts interleave, so the number carries its shard and an unsharded board's are its own.
 */
export const cohortNumber = (local: number, shard: number, shards: number) => (local - 1) * shards + shard + 1;

/** The shard and its own cohort number of a cohort number the routes answer (cohortNumber's inverse). */
export function cohortPlace(cohort: number, shards: number): { shard: number; local: number } {
  return { shard: (cohort - 1) % shards, local: Math.floor((cohort - 1) / shards) + 1 };
}

/**
 * The leagues' Redis calls: each one function call on one shard, which holds the leagues of its items
 * (leagues_lib.lua): an item's standing on its shard, a cohort's page on the shard its number names,
 * a rollover step and a moves page on the shard asked.
 */
@Injectable()
export class LeaguesStore extends sliceStore(LeaguesFunctions) {
  private call(at: LeagueAt, shard: number) {
    return { ...boardCall(at.board, at.board.shards[shard], at.nowMs, this.budgetFields), currentSec: at.currentSec };
  }

  async item(at: LeagueAt, item: string) {
    const shards = at.board.shards.length;
    const shard = shardOf(item, shards);
    const standing = await guard(this.functions.call(this.fns.leagueItem, { ...this.call(at, shard), item }));
    return standing && { ...standing, cohort: cohortNumber(standing.cohort, shard, shards) };
  }

  cohort(at: LeagueAt, page: { tier: number; cohort: number; offset: number; limit: number }) {
    const { shard, local } = cohortPlace(page.cohort, at.board.shards.length);
    return guard(this.functions.call(this.fns.leagueCohort, { ...this.call(at, shard), ...page, cohort: local }));
  }

  /**
   * One rollover step (about `budget` units: a member one, a cohort's part LEAGUE_ROLL_PART_UNITS more) of
   * shard `shard`'s oldest closed period not rolled yet; true when none is left there.
   */
  rollShard(at: LeagueAt, shard: number, budget = LEAGUE_ROLL_BUDGET_UNITS): Promise<boolean> {
    const call = { ...this.call(at, shard), budget, partUnits: LEAGUE_ROLL_PART_UNITS };
    return guard(this.functions.call(this.fns.leagueRoll, call));
  }

  /**
   * A rollover step of each shard in order, up to the first that still has a closed period to roll
   * after its step (false); true when none has.
   */
  async roll(at: LeagueAt, budget = LEAGUE_ROLL_BUDGET_UNITS): Promise<boolean> {
    for (let shard = 0; shard < at.board.shards.length; shard++) {
      if (!(await this.rollShard(at, shard, budget))) return false;
    }
    return true;
  }

  /**
   * A page of shard `shard`'s moves of a period (their cohorts numbered as the routes answer them), after
   * a rollover step when the list is short of it: then only the rows the step left units for.
   */
  async moves(
    at: LeagueAt,
    page: { periodSec: number; offset: number; limit: number },
    shard = 0,
    budget = LEAGUE_ROLL_BUDGET_UNITS,
  ) {
    const shards = at.board.shards.length;
    const call = { ...this.call(at, shard), ...page, budget, partUnits: LEAGUE_ROLL_PART_UNITS };
    const answer = await guard(this.functions.call(this.fns.leagueMoves, call));
    const moves = answer.moves.map((move) => ({ ...move, cohort: cohortNumber(move.cohort, shard, shards) }));
    return { ...answer, moves };
  }
}
