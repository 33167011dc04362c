import { Injectable } from '@nestjs/common';
import { ConflictError, QuotaExceededError, RequestTooCostlyError } from '../../common/errors';
import { IdemCalls, Idempotent, IdemRequest } from '../../redis/idempotency';
import { PreparedBoard } from '../core/board';
import { guard } from '../core/ranking.errors';
import {
  MODERATED_GROUP_ARCHIVED_ITEMS_PER_SHARD,
  MODERATED_GROUP_ITEMS_PER_SHARD,
  MODERATED_GROUPS_PER_BOARD,
  MODERATED_ITEMS_PER_SHARD,
} from '../core/ranking.limits';
import { RANKING_MESSAGES as M } from '../core/ranking.messages';
import type { ScoredItem } from '../core/ranking.types';
import { boardCall } from '../core/script-call';
import type { WindowConfig } from '../core/window-math';

/** What a shard answers it would hold with a group state: group states, their items live and archived. */
type GroupCount = 'groups' | 'items' | 'archived';
import { ModerationFunctions, ModerationState } from './moderation.functions';
import { sliceStore } from '../core/slice-store';

/** A state change of one item. */
export interface StateChange {
  board: PreparedBoard;
  item: string;
  /** null: back to the default. */
  state: ModerationState | null;
  nowMs: number;
  idem?: IdemRequest;
}

/** A state change of one group, on every shard of its board. */
export interface GroupStateChange {
  board: PreparedBoard;
  group: string;
  /** null: back to the default. */
  state: ModerationState | null;
  nowMs: number;
  idem?: IdemRequest;
}

/** A review queue's rows of one window, `depth` deep on every shard. */
export interface QueueRead {
  board: PreparedBoard;
  window: WindowConfig;
  nowMs: number;
  depth: number;
}

/** A shard's refusal of a new state beyond MODERATED_ITEMS_PER_SHARD (`TB_QUOTA moderatedItems <held>`). */
function quotaOf(board: string) {
  return (error: unknown) => {
    const refusal = /^TB_QUOTA moderatedItems (?<held>\d+)/.exec(error instanceof Error ? error.message : '')?.groups;
    if (!refusal) throw error;
    throw new QuotaExceededError(M.moderatedItemsFull(board, Number(refusal.held), MODERATED_ITEMS_PER_SHARD), 60);
  };
}

/** Moderation states (one call on the item's shard) and review queue pages (one call per shard, one round). */
@Injectable()
export class ModerationStore extends sliceStore(ModerationFunctions) {
  private readonly idemCalls = IdemCalls.for(this.settings.idempotencyRetentionMs, this.redis.client);

  /** Sets the item's state (a repeat of an Idempotency-Key: the first answer, applied once). */
  set(change: StateChange): Promise<Idempotent<{ previous: ModerationState | null }>> {
    const { board, item, state, nowMs, idem } = change;
    const call = { ...boardCall(board, board.shardOf(item), nowMs, this.budgetFields), item, state };
    const most = MODERATED_ITEMS_PER_SHARD;
    const pending = this.functions.call(this.fns.moderationSet, { ...call, most, idem: this.idemCalls.of(idem) });
    return guard(pending).catch(quotaOf(board.config.name));
  }

  /**
   * Sets a group's state on every shard: first each shard answers what it would hold with it (refused
   * before anything is stored past MODERATED_GROUPS_PER_BOARD or MODERATED_GROUP_ITEMS_PER_SHARD), then
   * every shard but the first stores it, then the first with the Idempotency-Key: a repeat after a
   * failure sets the same state again on the others (a state set twice is set once), and a repeat after
   * success answers the first answer.
   */
  async setGroup(change: GroupStateChange): Promise<Idempotent<{ previous: ModerationState | null }>> {
    const { board, group, state, nowMs, idem } = change;
    const call = (shard: PreparedBoard['shards'][number], apply: boolean, idemCall?: ReturnType<IdemCalls['of']>) =>
      guard(
        this.functions.call(this.fns.moderationGroupSet, {
          ...boardCall(board, shard, nowMs, this.budgetFields),
          group,
          state,
          apply,
          idem: idemCall,
        }),
      );
    if (board.sharded) this.admit();
    if (state !== null) {
      const checks = await Promise.all(board.shards.map((shard) => call(shard, false)));
      this.checkBounds(
        board.config.name,
        checks.map((check) => check.value),
      );
    }
    const [first, ...others] = board.shards;
    await Promise.all(others.map((shard) => call(shard, true)));
    return call(first, true, this.idemCalls.of(idem));
  }

  private checkBounds(board: string, held: Array<{ previous: ModerationState | null } & Record<GroupCount, number>>) {
    if (held.some((shard) => shard.previous === null && shard.groups > MODERATED_GROUPS_PER_BOARD))
      throw new ConflictError('MODERATED_GROUPS_FULL', M.moderatedGroupsFull(board, MODERATED_GROUPS_PER_BOARD));
    const items = Math.max(...held.map((shard) => shard.items));
    if (items > MODERATED_GROUP_ITEMS_PER_SHARD)
      throw new RequestTooCostlyError(M.moderatedGroupItemsTooMany(board, items, MODERATED_GROUP_ITEMS_PER_SHARD));
    const archived = Math.max(...held.map((shard) => shard.archived));
    if (archived > MODERATED_GROUP_ARCHIVED_ITEMS_PER_SHARD)
      throw new RequestTooCostlyError(
        M.moderatedGroupArchivedTooMany(board, archived, MODERATED_GROUP_ARCHIVED_ITEMS_PER_SHARD),
      );
  }

  /** Each shard's first `depth` rows of the queue; draining when some shard still holds expired data. */
  async queue(read: QueueRead): Promise<{ draining: boolean; pages: ScoredItem[][] }> {
    if (read.board.sharded) this.admit();
    const replies = await Promise.all(
      read.board.shards.map((shard) =>
        guard(
          this.functions.call(this.fns.moderationQueue, {
            ...boardCall(read.board, shard, read.nowMs, this.budgetFields),
            window: read.window,
            offset: 0,
            limit: read.depth,
          }),
        ),
      ),
    );
    return { draining: replies.some((reply) => reply.draining), pages: replies.map((reply) => reply.rows) };
  }
}
