import { RESEND_GUARD_MS } from '../../common/limits';
import { intReply, oneOfReply, Reply } from '../../redis/replies';
import { typedFunction } from '../../redis/function-library';
import { type BoardOptionsConfig, optionsFromReply, optionsOf } from '../options/registry';
import { AGGREGATES, type Aggregate } from '../core/aggregate';
import type { BoardKeys } from '../core/ranking.keys';
import type { PutBoardCommand } from '../core/ranking.types';
import { sliceFunctions } from '../core/slice-functions';

export type BoardPutReply =
  | (BoardOptionsConfig & {
      status: 'created' | 'updated' | 'unchanged';
      version: string;
      windowsJson: string;
      shards: number;
      revision: number;
      mostShards: number;
      /** null: no cap */
      maxItems: number | null;
      viewsJson: string;
      aggregate: Aggregate;
      /** 0: the board takes no segments */
      segmentsMax: number;
      /** Events may name an actor. */
      actors: boolean;
    })
  /** `dropping`: a deleted board of the name is still being dropped (board_drop_step), nothing was written. */
  | { status: 'conflict'; message: string; dropping?: true };

/**
 * The board config scripts: shard 0 decides a PUT, the other shards copy it, a delete detaches a shard
 * (its config renamed, in O(1)) and drop steps unlink the detached shard's keys in bounded calls.
 */
export const BOARDS_FUNCTIONS = {
  boardPut: typedFunction({
    name: 'tbRankBoardPut',
    handler: 'board_put',
    numberOfKeys: 1,
    build: (call: Omit<PutBoardCommand, 'name'> & { keys: BoardKeys }) => ({
      keys: [call.keys.cfg()],
      args: [
        JSON.stringify(call.windows),
        call.shards ?? '',
        call.version,
        call.reset ? 1 : 0,
        call.nowMs,
        call.maxItems ?? '',
        JSON.stringify(call.views),
        JSON.stringify(optionsOf(call)),
        call.aggregate ?? '',
        call.segmentsMax ?? '',
        call.actors === undefined ? '' : call.actors ? 1 : 0,
      ],
    }),
    decode: (raw): BoardPutReply => {
      const reply = new Reply('tbRankBoardPut', raw);
      const status = oneOfReply('tbRankBoardPut', reply.string(0), [
        'created',
        'updated',
        'unchanged',
        'conflict',
        'dropping',
      ]);
      if (status === 'dropping')
        return { status: 'conflict', message: 'a deleted board of this name is still being dropped', dropping: true };
      if (status === 'conflict') return { status, message: reply.expectLength(2).string(1) };
      reply.expectLength(12);
      return {
        status,
        version: reply.string(1),
        windowsJson: reply.string(2),
        shards: reply.number(3),
        revision: reply.int(4),
        mostShards: reply.number(5),
        maxItems: reply.int(6) || null,
        viewsJson: reply.string(7),
        ...optionsFromReply('tbRankBoardPut', reply.string(8)),
        aggregate: oneOfReply('tbRankBoardPut', reply.string(9), AGGREGATES),
        segmentsMax: reply.int(10),
        actors: reply.flag(11),
      };
    },
  }),

  boardDelete: typedFunction({
    name: 'tbRankBoardDelete',
    handler: 'board_delete',
    flags: ['allow-oom'],
    numberOfKeys: 1,
    build: (call: { keys: BoardKeys; nowMs: number; idemRetentionMs: number }) => ({
      keys: [call.keys.cfg()],
      args: [call.nowMs, call.idemRetentionMs, RESEND_GUARD_MS],
    }),
    /** true when the shard held a board (now detached) */
    decode: (raw) => intReply('tbRankBoardDelete', raw) === 1,
  }),

  boardDropStep: typedFunction({
    name: 'tbRankBoardDropStep',
    handler: 'board_drop_step',
    flags: ['allow-oom'],
    numberOfKeys: 1,
    build: (call: { keys: BoardKeys; budgetKeys: number }) => ({
      keys: [call.keys.cfg()],
      args: [call.budgetKeys],
    }),
    decode: (raw): { done: boolean; unlinked: number } => {
      const reply = new Reply('tbRankBoardDropStep', raw).expectLength(2);
      return { done: reply.flag(0), unlinked: reply.int(1) };
    },
  }),

  shardSync: typedFunction({
    name: 'tbRankShardSync',
    handler: 'shard_sync',
    numberOfKeys: 1,
    build: (
      call: Partial<BoardOptionsConfig> & {
        keys: BoardKeys;
        version: string;
        windowsJson: string;
        shards: number;
        revision: number;
        maxItems: number | null;
        viewsJson: string;
        /** Absent: sum. */
        aggregate?: Aggregate;
        /** absent or 0: the board takes no segments */
        segmentsMax?: number;
        actors?: boolean;
        nowMs: number;
      },
    ) => ({
      keys: [call.keys.cfg()],
      args: [
        call.version,
        call.windowsJson,
        call.shards,
        call.revision,
        call.nowMs,
        call.maxItems ?? 0,
        call.viewsJson,
        call.aggregate ?? 'sum',
        call.segmentsMax ?? 0,
        call.actors ? 1 : 0,
        JSON.stringify(optionsOf(call)),
      ],
    }),
    decode: (raw) => oneOfReply('tbRankShardSync', raw, ['synced', 'unchanged', 'dropping']),
  }),
};

/** The boards slice's part of tb_ranking, injected into its store (RankingCoreModule builds it). */
export class BoardsFunctions extends sliceFunctions(BOARDS_FUNCTIONS) {}
