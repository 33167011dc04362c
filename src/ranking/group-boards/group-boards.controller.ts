import { Delete, Param, Put } from '@nestjs/common';
import { KeyedRoute, RetrySafeNoContent } from '../../access/access.decorators';
import { Exchange, WriteExchange } from '../../edge/retry-safe';
import { ErrorResponse, RedisBackedController } from '../../edge/route-decorators';
import { GrowthQuotas } from '../../governance/growth-quotas';
import { MemberParams } from '../dto/group-board.dto';
import {
  GROUP_SETTLE_ROWS,
  MAX_GROUPS_PER_BOARD,
  MAX_MEMBERS_PER_BOARD,
  MAX_MEMBERS_PER_GROUP,
} from '../options/group-of/group-of.limits';
import { GroupBoardsService } from './group-boards.service';

const MEMBER_NOTE = `On a group board (one declaring groupOf): the item of the member board joins the group, leaving any group it was in (an item is in at most one group of a group board). The group's score (the sum of decay^i x s_i over its top best members' scores in the member window) follows at once: every read of the group board answers it. One call on the item's shard of the member board. A group board holds at most ${MAX_GROUPS_PER_BOARD} groups, ${MAX_MEMBERS_PER_GROUP} members in one group and ${MAX_MEMBERS_PER_BOARD} members in all (429 QUOTA_EXCEEDED beyond, nothing changed; over a sharded member board each shard holds at most ${MAX_GROUPS_PER_BOARD} groups and twice its even share of the members). Reads of the group board recompute the groups whose members changed, at most ${GROUP_SETTLE_ROWS} member rows a call.`;

const UNSUPPORTED =
  'INVALID_INPUT: the board declares no groupOf, or its member board lacks the window or has order asc, ties first, a tiebreak, moderation or metrics';

/** Members of group boards (groupOf): an item of the member board joins or leaves a group. */
@RedisBackedController('ranking')
export class GroupBoardsController {
  constructor(
    private readonly groups: GroupBoardsService,
    private readonly quotas: GrowthQuotas,
  ) {}

  @Put('boards/:board/members/:group/:item')
  @RetrySafeNoContent(
    KeyedRoute('write', 'board'),
    { summary: 'Make an item of the member board a member of a group', description: MEMBER_NOTE },
    'A member of the group',
  )
  @ErrorResponse(400, UNSUPPORTED)
  @ErrorResponse(404, 'BOARD_NOT_FOUND (the group board or its member board)')
  join(@Param() params: MemberParams, @Exchange() exchange: WriteExchange): Promise<void> {
    return this.setMember(params, params.group, exchange);
  }

  @Delete('boards/:board/members/:group/:item')
  @RetrySafeNoContent(
    KeyedRoute('write', 'board'),
    {
      summary: 'Take an item out of its group',
      description:
        'The item leaves its group of the group board (204 also when it was in none). The group path segment names the group the caller means; the item leaves whichever group it is in.',
    },
    'In no group',
  )
  @ErrorResponse(400, UNSUPPORTED)
  @ErrorResponse(404, 'BOARD_NOT_FOUND (the group board or its member board)')
  leave(@Param() params: MemberParams, @Exchange() exchange: WriteExchange): Promise<void> {
    return this.setMember(params, null, exchange);
  }

  private async setMember(params: MemberParams, group: string | null, exchange: WriteExchange): Promise<void> {
    await this.quotas.write(exchange, (sent) =>
      this.groups.setMember({ name: params.board, group, item: params.item, ...sent }),
    );
  }
}
