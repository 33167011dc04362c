import { bareHeader, callArgs } from '../../redis/function-args';
import { decodeIdempotent, IDEM_FIELDS, IdemCall, idemNamedArgs } from '../../redis/idempotency';
import { typedFunction } from '../../redis/function-library';
import { NamedReply } from '../../redis/replies';
import { BoardCall, windowReadFunction, WindowCall } from '../core/script-call';
import { sliceFunctions } from '../core/slice-functions';

const SET_ARGS = [
  'board',
  'window',
  'item',
  'group',
  'boards',
  'groups',
  'per_group',
  'members',
  ...IDEM_FIELDS,
] as const;
const SET_REPLY = ['previous'] as const;
const SETTLE_ARGS = ['board', 'top', 'decay', 'rows'] as const;
const SETTLE_REPLY = ['draining'] as const;

/** The limits a membership change is checked against (group-of.limits.ts). */
export interface MemberLimits {
  boards: number;
  groups: number;
  perGroup: number;
  members: number;
}

/** Group boards (src/ranking/options/group-of/): memberships and settling, on the member board's shard. */
export const GROUP_BOARDS_FUNCTIONS = {
  groupMemberSet: typedFunction({
    name: 'tbRankGroupMemberSet',
    handler: 'group_member_set',
    numberOfKeys: 1,
    contract: { args: SET_ARGS, reply: SET_REPLY },
    build: (
      call: BoardCall & {
        groupBoard: string;
        window: string;
        item: string;
        group: string;
        limits: MemberLimits;
        idem?: IdemCall;
      },
    ) => ({
      keys: [call.shard.keys.cfg()],
      args: callArgs({ ...bareHeader(call.nowMs), version: call.board.config.version }, SET_ARGS, {
        board: call.groupBoard,
        window: call.window,
        item: call.item,
        group: call.group,
        boards: call.limits.boards,
        groups: call.limits.groups,
        per_group: call.limits.perGroup,
        members: call.limits.members,
        ...idemNamedArgs(call.idem, ''),
      }),
    }),
    decode: (raw, call) =>
      decodeIdempotent('tbRankGroupMemberSet', raw, call.idem, (reply) => {
        reply.expectLength(SET_REPLY.length);
        const previous = reply.string(SET_REPLY.indexOf('previous'));
        return { previous: previous === '' ? null : previous };
      }),
  }),

  groupSettle: windowReadFunction({
    name: 'tbRankGroupSettle',
    handler: 'group_settle',
    args: SETTLE_ARGS,
    reply: SETTLE_REPLY,
    values: (call: WindowCall & { groupBoard: string; top: number; decay: number; rows: number }) => ({
      board: call.groupBoard,
      top: call.top,
      decay: call.decay,
      rows: call.rows,
    }),
    decode: (raw) => ({ draining: new NamedReply('tbRankGroupSettle', SETTLE_REPLY, raw).flag('draining') }),
  }),
};

/** The group boards slice's part of tb_ranking, injected into its store (RankingCoreModule builds it). */
export class GroupBoardsFunctions extends sliceFunctions(GROUP_BOARDS_FUNCTIONS) {}
