import { functionSet } from '../../redis/function-library';
import type { IdemCall } from '../../redis/idempotency';
import { idempotentFunction, namedFunction } from '../../redis/named-function';
import { bareHeader } from '../../redis/function-args';
import type { BoardKeys } from '../core/ranking.keys';
import { BoardCall, boardHeader, windowReadFunction, WindowCall } from '../core/script-call';
import type { WindowConfig } from '../core/window-math';
import { sliceFunctions } from '../core/slice-functions';

/** The limits a membership change is checked against (group-of.limits.ts). */
export interface MemberLimits {
  boards: number;
  groups: number;
  perGroup: number;
  members: number;
  /** Counted members the records of the group board's kept listings hold together (group_history_out_lib). */
  recordedMembers: number;
}

/** One shard's part of a sharded settle round (group_shard_step.lua). */
export interface ShardStep {
  rule: string;
  top: number;
  /** group, generation pairs flattened */
  clears: string[];
  fetches: string[];
  most: number;
}

/** Group boards (src/ranking/options/group-of/): memberships and settling, on the member board's shard. */
export const GROUP_BOARDS_FUNCTIONS = functionSet('tbRank', {
  groupMemberSet: idempotentFunction({
    numberOfKeys: 1,
    args: ['board', 'window', 'item', 'group', 'rule', 'boards', 'groups', 'per_group', 'members', 'recorded_members'],
    reply: ['previous'],
    /** The header holds the member window's rule: the call crosses its boundary first (group_history_lib). */
    build: (
      call: BoardCall & {
        groupBoard: string;
        window: WindowConfig;
        item: string;
        group: string;
        rule: string;
        limits: MemberLimits;
        idem?: IdemCall;
      },
    ) => ({
      keys: [call.shard.keys.cfg()],
      header: boardHeader(call, [call.window]),
      args: {
        board: call.groupBoard,
        window: call.window.name,
        item: call.item,
        group: call.group,
        rule: call.rule,
        boards: call.limits.boards,
        groups: call.limits.groups,
        per_group: call.limits.perGroup,
        members: call.limits.members,
        recorded_members: call.limits.recordedMembers,
      },
    }),
    decode: (reply) => ({ previous: reply.string('previous') || null }),
  }),

  groupSettle: windowReadFunction({
    args: ['board', 'top', 'decay', 'rows'],
    reply: ['draining'],
    values: (call: WindowCall & { groupBoard: string; top: number; decay: number; rows: number }) => ({
      board: call.groupBoard,
      top: call.top,
      decay: call.decay,
      rows: call.rows,
    }),
    decode: (reply) => ({ draining: reply.flag('draining') }),
  }),

  groupShardStep: windowReadFunction({
    args: ['board', 'rule', 'top', 'clears', 'fetches', 'most'],
    reply: ['draining', 'rows', 'dirty'],
    values: (call: WindowCall & { groupBoard: string; step: ShardStep }) => ({
      board: call.groupBoard,
      rule: call.step.rule,
      top: call.step.top,
      clears: JSON.stringify(call.step.clears),
      fetches: JSON.stringify(call.step.fetches),
      most: call.step.most,
    }),
    decode: (reply) => ({
      draining: reply.flag('draining'),
      rows: JSON.parse(reply.string('rows')) as Array<[string, string[]]>,
      dirty: JSON.parse(reply.string('dirty')) as string[],
    }),
  }),

  groupScoresStore: namedFunction({
    numberOfKeys: 1,
    args: ['board', 'window', 'rule', 'token', 'groups', 'scores'],
    reply: ['token', 'stored'],
    /** `shard`: shard 0's keys of the member board; token "": a claim of `groups`, else a store of `scores`. */
    build: (call: {
      shard: BoardKeys;
      groupBoard: string;
      window: string;
      rule: string;
      token: string;
      groups: string[];
      scores: string[];
    }) => ({
      keys: [call.shard.cfg()],
      header: bareHeader(0),
      args: {
        board: call.groupBoard,
        window: call.window,
        rule: call.rule,
        token: call.token,
        groups: JSON.stringify(call.groups),
        scores: JSON.stringify(call.scores),
      },
    }),
    decode: (reply) => ({ token: reply.string('token'), stored: JSON.parse(reply.string('stored')) as string[] }),
  }),
});

/** The group boards slice's part of tb_ranking, injected into its store (RankingCoreModule builds it). */
export class GroupBoardsFunctions extends sliceFunctions(GROUP_BOARDS_FUNCTIONS) {}
