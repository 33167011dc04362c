import { Logger } from '@nestjs/common';
import { BackgroundRuns } from '../../common/background-runs';
import { randomUUID } from 'node:crypto';
import { RedisFunctions } from '../../redis/redis-functions';
import { RedisService } from '../../redis/redis.service';
import { BOARD_DROP_KEYS_PER_CALL } from '../core/ranking.limits';
import { RankingKeys } from '../core/ranking.keys';
import type { BoardsFunctions } from './boards.functions';

/** Most drops an instance resumes at a time (at start, at a sweep): the rest at the next sweep. */
const RESUMED_PER_TURN = 100;

/** One drop as noted in the list of drops: the board's shards from `fromShard` (0: the whole board) to `mostShards` - 1. */
export interface Drop {
  member: string;
  name: string;
  fromShard: number;
  mostShards: number;
}

/**
 * Deleted boards whose keys are still being dropped. A delete detaches each shard in O(1) (its config
 * renamed, board_delete.lua), then drop steps (board_drop_step.lua) unlink at most
 * BOARD_DROP_KEYS_PER_CALL keys per call, shard 0 last: its renamed config keeps a PUT of the name
 * refused (409 BOARD_BEING_DELETED) until every shard is empty. Each drop is noted in a list before
 * anything is detached, and every step is safe to repeat, so a restart, a second instance or a failed
 * step only means running the rest again: the list is resumed at start and at the scheduler's sweep.
 * A group board's memberships and groups live under its member board's tag: its drop takes them too.
 */
export class BoardDrops {
  private readonly logger = new Logger('BoardDrops');
  private readonly runs = new BackgroundRuns();

  constructor(
    private readonly redis: RedisService,
    private readonly functions: RedisFunctions,
    private readonly fns: BoardsFunctions['functions'],
    private readonly keys: RankingKeys,
    private readonly idemRetentionMs: number,
  ) {}

  /** Notes a drop (before its first detach, so a crash right after still leaves it to resume). */
  async note(shards: Omit<Drop, 'member'>, nowMs: number): Promise<Drop> {
    const { name, fromShard, mostShards } = shards;
    const drop = { member: [name, fromShard, mostShards, randomUUID()].join('\u001f'), name, fromShard, mostShards };
    await this.redis.timed(this.redis.client.zadd(this.keys.boardsDropping(), nowMs, drop.member));
    return drop;
  }

  async forget(drop: Drop): Promise<void> {
    await this.redis.timed(this.redis.client.zrem(this.keys.boardsDropping(), drop.member));
  }

  /** Detaches one shard (true: it held the board): from then on it answers as a board that does not exist. */
  detach(name: string, shard: number, nowMs: number): Promise<boolean> {
    const keys = this.keys.board(name, shard);
    return this.functions.call(this.fns.boardDelete, { keys, nowMs, idemRetentionMs: this.idemRetentionMs });
  }

  /**
   * Drops the board's keys until done or about `keyBudget` keys are unlinked; answers whether it is
   * done (and then forgets the drop). Shards from the last to shard 0, each detached first unless the
   * caller just detached them all (a drop resumed after a crash may find a shard not detached yet).
   */
  async drive(drop: Drop, keyBudget: number, nowMs: number, detached = false): Promise<boolean> {
    let left = keyBudget;
    for (let shard = drop.mostShards - 1; shard >= drop.fromShard; shard--) {
      if (!detached) await this.detach(drop.name, shard, nowMs);
      if (shard === 0) {
        const groups = await this.dropGroupPart(drop.name, left);
        left = groups.left;
        if (!groups.done) return false;
      }
      for (let done = false; !done;) {
        if (left <= 0 || this.runs.stopping) return false;
        const step = await this.functions.call(this.fns.boardDropStep, {
          keys: this.keys.board(drop.name, shard),
          budgetKeys: BOARD_DROP_KEYS_PER_CALL,
        });
        left -= Math.max(step.unlinked, 1);
        done = step.done;
      }
    }
    await this.forget(drop);
    return true;
  }

  /**
   * A group board's part under its member board's tag (group_board_drop.lua), before shard 0's renamed
   * config goes: that config names the member board and window (groupOf), so a resumed drop finds them.
   */
  private async dropGroupPart(name: string, keyBudget: number): Promise<{ left: number; done: boolean }> {
    const stored = await this.redis.timed(this.redis.client.hget(this.keys.board(name, 0).dropCfg(), 'groupOf'));
    if (stored === null) return { left: keyBudget, done: true };
    const { board, window } = JSON.parse(stored) as { board: string; window: string };
    const held = await this.redis.timed(this.redis.client.hget(this.keys.board(board, 0).cfg(), 'maxShards'));
    let left = keyBudget;
    // Each shard the member board ever had keeps the memberships and groups of its own items.
    for (let shard = 0; shard < Math.max(1, Number(held ?? 1)); shard++) {
      const part = await this.dropGroupShard({ member: board, shard, board: name, window }, left);
      left = part.left;
      if (!part.done) return part;
    }
    return { left, done: true };
  }

  /** group_board_drop on one shard of the member board, until it is done or the budget is spent. */
  private async dropGroupShard(
    part: { member: string; shard: number; board: string; window: string },
    keyBudget: number,
  ): Promise<{ left: number; done: boolean }> {
    let left = keyBudget;
    for (;;) {
      if (left <= 0 || this.runs.stopping) return { left, done: false };
      const step = await this.functions.call(this.fns.groupBoardDrop, {
        member: this.keys.board(part.member, part.shard),
        board: part.board,
        window: part.window,
        budgetKeys: BOARD_DROP_KEYS_PER_CALL,
      });
      left -= Math.max(step.unlinked, 1);
      if (step.done) return { left, done: true };
    }
  }

  /** Runs the rest of a drop in the background (one runner per drop on this instance). */
  launch(drop: Drop, nowMs: number): void {
    this.runs.start(drop.member, () =>
      this.drive(drop, Number.POSITIVE_INFINITY, nowMs)
        .then((done) => {
          if (done) this.logger.log(`board "${drop.name}": every key dropped`);
        })
        .catch((error: unknown) =>
          this.logger.warn(`drop of board "${drop.name}" paused (the scheduler's sweep resumes it): ${String(error)}`),
        ),
    );
  }

  /** Launches the noted drops that no runner of this instance holds (at start, at the scheduler's sweep). */
  async resume(nowMs: number): Promise<number> {
    const members = await this.redis.timed(
      this.redis.client.zrange(this.keys.boardsDropping(), 0, RESUMED_PER_TURN - 1),
    );
    for (const member of members) {
      const [name, fromShard, mostShards] = member.split('\u001f');
      this.launch({ member, name, fromShard: Number(fromShard), mostShards: Number(mostShards) }, nowMs);
    }
    return members.length;
  }

  /** Resolves once this instance's runners have stopped (done, or paused at their next step). */
  stop(): Promise<void> {
    return this.runs.stop();
  }

  /** Resolves once every runner of this instance has stopped (tests, a DELETE's caller that waits). */
  settled(): Promise<void> {
    return this.runs.settled();
  }
}
