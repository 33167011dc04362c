import { Reply } from '../../redis/replies';
import { typedFunction } from '../../redis/function-library';
import { PreparedBoard, ShardKeys } from '../core/board';
import { itemDataOf } from '../core/item-data';
import type { ItemData } from '../core/ranking.types';
import { WindowCall, windowRead } from '../core/script-call';
import { slotRuleArgs, WindowConfig } from '../core/window-math';
import { sliceFunctions } from '../core/slice-functions';

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

/** (score, mark) pairs as the lookup scripts take them. */
function aheadArgs(ahead: AheadOf): Array<string | number> {
  return ahead.scores.flatMap((score, i) => [score, ahead.marks[i]]);
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
  withData: boolean;
  boardRanks: boolean;
}

/** Per id, in the order sent: score, board rank (0: none, or not asked) and data; null when a shard had expired slots to drain. */
export type LookupNodeReply = { scores: number[]; ranks: number[]; data: Array<ItemData | null> } | null;

/** A lookup on one shard: `items` it holds (their scores), `scores` to count above, `withData` their data too. */
export interface LookupCall extends WindowCall {
  items: string[];
  ahead: AheadOf;
  withData: boolean;
}

/**
 * The first arguments of a read across the shards one node serves: the config version, now, the
 * window's key name (a segment's: <window>~<segment>) and its slot rule; KEYS[1] routes the call.
 */
function acrossShardsHeader(call: { board: PreparedBoard; shards: ShardKeys[]; nowMs: number; window: WindowConfig }) {
  return [
    call.board.config.version,
    call.nowMs,
    call.shards[0].keys.windowKeyName(call.window.name),
    ...slotRuleArgs(call.window, call.nowMs),
  ];
}

export const LOOKUP_FUNCTIONS = {
  lookup: typedFunction({
    name: 'tbRankLookup',
    handler: 'lookup',
    // A read drains expired slots (writes that free memory): it runs on a full Redis too.
    flags: ['allow-oom'],
    numberOfKeys: 3,
    build: (call: LookupCall) =>
      windowRead(call, [call.items.length, call.withData ? 1 : 0, ...call.items, ...aheadArgs(call.ahead)]),
    decode: (raw, call): LookupReply => {
      const reply = new Reply('tbRankLookup', raw).expectLength(7);
      const ints = (index: number, count: number) => reply.nested(index).expectLength(count).intsFrom(0);
      const count = call.items.length;
      return {
        draining: reply.flag(0),
        scores: ints(1, count),
        ranks: ints(2, count),
        previousRanks: ints(3, count),
        data: itemDataOf(reply.nested(4), count),
        above: ints(5, call.ahead.scores.length),
        marks: Array.from({ length: count }, (_, i) => reply.nested(6).expectLength(count).string(i)),
      };
    },
  }),

  lookupNode: typedFunction({
    name: 'tbRankLookupNode',
    handler: 'lookup_node',
    flags: ['no-writes', 'allow-cross-slot-keys'],
    numberOfKeys: 1,
    build: (call: LookupNodeCall) => ({
      keys: [call.shards[0].keys.cfg()],
      args: [
        ...acrossShardsHeader(call),
        call.shards.length,
        ...call.shards.map((shard) => shard.keys.cfg()),
        call.withData ? 1 : 0,
        call.boardRanks ? 1 : 0,
        ...call.items.flatMap((item, i) => [item, call.homes[i] + 1]),
      ],
    }),
    decode: (raw, call): LookupNodeReply => {
      const reply = new Reply('tbRankLookupNode', raw).expectLength(1, true);
      if (!reply.flag(0)) return null;
      reply.expectLength(4);
      const count = call.items.length;
      return {
        scores: reply.nested(1).expectLength(count).intsFrom(0),
        ranks: reply.nested(2).expectLength(count).intsFrom(0),
        data: itemDataOf(reply.nested(3), count),
      };
    },
  }),

  lookupCountShards: typedFunction({
    name: 'tbRankLookupCountShards',
    handler: 'lookup_count_shards',
    flags: ['no-writes', 'allow-cross-slot-keys'],
    numberOfKeys: 1,
    build: (call: LookupCountCall) => ({
      keys: [call.shards[0].keys.cfg()],
      args: [
        ...acrossShardsHeader(call),
        call.ahead.scores.length,
        ...aheadArgs(call.ahead),
        ...call.shards.map((shard) => shard.keys.cfg()),
      ],
    }),
    decode: (raw, call) => {
      const reply = new Reply('tbRankLookupCountShards', raw).expectLength(2);
      return {
        /** Shards with expired slots not yet drained: not counted. */
        pending: reply
          .nested(0)
          .intsFrom(0)
          .map((position) => call.shards[position - 1]),
        above: reply.nested(1).expectLength(call.ahead.scores.length).intsFrom(0),
      };
    },
  }),
};

/** The lookup slice's part of tb_ranking, injected into its store (RankingCoreModule builds it). */
export class LookupFunctions extends sliceFunctions(LOOKUP_FUNCTIONS) {}
