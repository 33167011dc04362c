import { Param, Query } from '@nestjs/common';
import { WindowRead } from '../../access/access.decorators';
import { ErrorResponse, RedisBackedController } from '../../edge/route-decorators';
import { Charge, ReadCharge } from '../../governance/read-charge';
import { ItemParams } from '../dto/item.dto';
import { BoardParams } from '../dto/board.dto';
import { CohortPageDto, CohortParams, CohortQuery, ItemLeagueDto, MovesPageDto, MovesQuery } from '../dto/league.dto';
import {
  LEAGUE_MOVES_CALLS,
  LEAGUE_MOVES_DEFAULT,
  LEAGUE_ROLL_BUDGET_UNITS,
  LEAGUE_SIZE,
  leagueMovesCalls,
} from '../options/leagues/leagues.limits';
import { LeaguesService } from './leagues.service';

const ITEM_NOTE =
  "The item's tier, cohort and rank in it this period of the league window (one call on its shard, O(log n)). 404 ITEM_NOT_FOUND when it has no event this period.";
const COHORT_NOTE = `A cohort of the current period, best first (competition ranks: equal scores share one). One call on the shard its number names (cohort c of shard k, 0-based, among S shards is (c - 1) × S + k + 1), O(log n + rows); at most ${LEAGUE_SIZE.max} rows.`;
const MOVES_NOTE = `The moves of a closed period's rollover (each cohort's best promote up a tier, its worst relegate down), in the order the cohorts were rolled (on a sharded board shard by shard). A rollover no scheduler has finished yet is rolled as far as the page needs: a call on a shard whose list is short of the page rolls a bounded step of about ${LEAGUE_ROLL_BUDGET_UNITS} units (a member one, a cohort's part more) and answers the rows the step left room for, at most ${LEAGUE_MOVES_CALLS} such calls; beside them at most one read per shard (S shards: at most S + ${LEAGUE_MOVES_CALLS} calls, ${leagueMovesCalls(64)} on 64); a shorter page then still has a nextCursor. Every call past the first spends one read of the client's read rate budget (429 RATE_LIMITED when it lacks it). A period with no placement answers no moves.`;

/** GET …/items/:item/league, …/leagues/:tier/:cohort and …/leagues/moves: reads of a board's leagues. */
@RedisBackedController('ranking')
export class LeaguesController {
  constructor(private readonly leagues: LeaguesService) {}

  @WindowRead('boards/:board/items/:item/league', "An item's league standing this period", ITEM_NOTE, ItemLeagueDto)
  @ErrorResponse(404, 'LEAGUE_NOT_FOUND: the board has no leagues; ITEM_NOT_FOUND: no event this period')
  item(@Param() params: ItemParams): Promise<ItemLeagueDto> {
    return this.leagues.item(params.board, params.item);
  }

  @WindowRead('boards/:board/leagues/moves', "A closed period's promotions and relegations", MOVES_NOTE, MovesPageDto)
  @ErrorResponse(400, 'INVALID_INPUT: at names a period that has not ended')
  @ErrorResponse(404, 'LEAGUE_NOT_FOUND: the board has no leagues')
  moves(@Param() params: BoardParams, @Query() query: MovesQuery, @Charge() admit: ReadCharge): Promise<MovesPageDto> {
    const page = { offset: query.cursor ?? 0, limit: query.limit ?? LEAGUE_MOVES_DEFAULT };
    const atMs = query.at === undefined ? undefined : query.at * 1000;
    return this.leagues.moves(params.board, atMs, page, admit);
  }

  @WindowRead('boards/:board/leagues/:tier/:cohort', 'A cohort of the current period', COHORT_NOTE, CohortPageDto)
  @ErrorResponse(404, 'LEAGUE_NOT_FOUND: the board has no leagues, or no such tier')
  cohort(@Param() params: CohortParams, @Query() query: CohortQuery): Promise<CohortPageDto> {
    const page = { offset: query.offset ?? 0, limit: query.limit ?? LEAGUE_SIZE.max };
    return this.leagues.cohort(params.board, params.tier, params.cohort, page);
  }
}
