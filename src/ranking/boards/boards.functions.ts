import { functionSet } from '../../redis/function-library';
import { RESEND_GUARD_MS } from '../../common/limits';
import { namedFunction } from '../../redis/named-function';
import { bareHeader } from '../../redis/function-args';
import { NamedReply, oneOfReply } from '../../redis/replies';
import { type BoardOptionsConfig, optionsFromReply, optionsOf } from '../options/registry';
import { AGGREGATES, type Aggregate } from '../options/aggregate/aggregate';
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
    })
  /** `dropping`: a deleted board of the name is still being dropped (board_drop_step), nothing was written. */
  | { status: 'conflict'; message: string; dropping?: true };

const PUT_REPLY = [
  'status',
  'message',
  'version',
  'windows',
  'shards',
  'revision',
  'most_shards',
  'max_items',
  'views',
  'options',
  'aggregate',
] as const;
const DROP_REPLY = ['done', 'unlinked'] as const;

/** A board_put that stored a config: the config as stored. */
function putConfig(reply: NamedReply<(typeof PUT_REPLY)[number]>, status: 'created' | 'updated' | 'unchanged') {
  return {
    status,
    version: reply.string('version'),
    windowsJson: reply.string('windows'),
    shards: reply.number('shards'),
    revision: reply.int('revision'),
    mostShards: reply.number('most_shards'),
    maxItems: reply.int('max_items') || null,
    viewsJson: reply.string('views'),
    ...optionsFromReply('tbRankBoardPut', reply.string('options')),
    aggregate: oneOfReply('tbRankBoardPut', reply.string('aggregate'), AGGREGATES),
  };
}

/**
 * The board config scripts: shard 0 decides a PUT, the other shards copy it, a delete detaches a shard
 * (its config renamed, in O(1)) and drop steps unlink the detached shard's keys in bounded calls.
 */
export const BOARDS_FUNCTIONS = functionSet('tbRank', {
  boardPut: namedFunction({
    numberOfKeys: 1,
    args: ['windows', 'shards', 'new_version', 'reset', 'max_items', 'views', 'options', 'aggregate'],
    reply: PUT_REPLY,
    build: (call: Omit<PutBoardCommand, 'name'> & { keys: BoardKeys }) => ({
      keys: [call.keys.cfg()],
      header: bareHeader(call.nowMs),
      args: {
        windows: JSON.stringify(call.windows),
        shards: call.shards,
        new_version: call.version,
        reset: call.reset ? 1 : 0,
        max_items: call.maxItems,
        views: JSON.stringify(call.views),
        options: JSON.stringify(optionsOf(call)),
        aggregate: call.aggregate,
      },
    }),
    decode: (reply): BoardPutReply => {
      const status = oneOfReply('tbRankBoardPut', reply.string('status'), [
        'created',
        'updated',
        'unchanged',
        'conflict',
        'dropping',
      ]);
      if (status === 'dropping')
        return { status: 'conflict', message: 'a deleted board of this name is still being dropped', dropping: true };
      if (status === 'conflict') return { status, message: reply.string('message') };
      return putConfig(reply, status);
    },
  }),

  boardDelete: namedFunction({
    flags: ['allow-oom'],
    numberOfKeys: 1,
    args: ['idem_retention_ms', 'resend_retention_ms'],
    reply: ['held'],
    build: (call: { keys: BoardKeys; nowMs: number; idemRetentionMs: number }) => ({
      keys: [call.keys.cfg()],
      header: bareHeader(call.nowMs),
      args: {
        idem_retention_ms: call.idemRetentionMs,
        resend_retention_ms: RESEND_GUARD_MS,
      },
    }),
    /** true when the shard held a board (now detached) */
    decode: (reply) => reply.flag('held'),
  }),

  boardDropStep: namedFunction({
    flags: ['allow-oom'],
    numberOfKeys: 1,
    args: ['budget_keys'],
    reply: DROP_REPLY,
    build: (call: { keys: BoardKeys; budgetKeys: number }) => ({
      keys: [call.keys.cfg()],
      header: bareHeader(0),
      args: { budget_keys: call.budgetKeys },
    }),
    decode: (reply): { done: boolean; unlinked: number } => ({
      done: reply.flag('done'),
      unlinked: reply.int('unlinked'),
    }),
  }),

  pruneStep: namedFunction({
    numberOfKeys: 1,
    args: ['entries'],
    reply: ['done'],
    build: (call: { keys: BoardKeys; entries: number; nowMs: number }) => ({
      keys: [call.keys.cfg()],
      header: bareHeader(call.nowMs),
      args: { entries: call.entries },
    }),
    /** true once nothing is left to prune on the shard */
    decode: (reply) => reply.flag('done'),
  }),

  groupBoardDrop: namedFunction({
    flags: ['allow-oom'],
    numberOfKeys: 1,
    args: ['board', 'window', 'budget_keys'],
    reply: DROP_REPLY,
    /** `member`: the member board's shard keys; `board`, `window`: the deleted group board and the window it ranks. */
    build: (call: { member: BoardKeys; board: string; window: string; budgetKeys: number }) => ({
      keys: [call.member.cfg()],
      header: bareHeader(0),
      args: {
        board: call.board,
        window: call.window,
        budget_keys: call.budgetKeys,
      },
    }),
    decode: (reply): { done: boolean; unlinked: number } => ({
      done: reply.flag('done'),
      unlinked: reply.int('unlinked'),
    }),
  }),

  shardSync: namedFunction({
    numberOfKeys: 1,
    args: ['version', 'windows', 'shards', 'revision', 'max_items', 'views', 'aggregate', 'options'],
    reply: ['status'],
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
        nowMs: number;
      },
    ) => ({
      keys: [call.keys.cfg()],
      header: bareHeader(call.nowMs),
      args: {
        version: call.version,
        windows: call.windowsJson,
        shards: call.shards,
        revision: call.revision,
        max_items: call.maxItems ?? 0,
        views: call.viewsJson,
        aggregate: call.aggregate ?? 'sum',
        options: JSON.stringify(optionsOf(call)),
      },
    }),
    decode: (reply) => oneOfReply('tbRankShardSync', reply.string('status'), ['synced', 'unchanged', 'dropping']),
  }),
});

/** The boards slice's part of tb_ranking, injected into its store (RankingCoreModule builds it). */
export class BoardsFunctions extends sliceFunctions(BOARDS_FUNCTIONS) {}
