import { functionSet } from '../../redis/function-library';
import type { IdemCall } from '../../redis/idempotency';
import { idempotentFunction } from '../../redis/named-function';
import { BoardCall, versionHeader, windowReadFunction, WindowCall } from '../core/script-call';
import { sliceFunctions } from '../core/slice-functions';

/** The limits a membership change is checked against (group-of.limits.ts). */
export interface MemberLimits {
  boards: number;
  groups: number;
  perGroup: number;
  members: number;
}

/** Group boards (src/ranking/options/group-of/): memberships and settling, on the member board's shard. */
export const GROUP_BOARDS_FUNCTIONS = functionSet('tbRank', {
  groupMemberSet: idempotentFunction({
    numberOfKeys: 1,
    args: ['board', 'window', 'item', 'group', 'boards', 'groups', 'per_group', 'members'],
    reply: ['previous'],
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
      header: versionHeader(call),
      args: {
        board: call.groupBoard,
        window: call.window,
        item: call.item,
        group: call.group,
        boards: call.limits.boards,
        groups: call.limits.groups,
        per_group: call.limits.perGroup,
        members: call.limits.members,
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
});

/** The group boards slice's part of tb_ranking, injected into its store (RankingCoreModule builds it). */
export class GroupBoardsFunctions extends sliceFunctions(GROUP_BOARDS_FUNCTIONS) {}
