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
  leagueMovesCalls,
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
   * The moves of the period holding `atMs` (default: the latest closed one) from the cursor `page.offset`,
   * shard by shard (movesFrom), rolling as far as the page needs where no scheduler has yet. `admit` is
   * told each call past the first before it is sent (it may refuse: the read budget).
   */
  async moves(
    name: string,
    atMs: number | undefined,
    page: { offset: number; limit: number },
    admit: (calls: number) => void = () => undefined,
  ): Promise<MovesPage> {
    return this.cache.withBoard(name, async (board) => {
      const nowMs = this.clock.nowMs();
      const { setting, at } = this.leagueOf(board, nowMs);
      const calendar = board.window(setting.window)!.calendar!;
      const period = calendarPeriod(calendar, atMs ?? at.currentSec * 1000 - 1);
      const span = { from: period.startMs / 1000, to: period.endMs / 1000 };
      if (period.endMs > nowMs) throw new InvalidInputError(M.notClosed(name, span.from));
      const { moves, nextCursor } = await this.movesFrom(at, span.from, page, admit);
      const tierName = (tier: number) => setting.tiers[tier - 1];
      const named = moves.map((m) => ({ ...m, fromTier: tierName(m.fromTier), toTier: tierName(m.toTier) }));
      return { ...span, moves: named, nextCursor };
    });
  }

  /**
   * A page of a closed period's moves: each shard's in the order rolled, shard 0's first. The cursor is
   * a place in a shard's list (place × shards + shard: an unsharded board's is the place), so a page
   * starts on its shard with no call to the shards before. Each call reads the shard's list from the
   * place the rows so far end at, one row beyond `limit` to know whether another page follows; a shard
   * whose rollover is not done and whose list is short of the page rolls a bounded step in the same call
   * first, and answers the rows the step left units for (the next call goes on from there). Past a
   * shard's last move the page goes on with the next shard. After LEAGUE_MOVES_CALLS rolling calls, or
   * leagueMovesCalls(shards) in all, the page ends, short, with a cursor where it stopped.
   */
  private async movesFrom(
    at: LeagueAt,
    periodSec: number,
    page: { offset: number; limit: number },
    admit: (calls: number) => void,
  ) {
    const shards = at.board.shards.length;
    const cursorOf = (shard: number, place: number) => String(place * shards + shard);
    const rows: Array<{ move: LeagueMove; cursor: string }> = [];
    let [shard, place, calls, rolls] = [page.offset % shards, Math.floor(page.offset / shards), 0, 0];
    while (shard < shards && rows.length <= page.limit) {
      if (rolls === LEAGUE_MOVES_CALLS || calls === leagueMovesCalls(shards))
        return { moves: rows.map((row) => row.move), nextCursor: cursorOf(shard, place) };
      if (calls++ > 0) admit(1);
      const ask = { periodSec, offset: place, limit: page.limit + 1 - rows.length };
      const answer = await this.store.moves(at, ask, shard);
      if (answer.rolled) rolls++;
      answer.moves.forEach((move, i) => rows.push({ move, cursor: cursorOf(shard, place + i) }));
      place += answer.moves.length;
      if (answer.done && place >= answer.listed) [shard, place] = [shard + 1, 0];
    }
    const moves = rows.slice(0, page.limit).map((row) => row.move);
    return { moves, nextCursor: rows.length > page.limit ? rows[page.limit].cursor : null };
  }

  /**
   * The scheduler's part: rolls the board's closed periods in bounded steps, each shard its own (in
   * parallel, LEAGUE_ROLL_STEPS_PER_VISIT steps a visit spread over them); answers true when none is
   * left to roll (false: visit it again). A board without leagues answers true at once.
   */
  async rollDue(board: PreparedBoard, nowMs: number): Promise<boolean> {
    if (!board.config.leagues) return true;
    const { at } = this.leagueOf(board, nowMs);
    const steps = Math.ceil(LEAGUE_ROLL_STEPS_PER_VISIT / board.shards.length);
    const rolled = await Promise.all(
      board.shards.map(async (_, shard) => {
        for (let step = 0; step < steps; step++) if (await this.store.rollShard(at, shard)) return true;
        return false;
      }),
    );
    return rolled.every(Boolean);
  }

  private leagueOf(board: PreparedBoard, nowMs: number): { setting: LeaguesSetting; at: LeagueAt; span: Span } {
    const setting = board.config.leagues;
    if (!setting) throw new NotFoundError('LEAGUE_NOT_FOUND', M.noLeagues(board.config.name));
    const period = calendarPeriod(board.window(setting.window)!.calendar!, nowMs);
    const span = { from: period.startMs / 1000, to: period.endMs / 1000 };
    return { setting, at: { board, nowMs, currentSec: span.from }, span };
  }
}
