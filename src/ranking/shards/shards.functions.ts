import { functionSet, typedFunction } from '../../redis/function-library';
import { callArgs } from '../../redis/function-args';
import { namedFunction } from '../../redis/named-function';
import { NamedReply } from '../../redis/replies';
import { PreparedBoard, ShardKeys } from '../core/board';
import { BoardCall, boardHeader } from '../core/script-call';
import { WindowConfig } from '../core/window-math';
import { sliceFunctions } from '../core/slice-functions';

const SHARDS_ARGS = ['window_keys', 'scores', 'marks', 'shards', 'ranked', 'as_they_stand'] as const;
const SHARDS_REPLY = ['pending', 'above', 'ranked'] as const;

/** One tie mark per window ("" for none): items of an equal score count when their mark is earlier. */
function marksOf(call: { windows: WindowConfig[]; marks?: string[] }): string[] {
  return call.windows.map((_, w) => call.marks?.[w] ?? '');
}

/** Counting across the shards of a board: items above given scores, one shard or every shard of a node per call. */
export const SHARDS_FUNCTIONS = functionSet('tbRank', {
  countAbove: namedFunction({
    flags: ['allow-oom'],
    numberOfKeys: 'dynamic',
    args: ['scores', 'marks'],
    reply: ['draining', 'above', 'ranked'],
    build: (call: BoardCall & { windows: WindowConfig[]; scores: number[]; marks?: string[] }) => {
      const { keys } = call.shard;
      return {
        keys: [keys.cfg(), ...call.windows.flatMap((w) => [keys.slots(w.name), keys.top(w.name)])],
        header: boardHeader(call, call.windows),
        args: {
          scores: JSON.stringify(call.scores),
          marks: JSON.stringify(marksOf(call)),
        },
      };
    },
    decode: (reply, call) => {
      const count = call.windows.length;
      return {
        draining: reply.flag('draining'),
        above: reply.nested('above').expectLength(count).intsFrom(0),
        ranked: reply.nested('ranked').expectLength(count).intsFrom(0),
      };
    },
  }),

  countAboveShards: typedFunction({
    flags: ['no-writes', 'allow-cross-slot-keys'],
    numberOfKeys: 1,
    contract: { args: SHARDS_ARGS, reply: SHARDS_REPLY },
    build: (call: {
      board: PreparedBoard;
      /** Shards served by one Redis node (at least one). */
      shards: ShardKeys[];
      nowMs: number;
      windows: WindowConfig[];
      scores: number[];
      /** Tie marks of the scores (a sharded `ties: first` board): equal scores of earlier marks count too. */
      marks?: string[];
      /** Whether the listed items are counted too (`ranked`); otherwise each window's answers 0. */
      ranked: boolean;
      /** Whether a shard with expired slots to drain is counted as it stands (then still named in `pending`). */
      asTheyStand?: boolean;
    }) => ({
      keys: [call.shards[0].keys.cfg()],
      args: callArgs(boardHeader({ ...call, shard: call.shards[0], budgetFields: 0 }, call.windows), SHARDS_ARGS, {
        // Named as this board's keys name them (a segment's windows are "<window>~<segment>").
        window_keys: JSON.stringify(call.windows.map((w) => call.shards[0].keys.windowKeyName(w.name))),
        scores: JSON.stringify(call.scores),
        marks: JSON.stringify(marksOf(call)),
        shards: JSON.stringify(call.shards.map((shard) => shard.keys.cfg())),
        ranked: call.ranked ? '1' : '0',
        as_they_stand: call.asTheyStand ? '1' : '0',
      }),
    }),
    decode: (raw, call) => {
      const reply = new NamedReply('tbRankCountAboveShards', SHARDS_REPLY, raw);
      const count = call.windows.length;
      return {
        /** Shards with expired slots to drain in a live window: not counted, or (asTheyStand) counted with them. */
        pending: reply
          .nested('pending')
          .intsFrom(0)
          .map((position) => call.shards[position - 1]),
        above: reply.nested('above').expectLength(count).intsFrom(0),
        ranked: reply.nested('ranked').expectLength(count).intsFrom(0),
      };
    },
  }),
});

/** The shards slice's part of tb_ranking, injected into its store (RankingCoreModule builds it). */
export class ShardsFunctions extends sliceFunctions(SHARDS_FUNCTIONS) {}
