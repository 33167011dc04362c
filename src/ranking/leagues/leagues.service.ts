import { Injectable } from '@nestjs/common';
import { Clock } from '../../common/clock';
import { InvalidInputError, NotFoundError } from '../../common/errors';
import { BoardCache } from '../boards/board-cache';
import { PreparedBoard } from '../core/board';
import { calendarPeriod } from '../core/window-math';
import type { CohortRow, LeagueMove } from './leagues.functions';
import {
  LEAGUE_MOVES_CALLS,
  LEAGUE_ROLL_STEPS_PER_VISIT,
  LEAGUES_MESSAGES as M,
} from '../options/leagues/leagues.limits';
import type { LeaguesSetting } from '../options/leagues/leagues.option';
import { LeagueAt, LeaguesStore } from './leagues.store';

/** A period's span (unix s). */
interface Span {
  from: number;
  to: number;
}

export interface ItemLeague extends Span {
  board: string;
  item: string;
  tier: string;
  cohort: number;
  rank: number;
  score: number;
  members: number;
}

export interface CohortPage extends Span {
  board: string;
  tier: string;
  cohort: number;
  items: CohortRow[];
}

export interface MovesPage extends Span {
  moves: Array<Omit<LeagueMove, 'fromTier' | 'toTier'> & { fromTier: string; toTier: string }>;
  nextCursor: string | null;
}

/** Leagues: an item's standing, a cohort's page, a closed period's moves, and the scheduler's rollover. */
@Injectable()
export class LeaguesService {
  constructor(
    private readonly store: LeaguesStore,
    private readonly cache: BoardCache,
    private readonly clock: Clock,
  ) {}

  async item(name: string, item: string): Promise<ItemLeague> {
    return this.cache.withBoard(name, async (board) => {
      const { setting, at, span } = this.leagueOf(board, this.clock.nowMs());
      const standing = await this.store.item(at, item);
      if (!standing) throw new NotFoundError('ITEM_NOT_FOUND', M.notPlaced(name, item));
      return { board: name, item, ...standing, tier: setting.tiers[standing.tier - 1], ...span };
    });
  }

  async cohort(
    name: string,
    tier: string,
    cohort: number,
    page: { offset: number; limit: number },
  ): Promise<CohortPage> {
    return this.cache.withBoard(name, async (board) => {
      const { setting, at, span } = this.leagueOf(board, this.clock.nowMs());
      const index = setting.tiers.indexOf(tier);
      if (index < 0) throw new NotFoundError('LEAGUE_NOT_FOUND', M.noTier(name, tier));
      const { items } = await this.store.cohort(at, { tier: index + 1, cohort, ...page });
      return { board: name, tier, cohort, ...span, items };
    });
  }

  /**
   * The moves of the period holding `atMs` (default: the latest closed one) from `offset`, rolling that
   * period as far as the page needs when no scheduler has yet (bounded steps, then a call reading the
   * page; LEAGUE_MOVES_CALLS in all: the calls run out, the page is short and has a nextCursor).
   */
  async moves(name: string, atMs: number | undefined, page: { offset: number; limit: number }): Promise<MovesPage> {
    return this.cache.withBoard(name, async (board) => {
      const nowMs = this.clock.nowMs();
      const { setting, at } = this.leagueOf(board, nowMs);
      const calendar = board.window(setting.window)!.calendar!;
      const period = calendarPeriod(calendar, atMs ?? at.currentSec * 1000 - 1);
      const span = { from: period.startMs / 1000, to: period.endMs / 1000 };
      if (period.endMs > nowMs) throw new InvalidInputError(M.notClosed(name, span.from));
      let answer = await this.store.moves(at, { periodSec: span.from, ...page });
      for (let call = 1; call < LEAGUE_MOVES_CALLS && answer.rolled; call++)
        answer = await this.store.moves(at, { periodSec: span.from, ...page });
      const more = !answer.done || answer.listed > page.offset + page.limit;
      const tierName = (tier: number) => setting.tiers[tier - 1];
      const moves = answer.moves.map((m) => ({ ...m, fromTier: tierName(m.fromTier), toTier: tierName(m.toTier) }));
      return { ...span, moves, nextCursor: more ? String(page.offset + answer.moves.length) : null };
    });
  }

  /**
   * The scheduler's part: rolls the board's closed periods in bounded steps; answers true when none is
   * left to roll (false: visit it again). A board without leagues answers true at once.
   */
  async rollDue(board: PreparedBoard, nowMs: number): Promise<boolean> {
    if (!board.config.leagues) return true;
    const { at } = this.leagueOf(board, nowMs);
    for (let step = 0; step < LEAGUE_ROLL_STEPS_PER_VISIT; step++) {
      if (await this.store.roll(at)) return true;
    }
    return false;
  }

  private leagueOf(board: PreparedBoard, nowMs: number): { setting: LeaguesSetting; at: LeagueAt; span: Span } {
    const setting = board.config.leagues;
    if (!setting) throw new NotFoundError('LEAGUE_NOT_FOUND', M.noLeagues(board.config.name));
    const period = calendarPeriod(board.window(setting.window)!.calendar!, nowMs);
    const span = { from: period.startMs / 1000, to: period.endMs / 1000 };
    return { setting, at: { board, nowMs, currentSec: span.from }, span };
  }
}
