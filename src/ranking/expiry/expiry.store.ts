import { Injectable } from '@nestjs/common';
import { PreparedBoard } from '../core/board';
import { guard } from '../core/ranking.errors';
import { RankingKeys } from '../core/ranking.keys';
import { adminStepUnits } from '../core/write-cost';
import { boardCall } from '../core/script-call';
import { DueClaim, ExpireReply, ExpiryFunctions } from './expiry.functions';
import { sliceStore } from '../core/slice-store';

/** Expiry: a board's expired slots drained, and the due index (claims with a lease, the sweep's turn, entries). */
@Injectable()
export class ExpiryStore extends sliceStore(ExpiryFunctions) {
  private readonly keys = new RankingKeys(this.redis.prefix);
  /**
   * The work of one expire call on a shard, as an admin step's: after an idle board of 8 windows, 8 views
   * and segments, a call draining EXPIRE_CHUNK fields of its windows and of up to 64 segments ran 2 777
   * commands, past what a write call may run.
   */
  private readonly units = adminStepUnits(this.settings.writeCostPerCall);

  /**
   * Expires every window of the board once on every shard (bounded by the chunk size and the units of
   * an admin step), of each of its metrics (a metric but the first keeps its own window keys): whether
   * expired data remains, and when the board next has something to expire (the earliest over its
   * shards and metrics). `answered` (a visit's own, kept over its calls) holds each metric and shard's
   * last answer: one that no longer drains is not called again in the visit (its next due time stands),
   * so a board whose metrics drain unevenly costs the calls of each, not of the slowest times all.
   * `pruningShards`: the shards whose last answer says a reset's prune has steps left (prune_step.lua).
   */
  async expire(
    board: PreparedBoard,
    nowMs: number,
    answered = new Map<string, ExpireReply>(),
  ): Promise<Omit<ExpireReply, 'pruning'> & { pruningShards: number[] }> {
    const targets = (board.config.metrics ?? [undefined]).flatMap((metric) => {
      const each = board.metric(metric);
      return each.shards.map((shard, at) => ({ each, shard, at, target: `${at}:${metric ?? ''}` }));
    });
    await Promise.all(
      targets
        .filter(({ target }) => answered.get(target)?.draining !== false)
        .map(async ({ each, shard, target }) => {
          const call = { ...boardCall(each, shard, nowMs, this.budgetFields), units: this.units };
          answered.set(target, await guard(this.functions.call(this.fns.expire, call)));
        }),
    );
    const replies = [...answered.values()];
    const dues = replies.flatMap((reply) => (reply.nextDueMs === null ? [] : [reply.nextDueMs]));
    const pruning = targets.filter(({ target }) => answered.get(target)?.pruning).map(({ at }) => at);
    return {
      draining: replies.some((reply) => reply.draining),
      nextDueMs: dues.length === 0 ? null : Math.min(...dues),
      pruningShards: [...new Set(pruning)],
    };
  }

  /** Claims, from `nowMs` for `leaseMs`, up to `most` boards due by `dueByMs` (due_claim.lua). */
  claimDue(nowMs: number, leaseMs: number, most: number, dueByMs = nowMs): Promise<DueClaim> {
    return this.functions.call(this.fns.dueClaim, { keys: this.keys, nowMs, leaseMs, most, dueByMs });
  }

  /** Ends the claims of visited boards, each back in the index at its next due time (null: none). */
  async completeDue(leaseEndMs: number, visited: Map<string, number | null>): Promise<void> {
    if (visited.size > 0) await this.functions.call(this.fns.dueComplete, { keys: this.keys, leaseEndMs, visited });
  }

  /** True for the one caller (fleet-wide) that takes the sweep of this interval (sweep_turn.lua). */
  takeSweepTurn(nowMs: number, intervalMs: number): Promise<boolean> {
    return this.functions.call(this.fns.sweepTurn, { keys: this.keys, nowMs, intervalMs });
  }

  /** Enters boards that have no due entry yet (ZADD NX), each at its own due time. */
  async enqueueIfAbsent(entries: Array<[string, number]>): Promise<void> {
    if (entries.length === 0) return;
    await this.redis.timed(
      this.redis.client.zadd(this.keys.dueIndex(), 'NX', ...entries.flatMap(([name, dueMs]) => [dueMs, name])),
    );
  }
}
