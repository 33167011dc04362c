import { Reply } from '../../redis/replies';
import { typedFunction } from '../../redis/function-library';
import { PreparedBoard, ShardKeys, windowArgsOf } from '../core/board';
import { BoardCall, boardArgs } from '../core/script-call';
import { slotRule, WindowConfig } from '../core/window-math';
import { sliceFunctions } from '../core/slice-functions';

/** One tie mark per window ("" for none): items of an equal score count when their mark is earlier. */
function marksOf(call: { windows: WindowConfig[]; marks?: string[] }): string[] {
  return call.windows.map((_, w) => call.marks?.[w] ?? '');
}

/** Counting across the shards of a board: items above given scores, one shard or every shard of a node per call. */
export const SHARDS_FUNCTIONS = {
  countAbove: typedFunction({
    name: 'tbRankCountAbove',
    handler: 'count_above',
    flags: ['allow-oom'],
    numberOfKeys: 'dynamic',
    build: (call: BoardCall & { windows: WindowConfig[]; scores: number[]; marks?: string[] }) => {
      const { keys } = call.shard;
      return {
        keys: [keys.cfg(), ...call.windows.flatMap((w) => [keys.slots(w.name), keys.top(w.name)])],
        args: [...boardArgs(call, windowArgsOf(call.windows, call.nowMs)), ...call.scores, ...marksOf(call)],
      };
    },
    decode: (raw, call) => {
      const reply = new Reply('tbRankCountAbove', raw).expectLength(1 + 2 * call.windows.length);
      return {
        draining: reply.flag(0),
        above: call.windows.map((_, w) => reply.int(1 + 2 * w)),
        ranked: call.windows.map((_, w) => reply.int(2 + 2 * w)),
      };
    },
  }),

  countAboveShards: typedFunction({
    name: 'tbRankCountAboveShards',
    handler: 'count_above_shards',
    flags: ['no-writes', 'allow-cross-slot-keys'],
    numberOfKeys: 1,
    build: (call: {
      board: PreparedBoard;
      /** Shards served by one Redis node (at least one). */
      shards: ShardKeys[];
      nowMs: number;
      windows: WindowConfig[];
      scores: number[];
      /** Tie marks of the scores (a sharded `ties: first` board): equal scores of earlier marks count too. */
      marks?: string[];
    }) => ({
      keys: [call.shards[0].keys.cfg()],
      args: [
        call.board.config.version,
        call.nowMs,
        call.windows.length,
        // Named as this board's keys name them (a segment's windows are "<window>~<segment>").
        ...call.windows.flatMap((w) => {
          const rule = slotRule(w, call.nowMs);
          return [call.shards[0].keys.windowKeyName(w.name), rule.periodSec, rule.intervalSec, rule.originSec];
        }),
        ...call.scores,
        ...marksOf(call),
        ...call.shards.map((shard) => shard.keys.cfg()),
      ],
    }),
    decode: (raw, call) => {
      const reply = new Reply('tbRankCountAboveShards', raw).expectLength(1, true);
      const pendingCount = reply.int(0);
      reply.expectLength(1 + pendingCount + 2 * call.windows.length);
      const counts = 1 + pendingCount;
      return {
        /** Shards with expired slots not yet drained: not counted. */
        pending: Array.from({ length: pendingCount }, (_, i) => call.shards[reply.int(1 + i) - 1]),
        above: call.windows.map((_, w) => reply.int(counts + 2 * w)),
        ranked: call.windows.map((_, w) => reply.int(counts + 1 + 2 * w)),
      };
    },
  }),
};

/** The shards slice's part of tb_ranking, injected into its store (RankingCoreModule builds it). */
export class ShardsFunctions extends sliceFunctions(SHARDS_FUNCTIONS) {}
