import { Injectable } from '@nestjs/common';
import { RedisFunctions } from '../../redis/redis-functions';
import { PreparedBoard } from '../core/board';
import { guard } from '../core/ranking.errors';
import { RankingSettings } from '../core/ranking.settings';
import { boardCall } from '../core/script-call';
import { LeaguesFunctions } from './leagues.functions';
import { LEAGUE_ROLL_BUDGET_MEMBERS } from '../options/leagues/leagues.limits';

/** Where a league call stands: the board (one shard), the time, the league window's current period start. */
export interface LeagueAt {
  board: PreparedBoard;
  nowMs: number;
  currentSec: number;
}

/** The leagues' Redis calls: each one function call on the board's one shard. */
@Injectable()
export class LeaguesStore {
  private readonly budgetFields: number;
  private readonly fns: LeaguesFunctions['functions'];

  constructor(
    private readonly functions: RedisFunctions,
    part: LeaguesFunctions,
    settings: RankingSettings,
  ) {
    this.budgetFields = settings.expireChunk;
    this.fns = part.functions;
    functions.define([part.library]);
  }

  private call(at: LeagueAt) {
    return { ...boardCall(at.board, at.board.shards[0], at.nowMs, this.budgetFields), currentSec: at.currentSec };
  }

  item(at: LeagueAt, item: string) {
    return guard(this.functions.call(this.fns.leagueItem, { ...this.call(at), item }));
  }

  cohort(at: LeagueAt, page: { tier: number; cohort: number; offset: number; limit: number }) {
    return guard(this.functions.call(this.fns.leagueCohort, { ...this.call(at), ...page }));
  }

  /** One rollover step of the oldest closed period not rolled yet; true when none is left. */
  roll(at: LeagueAt, budget = LEAGUE_ROLL_BUDGET_MEMBERS): Promise<boolean> {
    return guard(this.functions.call(this.fns.leagueRoll, { ...this.call(at), budget }));
  }

  moves(at: LeagueAt, page: { periodSec: number; offset: number; limit: number }, budget = LEAGUE_ROLL_BUDGET_MEMBERS) {
    return guard(this.functions.call(this.fns.leagueMoves, { ...this.call(at), ...page, budget }));
  }
}
