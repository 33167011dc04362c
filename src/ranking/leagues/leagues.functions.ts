import { bareHeader, callArgs } from '../../redis/function-args';
import { typedFunction } from '../../redis/function-library';
import { NamedReply } from '../../redis/replies';
import type { BoardCall } from '../core/script-call';
import { sliceFunctions } from '../core/slice-functions';
import { LEAGUE_MOVES_ROWS_PER_UNIT } from '../options/leagues/leagues.limits';

const ITEM_ARGS = ['item', 'period'] as const;
const ITEM_REPLY = ['placed', 'tier', 'cohort', 'rank', 'score', 'members'] as const;
const COHORT_ARGS = ['period', 'tier', 'cohort', 'offset', 'limit'] as const;
const COHORT_REPLY = ['rows', 'members'] as const;
const ROLL_ARGS = ['current', 'budget', 'part_units'] as const;
const ROLL_REPLY = ['done'] as const;
const MOVES_ARGS = ['period', 'current', 'offset', 'limit', 'budget', 'part_units', 'rows_per_unit'] as const;
const MOVES_REPLY = ['done', 'rolled', 'listed', 'rows'] as const;

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

const header = (call: BoardCall) => ({ ...bareHeader(call.nowMs), version: call.board.config.version });

/** The leagues' functions (src/ranking/leagues/scripts), each on one shard: its config hash names its tag. */
export const LEAGUES_FUNCTIONS = {
  leagueItem: typedFunction({
    name: 'tbRankLeagueItem',
    handler: 'league_item',
    flags: ['no-writes'],
    numberOfKeys: 1,
    contract: { args: ITEM_ARGS, reply: ITEM_REPLY },
    build: (call: LeagueCall & { item: string }) => ({
      keys: [call.shard.keys.cfg()],
      args: callArgs(header(call), ITEM_ARGS, { item: call.item, period: call.currentSec }),
    }),
    decode: (raw) => {
      const reply = new NamedReply('tbRankLeagueItem', ITEM_REPLY, raw);
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

  leagueCohort: typedFunction({
    name: 'tbRankLeagueCohort',
    handler: 'league_cohort',
    flags: ['no-writes'],
    numberOfKeys: 1,
    contract: { args: COHORT_ARGS, reply: COHORT_REPLY },
    build: (call: LeagueCall & { tier: number; cohort: number; offset: number; limit: number }) => ({
      keys: [call.shard.keys.cfg()],
      args: callArgs(header(call), COHORT_ARGS, {
        period: call.currentSec,
        tier: call.tier,
        cohort: call.cohort,
        offset: call.offset,
        limit: call.limit,
      }),
    }),
    decode: (raw) => {
      const reply = new NamedReply('tbRankLeagueCohort', COHORT_REPLY, raw);
      const rows = reply.nested('rows');
      const items: CohortRow[] = [];
      for (let i = 0; i < rows.length; i += 3) {
        items.push({ item: rows.string(i), score: rows.number(i + 1), rank: rows.int(i + 2) });
      }
      return { items, members: reply.int('members') };
    },
  }),

  leagueRoll: typedFunction({
    name: 'tbRankLeagueRoll',
    handler: 'league_roll',
    numberOfKeys: 1,
    contract: { args: ROLL_ARGS, reply: ROLL_REPLY },
    build: (call: LeagueCall & RollBudget) => ({
      keys: [call.shard.keys.cfg()],
      args: callArgs(header(call), ROLL_ARGS, {
        current: call.currentSec,
        budget: call.budget,
        part_units: call.partUnits,
      }),
    }),
    decode: (raw) => new NamedReply('tbRankLeagueRoll', ROLL_REPLY, raw).flag('done'),
  }),

  leagueMoves: typedFunction({
    name: 'tbRankLeagueMoves',
    handler: 'league_moves',
    numberOfKeys: 1,
    contract: { args: MOVES_ARGS, reply: MOVES_REPLY },
    build: (call: LeagueCall & RollBudget & { periodSec: number; offset: number; limit: number }) => ({
      keys: [call.shard.keys.cfg()],
      args: callArgs(header(call), MOVES_ARGS, {
        period: call.periodSec,
        current: call.currentSec,
        offset: call.offset,
        limit: call.limit,
        budget: call.budget,
        part_units: call.partUnits,
        rows_per_unit: LEAGUE_MOVES_ROWS_PER_UNIT,
      }),
    }),
    decode: (raw) => {
      const reply = new NamedReply('tbRankLeagueMoves', MOVES_REPLY, raw);
      const rows = reply.nested('rows');
      const moves: LeagueMove[] = [];
      for (let i = 0; i < rows.length; i += 5) {
        const [fromTier, toTier, cohort, rank] = [1, 2, 3, 4].map((k) => rows.int(i + k));
        moves.push({ item: rows.string(i), fromTier, toTier, cohort, rank });
      }
      return { done: reply.flag('done'), rolled: reply.flag('rolled'), listed: reply.int('listed'), moves };
    },
  }),
};

/** The leagues' part of tb_ranking, injected into its store (RankingCoreModule builds it). */
export class LeaguesFunctions extends sliceFunctions(LEAGUES_FUNCTIONS) {}
