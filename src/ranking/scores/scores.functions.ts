import { functionSet, typedFunction } from '../../redis/function-library';
import { decodeIdempotent, Idempotent, IDEM_FIELDS, idemNamedArgs } from '../../redis/idempotency';
import { callArgs } from '../../redis/function-args';
import type { StandingsReply } from '../core/ranking.types';
import { boardHeader, WriteCall } from '../core/script-call';
import { STANDING_FIELDS, withNamedStandings } from '../core/standings';
import { sliceFunctions } from '../core/slice-functions';

/** A score of an item on a max / min / last board: its value, growth allowance and event time. */
export interface ScoreRecord {
  item: string;
  /** An integer, |score| <= MAX_ABS_SCORE. */
  score: number;
  /** New items it may create (0 or 1; UNLIMITED: no quota). */
  newItems: number;
  /** The event's time (unix ms, an integer not after now). */
  atMs: number;
  /** On a board with a tiebreak: the record's (sent beside the score, aggregate_lib); undefined: none. */
  tiebreak?: number;
}

/**
 * A score as the scripts take it, a decimal string: "<score>", or on a board with a tiebreak
 * "<score>,<tiebreak>" (aggregate_lib keeps the pair).
 */
export function scoreArg(score: number, tiebreak?: number): string {
  return tiebreak === undefined ? score.toFixed(0) : `${score.toFixed(0)},${tiebreak.toFixed(0)}`;
}

const RECORD_ARGS = [...IDEM_FIELDS, 'new_items', 'item', 'score', 'at_ms'] as const;
const RECORD_LEAD = ['draining'] as const;
const RECORD_REPLY = [...RECORD_LEAD, ...STANDING_FIELDS] as const;
/** What a score created: new items, and the due time for the index (unix ms; 0: none). */
const RECORD_CREATED = ['items', 'due_ms'] as const;
/** A score's decoded answer: its standings and what it created. */
export type ScoreWritten = Idempotent<StandingsReply, (typeof RECORD_CREATED)[number]>;

/** Max / min / last boards: the one write their windows take. */
export const SCORES_FUNCTIONS = functionSet('tbRank', {
  recordScore: typedFunction({
    numberOfKeys: 'dynamic',
    contract: { args: RECORD_ARGS, reply: RECORD_REPLY, created: RECORD_CREATED },
    build: (call: WriteCall & ScoreRecord) => ({
      keys: call.shard.incrementKeys,
      args: callArgs(boardHeader(call), RECORD_ARGS, {
        ...idemNamedArgs(call.idem, call.board.windowNames),
        new_items: call.newItems,
        item: call.item,
        // Decimal strings: the slot keeps them as sent (Lua's tostring would print 10^15 as 1e+15).
        score: scoreArg(call.score, call.tiebreak),
        at_ms: call.atMs.toFixed(0),
      }),
    }),
    decode: (raw, call): ScoreWritten =>
      withNamedStandings(
        decodeIdempotent('tbRankRecordScore', raw, call.idem, (reply) => reply, RECORD_CREATED),
        RECORD_LEAD,
        () => ({}),
      ),
  }),
});

/** The scores slice's part of tb_ranking, injected into its store (RankingCoreModule builds it). */
export class ScoresFunctions extends sliceFunctions(SCORES_FUNCTIONS) {}
