import { functionSet } from '../../redis/function-library';
import { namedFunction } from '../../redis/named-function';
import { BoardCall, versionHeader } from '../core/script-call';
import { sliceFunctions } from '../core/slice-functions';
import { LEAGUE_MOVES_ROWS_PER_UNIT } from '../options/leagues/leagues.limits';

/** A league call: the board's config version and the league window's current period start (unix s). */
export interface LeagueCall extends BoardCall {
  currentSec: number;
}

/** A rollover step's bound: about `budget` units, a member one and each part of a cohort `partUnits` more. */
export interface RollBudget {
  budget: number;
  partUnits: number;
}

/** One row of a cohort: competition rank within it (ties share one). */
export interface CohortRow {
  rank: number;
  item: string;
  score: number;
}

/** One move of a rollover: tiers are 1-based (the lowest 1). */
export interface LeagueMove {
  item: string;
  fromTier: number;
  toTier: number;
  cohort: number;
  rank: number;
}

/** A cohort page's rows (league_cohort.lua), and a rollover's moves (league_moves.lua). */
const COHORT_ROW = ['item', 'score', 'rank'] as const;
const MOVE_ROW = ['item', 'from_tier', 'to_tier', 'cohort', 'rank'] as const;

/** The leagues' functions (src/ranking/leagues/scripts), each on one shard: its config hash names its tag. */
export const LEAGUES_FUNCTIONS = functionSet('tbRank', {
  leagueItem: namedFunction({
    flags: ['no-writes'],
    numberOfKeys: 1,
    args: ['item', 'period'],
    reply: ['placed', 'tier', 'cohort', 'rank', 'score', 'members'],
    build: (call: LeagueCall & { item: string }) => ({
      keys: [call.shard.keys.cfg()],
      header: versionHeader(call),
      args: { item: call.item, period: call.currentSec },
    }),
    decode: (reply) => {
      if (!reply.flag('placed')) return null;
      return {
        tier: reply.int('tier'),
        cohort: reply.int('cohort'),
        rank: reply.int('rank'),
        score: reply.number('score'),
        members: reply.int('members'),
      };
    },
  }),

  leagueCohort: namedFunction({
    flags: ['no-writes'],
    numberOfKeys: 1,
    args: ['period', 'tier', 'cohort', 'offset', 'limit'],
    reply: ['rows', 'members'],
    build: (call: LeagueCall & { tier: number; cohort: number; offset: number; limit: number }) => ({
      keys: [call.shard.keys.cfg()],
      header: versionHeader(call),
      args: {
        period: call.currentSec,
        tier: call.tier,
        cohort: call.cohort,
        offset: call.offset,
        limit: call.limit,
      },
    }),
    decode: (reply) => {
      const items = reply
        .nested('rows')
        .records(COHORT_ROW)
        .map((row): CohortRow => ({ item: row.string('item'), score: row.number('score'), rank: row.int('rank') }));
      return { items, members: reply.int('members') };
    },
  }),

  leagueRoll: namedFunction({
    numberOfKeys: 1,
    args: ['current', 'budget', 'part_units'],
    reply: ['done'],
    build: (call: LeagueCall & RollBudget) => ({
      keys: [call.shard.keys.cfg()],
      header: versionHeader(call),
      args: {
        current: call.currentSec,
        budget: call.budget,
        part_units: call.partUnits,
      },
    }),
    decode: (reply) => reply.flag('done'),
  }),

  leagueMoves: namedFunction({
    numberOfKeys: 1,
    args: ['period', 'current', 'offset', 'limit', 'budget', 'part_units', 'rows_per_unit'],
    reply: ['done', 'rolled', 'listed', 'rows'],
    build: (call: LeagueCall & RollBudget & { periodSec: number; offset: number; limit: number }) => ({
      keys: [call.shard.keys.cfg()],
      header: versionHeader(call),
      args: {
        period: call.periodSec,
        current: call.currentSec,
        offset: call.offset,
        limit: call.limit,
        budget: call.budget,
        part_units: call.partUnits,
        rows_per_unit: LEAGUE_MOVES_ROWS_PER_UNIT,
      },
    }),
    decode: (reply) => {
      const moves = reply
        .nested('rows')
        .records(MOVE_ROW)
        .map((row): LeagueMove => ({
          item: row.string('item'),
          fromTier: row.int('from_tier'),
          toTier: row.int('to_tier'),
          cohort: row.int('cohort'),
          rank: row.int('rank'),
        }));
      return { done: reply.flag('done'), rolled: reply.flag('rolled'), listed: reply.int('listed'), moves };
    },
  }),
});

/** The leagues' part of tb_ranking, injected into its store (RankingCoreModule builds it). */
export class LeaguesFunctions extends sliceFunctions(LEAGUES_FUNCTIONS) {}
