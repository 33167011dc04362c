import { applyDecorators, Body, Delete, Param, Put, Query } from '@nestjs/common';
import { ApiOperationOptions } from '@nestjs/swagger';
import { AdminRead, AdminRoute, RetrySafeNoContent } from '../../access/access.decorators';
import { Exchange, WriteExchange } from '../../edge/retry-safe';
import { ErrorResponse, RedisBackedController } from '../../edge/route-decorators';
import { GrowthQuotas } from '../../governance/growth-quotas';
import {
  DEFAULT_QUEUE_PAGE,
  MODERATED_GROUP_ARCHIVED_ITEMS_PER_SHARD,
  MODERATED_GROUP_ITEMS_PER_SHARD,
  MODERATED_GROUPS_PER_BOARD,
  MODERATED_ITEMS_PER_SHARD,
  QUEUE_DEPTH_ITEMS,
} from '../core/ranking.limits';
import { BoardParams } from '../dto/board.dto';
import { ItemParams } from '../dto/item.dto';
import { GroupParams, ModerationQueueDto, ModerationQueueQuery, ModerationStateDto } from '../dto/moderation.dto';
import type { ModerationState } from './moderation.functions';
import { ModerationService, QueueAnswer } from './moderation.service';

const STATE_NOTE = `Takes effect on the next read of every instance (the state lives in Redis beside the item's counts, which keep accruing). A hidden item is listed by no read (top, around, views, segments, stream, lookup: hidden true, rank null); the items after it move up (ranks, percentiles and around close the gap). Allowing it again lists it exactly as if it had never been hidden. On a board with "moderation": { "review": true } only allowed items are listed. One call on the item's shard; each shard holds at most ${MODERATED_ITEMS_PER_SHARD} items with a state (429 QUOTA_EXCEEDED beyond: clear some first).`;

const GROUP_NOTE = `On a board with "groups": true: the state applies to every item whose latest group is this one, now and as items join or leave it. An item's own state wins over its group's (an allowed item of a hidden group is listed; a hidden item of an allowed group is not); on a review board an allowed group lists its items that hold no state of their own. Takes effect on the next read of every instance; counts keep accruing, and allowing or clearing lists every item exactly as if the group had never been hidden. One check call and one set call on every shard; a board holds at most ${MODERATED_GROUPS_PER_BOARD} groups with a state (409 MODERATED_GROUPS_FULL beyond), and the moderated groups may hold at most ${MODERATED_GROUP_ITEMS_PER_SHARD} items on any one shard when a state is set (422 REQUEST_TOO_COSTLY beyond; nothing stored either way). The state also reaches the rows calendar archives and rolling windows' snapshots (a segment's too) keep of items whose latest group it is and that no window holds any more; the moderated groups may hold at most ${MODERATED_GROUP_ARCHIVED_ITEMS_PER_SHARD} such items on a shard when a state is set (422 REQUEST_TOO_COSTLY beyond).`;

const QUEUE_NOTE = `Items of a review board's window that are listed there but neither allowed nor hidden, highest score first. One call per shard, each reading cursor + limit rows plus its moderated items (at most ${QUEUE_DEPTH_ITEMS} deep: 422 REQUEST_TOO_COSTLY beyond).`;

/**
 * A set or clear of a moderation state (admin, retry-safe): 204 `answered`, 400 `invalid` when the
 * route refuses more than the controller's bad input, 404 unknown board.
 */
const StateChange = (route: MethodDecorator, operation: ApiOperationOptions, answered: string, invalid?: string) =>
  applyDecorators(
    ErrorResponse(404, 'BOARD_NOT_FOUND'),
    ...(invalid === undefined ? [] : [ErrorResponse(400, invalid)]),
    RetrySafeNoContent(AdminRoute(), operation, answered),
    route,
  );

/** Moderation of a board's items (admin): states and the review queue. */
@RedisBackedController('ranking')
export class ModerationController {
  constructor(
    private readonly moderation: ModerationService,
    private readonly quotas: GrowthQuotas,
  ) {}

  @StateChange(
    Put('admin/boards/:board/moderation/items/:item'),
    { summary: "Set an item's moderation state: hidden or allowed", description: STATE_NOTE },
    'Set',
    'INVALID_INPUT: a state other than hidden or allowed',
  )
  put(
    @Param() params: ItemParams,
    @Body() body: ModerationStateDto,
    @Exchange() exchange: WriteExchange,
  ): Promise<void> {
    return this.setState(params.board, { item: params.item }, body.state, exchange);
  }

  @StateChange(
    Delete('admin/boards/:board/moderation/items/:item'),
    {
      summary: "Clear an item's moderation state",
      description: 'Back to the default: listed (on a review board: waiting for review). 204 also when it had none.',
    },
    'Cleared',
  )
  clear(@Param() params: ItemParams, @Exchange() exchange: WriteExchange): Promise<void> {
    return this.setState(params.board, { item: params.item }, null, exchange);
  }

  @StateChange(
    Put('admin/boards/:board/moderation/groups/:group'),
    { summary: "Set a group's moderation state: hidden or allowed", description: GROUP_NOTE },
    'Set',
    'INVALID_INPUT: a state other than hidden or allowed, a board without groups',
  )
  @ErrorResponse(409, 'MODERATED_GROUPS_FULL: the board holds its most moderated groups and this one has no state')
  @ErrorResponse(422, 'REQUEST_TOO_COSTLY: the moderated groups would hold too many items on one shard')
  putGroup(
    @Param() params: GroupParams,
    @Body() body: ModerationStateDto,
    @Exchange() exchange: WriteExchange,
  ): Promise<void> {
    return this.setState(params.board, { group: params.group }, body.state, exchange);
  }

  @StateChange(
    Delete('admin/boards/:board/moderation/groups/:group'),
    {
      summary: "Clear a group's moderation state",
      description:
        'Back to the default: its items take their own state, else are listed (on a review board: wait for review). 204 also when it had none. One call on every shard.',
    },
    'Cleared',
    'INVALID_INPUT: a board without groups',
  )
  clearGroup(@Param() params: GroupParams, @Exchange() exchange: WriteExchange): Promise<void> {
    return this.setState(params.board, { group: params.group }, null, exchange);
  }

  @AdminRead(
    'admin/boards/:board/moderation/queue',
    { summary: 'Items waiting for review, highest score first', description: QUEUE_NOTE },
    ModerationQueueDto,
  )
  @ErrorResponse(400, 'INVALID_INPUT: the board does not review, a view named, a bad cursor')
  @ErrorResponse(404, 'BOARD_NOT_FOUND, WINDOW_NOT_FOUND')
  @ErrorResponse(422, 'REQUEST_TOO_COSTLY: cursor + limit past the queue depth')
  queue(@Param() params: BoardParams, @Query() query: ModerationQueueQuery): Promise<QueueAnswer> {
    return this.moderation.queue({
      name: params.board,
      window: query.window,
      limit: query.limit ?? DEFAULT_QUEUE_PAGE,
      cursor: query.cursor,
    });
  }

  /** Sets, or clears (null), the state of an item or of a group of the board. */
  private async setState(
    board: string,
    target: { item: string } | { group: string },
    state: ModerationState | null,
    exchange: WriteExchange,
  ): Promise<void> {
    await this.quotas.write(exchange, (sent) => {
      const change = { name: board, state, ...sent };
      return 'item' in target
        ? this.moderation.setState({ ...change, ...target })
        : this.moderation.setGroupState({ ...change, ...target });
    });
  }
}
