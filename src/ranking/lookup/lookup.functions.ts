import { functionSet } from '../../redis/function-library';
import { namedFunction } from '../../redis/named-function';
import { PreparedBoard, ShardKeys } from '../core/board';
import { type ItemData, itemDataOf } from '../options/item-data/item-data';
import { acrossShardsCall, windowReadFunction, WindowCall } from '../core/script-call';
import type { WindowConfig } from '../core/window-math';
import { sliceFunctions } from '../core/slice-functions';

const LOOKUP_REPLY = ['draining', 'scores', 'ranks', 'previous', 'data', 'above', 'marks'] as const;

/** One shard's answer to a lookup: per id (in the order sent) and per score to count above. */
export interface LookupReply {
  draining: boolean;
  scores: number[];
  /** The id's rank among this shard's items (0: not ranked). */
  ranks: number[];
  /** The id's rank in the shard's latest snapshot (0: absent or none kept). */
  previousRanks: number[];
  data: Array<ItemData | null>;
  /** Items of the shard ahead of each (score, tie mark) sent. */
  above: number[];
  /** Each id's order mark on a sharded board whose order keeps marks ("": none, or another board). */
  marks: string[];
}

/** Scores to count the items ahead of, each with its tie mark ("": items scoring higher only). */
export interface AheadOf {
  scores: number[];
  marks: string[];
}

/** The second round of a sharded lookup on the shards one Redis node serves (at least one). */
export interface LookupCountCall {
  board: PreparedBoard;
  shards: ShardKeys[];
  nowMs: number;
  window: WindowConfig;
  ahead: AheadOf;
}

/** A whole lookup on the shards of a board one Redis node serves (every shard of the board). */
export interface LookupNodeCall {
  board: PreparedBoard;
  shards: ShardKeys[];
  nowMs: number;
  window: WindowConfig;
  items: string[];
  /** The position in `shards` of the shard holding each id. */
  homes: number[];
  /** The positions in `shards` of the shards whose items ahead of the ids this call counts. */
  counted: number[];
  withData: boolean;
  boardRanks: boolean;
  /** Of each id, the standing to count ahead of (a re-count of a part its own shard is not in). */
  given?: AheadOf;
}

/**
 * Per id, in the order sent: score, rank (1 + the items ahead on the counted shards; 0: none, or not
 * asked; -1: hidden) and data; null when a shard had expired slots to drain.
 */
export type LookupNodeReply = {
  scores: number[];
  ranks: number[];
  data: Array<ItemData | null>;
  /** Each id's order mark on its shard ("": none). */
  marks: string[];
} | null;

/** A lookup on one shard: `items` it holds (their scores), `scores` to count above, `withData` their data too. */
export interface LookupCall extends WindowCall {
  items: string[];
  ahead: AheadOf;
  withData: boolean;
}

export const LOOKUP_FUNCTIONS = functionSet('tbRank', {
  lookup: windowReadFunction({
    args: ['items', 'with_data', 'ahead_scores', 'ahead_marks'],
    reply: LOOKUP_REPLY,
    values: (call: LookupCall) => ({
      items: JSON.stringify(call.items),
      with_data: call.withData ? 1 : 0,
      ahead_scores: JSON.stringify(call.ahead.scores),
      ahead_marks: JSON.stringify(call.ahead.marks),
    }),
    decode: (reply, call): LookupReply => {
      const count = call.items.length;
      const ints = (field: (typeof LOOKUP_REPLY)[number], length: number) =>
        reply.nested(field).expectLength(length).intsFrom(0);
      const marks = reply.nested('marks').expectLength(count);
      const scores = reply.nested('scores').expectLength(count);
      return {
        draining: reply.flag('draining'),
        scores: Array.from({ length: count }, (_, i) => scores.number(i)),
        ranks: ints('ranks', count),
        previousRanks: ints('previous', count),
        data: itemDataOf(reply.nested('data'), count),
        above: ints('above', call.ahead.scores.length),
        marks: Array.from({ length: count }, (_, i) => marks.string(i)),
      };
    },
  }),

  lookupNode: namedFunction({
    flags: ['no-writes', 'allow-cross-slot-keys'],
    numberOfKeys: 1,
    args: ['window_key', 'shards', 'with_data', 'board_ranks', 'items', 'homes', 'counted', 'given'],
    reply: ['complete', 'scores', 'ranks', 'data', 'marks'],
    build: (call: LookupNodeCall) =>
      acrossShardsCall(call, {
        with_data: call.withData ? 1 : 0,
        board_ranks: call.boardRanks ? 1 : 0,
        items: JSON.stringify(call.items),
        homes: JSON.stringify(call.homes.map((home) => home + 1)),
        counted: JSON.stringify(call.counted.map((position) => position + 1)),
        given: JSON.stringify(givenStandings(call.given)),
      }),
    decode: (reply, call): LookupNodeReply => {
      if (!reply.flag('complete')) return null;
      const count = call.items.length;
      return {
        scores: reply.nested('scores').expectLength(count).intsFrom(0),
        ranks: reply.nested('ranks').expectLength(count).intsFrom(0),
        data: itemDataOf(reply.nested('data'), count),
        marks: Array.from({ length: count }, (_, i) => reply.nested('marks').expectLength(count).string(i)),
      };
    },
  }),

  lookupCountShards: namedFunction({
    flags: ['no-writes', 'allow-cross-slot-keys'],
    numberOfKeys: 1,
    args: ['window_key', 'ahead_scores', 'ahead_marks', 'shards'],
    reply: ['pending', 'above'],
    build: (call: LookupCountCall) =>
      acrossShardsCall(call, {
        ahead_scores: JSON.stringify(call.ahead.scores),
        ahead_marks: JSON.stringify(call.ahead.marks),
      }),
    decode: (reply, call) => ({
      /** Shards with expired slots not yet drained: not counted. */
      pending: reply
        .nested('pending')
        .intsFrom(0)
        .map((position) => call.shards[position - 1]),
      above: reply.nested('above').expectLength(call.ahead.scores.length).intsFrom(0),
    }),
  }),
});

/** Of each id, its given standing as lookup_node reads it: [score, mark]; none when not given. */
function givenStandings(given: AheadOf | undefined): Array<[number, string]> {
  return given ? given.scores.map((score, i) => [score, given.marks[i]]) : [];
}

/** The lookup slice's part of tb_ranking, injected into its store (RankingCoreModule builds it). */
export class LookupFunctions extends sliceFunctions(LOOKUP_FUNCTIONS) {}
