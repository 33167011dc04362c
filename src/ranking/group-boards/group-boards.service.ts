import { Injectable } from '@nestjs/common';
import { Clock } from '../../common/clock';
import { DomainError, InvalidInputError, NotFoundError } from '../../common/errors';
import { WriteAnswer } from '../../common/retry-safe';
import { ONE_ANSWER, withAnswerBudget } from '../../governance/answer-budget';
import { ClientBudget } from '../../governance/growth-quotas';
import type { ReadCharge } from '../../governance/read-charge';
import { idemRequest } from '../../redis/idempotency';
import { BoardCache } from '../boards/board-cache';
import { GroupSourceRead, GroupSources } from '../boards/group-sources';
import { BoardKeys } from '../core/ranking.keys';
import { PreparedBoard } from '../core/board';
import type { WindowConfig } from '../core/window-math';
import { GROUP_OF_MESSAGES as GM, GroupOfSetting } from '../options/group-of/group-of.option';
import { GROUP_SETTLE_CALLS_PER_VISIT, GROUP_SETTLE_PERIOD_MS } from '../options/group-of/group-of.limits';
import { GroupBoardsStore } from './group-boards.store';

/** A membership change as the client sent it (group null: the item leaves its group). */
export interface MemberRequest {
  name: string;
  group: string | null;
  item: string;
  idemKey?: string;
  budget?: ClientBudget;
}

/** The keys of a group board's groups, under its member board's tag: window W's are "<W>%<group board>". */
class GroupKeys extends BoardKeys {
  constructor(
    tag: string,
    private readonly groupBoard: string,
  ) {
    super(tag);
  }

  override windowKeyName(window: string): string {
    return `${window}%${this.groupBoard}`;
  }
}

/**
 * The group board `name` as its reads see it: the member board's config, order and tag, its one
 * window's keys the groups'. Its groups rank by shared ties and none is hidden: the member board's
 * tie order and moderation are its items' (group_of_lib counts them into the groups).
 */
export function groupSource(member: PreparedBoard, name: string, window: WindowConfig): PreparedBoard {
  const { moderation: _itemsModeration, ...memberConfig } = member.config;
  const source = { name, shards: 1, windows: [window], views: [], maxItems: null, ties: 'shared' as const };
  const config = { ...memberConfig, ...source };
  return new PreparedBoard(config, () => new GroupKeys(member.keys.tag, name));
}

/** A group board's member board and window, checked: the member board as group boards support it. */
interface Membership {
  setting: GroupOfSetting;
  member: PreparedBoard;
  window: WindowConfig;
}

/**
 * What a member board may not have yet (a group board over it is refused, 400
 * GROUP_MEMBER_UNSUPPORTED): a tiebreak (its pairs order the window, a group's score is no pair)
 * and metrics (a member's score is one metric's, which groupOf does not name).
 */
function unsupported(member: PreparedBoard): string | undefined {
  const config = member.config;
  if (config.tiebreak) return 'a tiebreak';
  if (config.metrics) return 'metrics';
  return undefined;
}

/** A group board over a member board of a kind group boards do not support: the scheduler leaves it. */
function unsettleable(error: unknown): boolean {
  return error instanceof DomainError && error.code === 'GROUP_MEMBER_UNSUPPORTED';
}

/**
 * Group boards: memberships (PUT/DELETE /boards/:board/members/:group/:item) and their reads, which
 * RankedSources hands here (GroupSources): settled first, then read as a window of the member board;
 * the scheduler settles them too (settleDue), so a read finds little to settle.
 */
@Injectable()
export class GroupBoardsService extends GroupSources {
  constructor(
    private readonly cache: BoardCache,
    private readonly store: GroupBoardsStore,
    private readonly clock: Clock,
  ) {
    super();
  }

  /** Sets (group null: clears) an item's group; retry-safe with an Idempotency-Key. */
  setMember(request: MemberRequest): Promise<WriteAnswer<null>> {
    const { name, group, item, idemKey, budget } = request;
    const keyed = idemRequest(idemKey, ['group-member', name, group, item]);
    return this.cache.withBoard(name, (groupBoard) =>
      this.withMembership(groupBoard, (membership) =>
        withAnswerBudget(budget, keyed, ONE_ANSWER, async (idem) => {
          const { member, setting, window } = membership;
          const change = { member, groupBoard: name, setting, window, item, group, nowMs: this.clock.nowMs(), idem };
          const written = await this.store.setMember(change);
          return { replayed: written.replayed, body: null };
        }),
      ),
    );
  }

  /**
   * A read of the group board: one settling call (a round of calls over a sharded member board, each
   * charged to `charge`), and the read once nothing is left to settle.
   */
  read<T extends object>(
    groupBoard: PreparedBoard,
    sourceName: string | undefined,
    nowMs: number,
    read: GroupSourceRead<T>,
    charge?: ReadCharge,
  ): Promise<T | { draining: true }> {
    return this.withMembership(groupBoard, async ({ member, window, setting }) => {
      const name = groupBoard.config.name;
      if (sourceName !== undefined && sourceName !== window.name)
        throw new NotFoundError('WINDOW_NOT_FOUND', GM.windowOfGroupBoard(name, sourceName, window.name));
      const { draining, calls } = await this.store.settle({ member, window, groupBoard: name, setting, nowMs });
      if (member.sharded) charge?.(calls);
      if (draining) return { draining: true as const };
      return read(groupSource(member, name, window), window, nowMs);
    });
  }

  /**
   * The scheduler's visit of a group board (claimed by one instance: ExpiryService): settles it, at
   * most GROUP_SETTLE_CALLS_PER_VISIT calls. Answers when it is due again: after GROUP_SETTLE_PERIOD_MS
   * once settled, `againMs` while groups stay dirty, null when it cannot be settled (its member board
   * gone or of a kind group boards do not support: a membership change or a read says why).
   */
  async settleDue(groupBoard: PreparedBoard, againMs: number): Promise<{ dueMs: number | null; settled: boolean }> {
    try {
      return await this.withMembership(groupBoard, async ({ member, window, setting }) => {
        const name = groupBoard.config.name;
        for (let call = 0; call < GROUP_SETTLE_CALLS_PER_VISIT; call++) {
          const nowMs = this.clock.nowMs();
          if (!(await this.store.settle({ member, window, groupBoard: name, setting, nowMs })).draining)
            return { dueMs: nowMs + GROUP_SETTLE_PERIOD_MS, settled: true };
        }
        return { dueMs: againMs, settled: false };
      });
    } catch (error) {
      if (error instanceof NotFoundError || error instanceof InvalidInputError || unsettleable(error))
        return { dueMs: null, settled: true };
      throw error;
    }
  }

  /** `run` with the group board's member board (its cached config; reloaded once when a call finds it stale). */
  private withMembership<T>(groupBoard: PreparedBoard, run: (membership: Membership) => Promise<T>): Promise<T> {
    const name = groupBoard.config.name;
    const setting = groupBoard.config.groupOf;
    if (!setting) throw new InvalidInputError(GM.notGroupBoard(name));
    return this.cache.withBoard(setting.board, (member) => {
      const what = unsupported(member);
      if (what) throw new DomainError('GROUP_MEMBER_UNSUPPORTED', GM.memberNotPlain(name, setting.board, what));
      const window = member.window(setting.window);
      if (!window) throw new InvalidInputError(GM.noSuchWindow(name, setting.board, setting.window));
      return run({ setting, member, window });
    });
  }
}
