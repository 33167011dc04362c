import { Injectable } from '@nestjs/common';
import { Clock } from '../../common/clock';
import { ConflictError, InvalidInputError, RequestTooCostlyError } from '../../common/errors';
import { WriteAnswer } from '../../common/retry-safe';
import { ONE_ANSWER, withAnswerBudget } from '../../governance/answer-budget';
import { ClientBudget } from '../../governance/growth-quotas';
import { Idempotent, idemRequest } from '../../redis/idempotency';
import { BoardCache, RankedSources } from '../boards/board-cache';
import { BoardsStore } from '../boards/boards.store';
import { PruningError } from '../core/ranking.errors';
import { HistoryStore } from '../history/history.store';
import { PRUNED_ATTEMPTS, QUEUE_DEPTH_ITEMS } from '../core/ranking.limits';
import { RANKING_MESSAGES as M } from '../core/ranking.messages';
import type { ScoredItem } from '../core/ranking.types';
import { mergeHeads } from '../core/shard-math';
import { ascendingScores } from '../options/registry';
import type { ModerationState } from './moderation.functions';
import { GroupStateChange, ModerationStore } from './moderation.store';

/** A page of the review queue. */
export interface QueueAnswer {
  board: string;
  window: string;
  items: ScoredItem[];
  nextCursor: string | null;
}

/** A state change as the admin sent it (state null: back to the default). */
export interface StateRequest {
  name: string;
  item: string;
  state: ModerationState | null;
  idemKey?: string;
  budget?: ClientBudget;
}

/** A group's state change as the admin sent it (state null: back to the default). */
export interface GroupStateRequest {
  name: string;
  group: string;
  state: ModerationState | null;
  idemKey?: string;
  budget?: ClientBudget;
}

/** What a queue read asks: the cursor is the offset a previous page answered. */
export interface QueueRequest {
  name: string;
  window?: string;
  limit: number;
  cursor?: string;
}

/**
 * Item and group moderation (PUT/DELETE …/moderation/items/:item, …/groups/:group) and the review
 * queue: an item's state lives on its shard, a group's on every shard (moderation_lib.lua), which every
 * read of the board consults in the same call.
 */
@Injectable()
export class ModerationService {
  constructor(
    private readonly cache: BoardCache,
    private readonly sources: RankedSources,
    private readonly store: ModerationStore,
    private readonly clock: Clock,
    private readonly history: HistoryStore,
    private readonly boards: BoardsStore,
  ) {}

  /** Sets (or with null clears) an item's state for every read from now on; retry-safe with an Idempotency-Key. */
  setState(request: StateRequest): Promise<WriteAnswer<null>> {
    const { name, item, state, idemKey, budget } = request;
    const keyed = idemRequest(idemKey, ['moderation', name, item, state]);
    return this.cache.withBoard(name, (board) =>
      withAnswerBudget(budget, keyed, ONE_ANSWER, async (idem) => {
        const written = await this.store.set({ board, item, state, nowMs: this.clock.nowMs(), idem });
        this.history.forgetPreviousRanks(name);
        return { replayed: written.replayed, body: null };
      }),
    );
  }

  /** Sets (or with null clears) a group's state on every shard of a groups board; retry-safe with an Idempotency-Key. */
  setGroupState(request: GroupStateRequest): Promise<WriteAnswer<null>> {
    const { name, group, state, idemKey, budget } = request;
    const keyed = idemRequest(idemKey, ['moderation-group', name, group, state]);
    return this.cache.withBoard(name, (board) =>
      withAnswerBudget(budget, keyed, ONE_ANSWER, async (idem) => {
        if (board.config.groups !== true) throw new InvalidInputError(M.groupModerationNeedsGroups(name));
        const written = await this.setGroupPruned({ board, group, state, nowMs: this.clock.nowMs(), idem });
        this.history.forgetPreviousRanks(name);
        return { replayed: written.replayed, body: null };
      }),
    );
  }

  /**
   * setGroup, after the prune a reset left on the board's shards (its PUT's instance stopped before its
   * steps ended it): a shard still pruning refuses to count the group's items (TB_PRUNING), since its
   * maps hold entries of items no window holds; the steps run to the end and the change is sent again,
   * so the counts and states are an immediate reset's. Another reset landing each time: a 409
   * CONFIG_CHANGED (the board changed during the request), nothing changed.
   */
  private async setGroupPruned(change: GroupStateChange): Promise<Idempotent<{ previous: ModerationState | null }>> {
    const { board, nowMs } = change;
    const shards = board.shards.map((_, shard) => shard);
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.store.setGroup(change);
      } catch (error) {
        if (!(error instanceof PruningError)) throw error;
        if (attempt === PRUNED_ATTEMPTS) throw new ConflictError('CONFIG_CHANGED', M.configChanged(board.config.name));
        await this.boards.prune({ name: board.config.name, shards, mostSteps: Number.POSITIVE_INFINITY, nowMs });
      }
    }
  }

  /** Items waiting for review in a window, best first: each shard reads cursor + limit rows, merged. */
  async queue(request: QueueRequest): Promise<QueueAnswer> {
    const offset = Number(request.cursor ?? '0');
    const depth = offset + request.limit;
    if (depth > QUEUE_DEPTH_ITEMS) throw new RequestTooCostlyError(M.queueTooDeep(depth, QUEUE_DEPTH_ITEMS));
    const answer = await this.sources.read(
      request.name,
      request.window,
      async (board, window, nowMs) => {
        if (board.config.moderation?.review !== true) throw new InvalidInputError(M.queueNeedsReview(request.name));
        const read = await this.store.queue({ board, window, nowMs, depth: depth + 1 });
        const merged = mergeHeads(read.pages, ascendingScores(board.config));
        const items = merged.slice(offset, depth).map(({ item, score }) => ({ item, score }));
        const nextCursor = merged.length > depth && depth < QUEUE_DEPTH_ITEMS ? String(depth) : null;
        return { board: request.name, window: window.name, items, nextCursor, draining: read.draining };
      },
      (_, view) => Promise.reject(new InvalidInputError(M.moderationReadsWindows(request.name, view.name))),
    );
    const { draining: _draining, ...page } = answer;
    return page;
  }
}
