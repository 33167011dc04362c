import { Injectable, Logger } from '@nestjs/common';
import { QuotaExceededError } from '../../common/errors';
import { IdemCalls, Idempotent, IdemRequest } from '../../redis/idempotency';
import { PreparedBoard } from '../core/board';
import { guard } from '../core/ranking.errors';
import { RankingKeys } from '../core/ranking.keys';
import { boardCall } from '../core/script-call';
import type { WindowConfig } from '../core/window-math';
import type { GroupOfSetting } from '../options/group-of/group-of.option';
import {
  GROUP_SETTLE_ROWS,
  MAX_GROUP_BOARDS_PER_MEMBER,
  MAX_GROUPS_PER_BOARD,
  MAX_MEMBERS_PER_BOARD,
  MAX_MEMBERS_PER_GROUP,
} from '../options/group-of/group-of.limits';
import { GROUP_BOARDS_MESSAGES as GM } from './group-boards.messages';
import { GroupBoardsFunctions } from './group-boards.functions';
import { sliceStore } from '../core/slice-store';

/** A membership change: `item` of the member board joins `group` of the group board (null: leaves its group). */
export interface MembershipChange {
  member: PreparedBoard;
  groupBoard: string;
  setting: GroupOfSetting;
  item: string;
  group: string | null;
  nowMs: number;
  idem?: IdemRequest;
}

/** A group board's settling before a read, on its member board's shard. */
export interface GroupSettle {
  member: PreparedBoard;
  window: WindowConfig;
  groupBoard: string;
  setting: GroupOfSetting;
  nowMs: number;
}

const LIMITS = {
  boards: MAX_GROUP_BOARDS_PER_MEMBER,
  groups: MAX_GROUPS_PER_BOARD,
  perGroup: MAX_MEMBERS_PER_GROUP,
  members: MAX_MEMBERS_PER_BOARD,
};

/** A refusal of a membership beyond a limit (`TB_QUOTA <kind> <held>`), as the 429 naming it. */
function quotaOf(groupBoard: string) {
  return (error: unknown) => {
    const refusal = /^TB_QUOTA (?<kind>groupBoards|groups|groupSize|groupMembers) (?<held>\d+)/.exec(
      error instanceof Error ? error.message : '',
    )?.groups;
    if (!refusal) throw error;
    throw new QuotaExceededError(GM.full(groupBoard, refusal.kind, Number(refusal.held)), 60);
  };
}

/** Memberships (one call) and settling (one bounded call), both on the member board's one shard. */
@Injectable()
export class GroupBoardsStore extends sliceStore(GroupBoardsFunctions) {
  private readonly idemCalls = IdemCalls.for(this.settings.idempotencyRetentionMs, this.redis.client);
  private readonly keys = new RankingKeys(this.redis.prefix);
  private readonly logger = new Logger('GroupBoards');

  /** Sets the item's group (a repeat of an Idempotency-Key: the first answer, applied once). */
  async setMember(change: MembershipChange): Promise<Idempotent<{ previous: string | null }>> {
    const { member, item, group, nowMs, idem } = change;
    const pending = this.functions.call(this.fns.groupMemberSet, {
      ...boardCall(member, member.shards[0], nowMs, this.budgetFields),
      groupBoard: change.groupBoard,
      window: change.setting.window,
      item,
      group: group ?? '',
      limits: LIMITS,
      idem: this.idemCalls.of(idem),
    });
    const written = await guard(pending).catch(quotaOf(change.groupBoard));
    await this.indexDue(change.groupBoard, nowMs);
    return written;
  }

  /**
   * A membership changed: the group board is due at once (ZADD LT never delays it), so the scheduler
   * settles its dirty groups before the next read has to. A failure only waits for its next visit.
   */
  private async indexDue(groupBoard: string, nowMs: number): Promise<void> {
    await this.redis
      .timed(this.redis.client.zadd(this.keys.dueIndex(), 'LT', nowMs, groupBoard))
      .catch((error: unknown) => this.logger.warn(`due index not updated for "${groupBoard}": ${String(error)}`));
  }

  /** One settling call: true while expired slots or dirty groups remain. */
  async settle(settle: GroupSettle): Promise<boolean> {
    const { member, window, setting, nowMs } = settle;
    const answer = await guard(
      this.functions.call(this.fns.groupSettle, {
        ...boardCall(member, member.shards[0], nowMs, this.budgetFields),
        window,
        groupBoard: settle.groupBoard,
        top: setting.top,
        decay: setting.decay,
        rows: GROUP_SETTLE_ROWS,
      }),
    );
    return answer.draining;
  }
}
