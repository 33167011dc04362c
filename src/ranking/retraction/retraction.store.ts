import { Injectable } from '@nestjs/common';
import { PreparedBoard, ShardKeys } from '../core/board';
import { guard } from '../core/ranking.errors';
import { RankingKeys } from '../core/ranking.keys';
import { adminStepUnits } from '../core/write-cost';
import { RetractStepCall, RetractStepReply, RetractionFunctions } from './retraction.functions';
import { sliceStore } from '../core/slice-store';

/** A step's own fields: the rest of the call (board, shard, time, expiry budget) the store adds. */
export type RetractStep = Omit<RetractStepCall, 'board' | 'shard' | 'budgetFields'>;

/** What a retraction takes out: an actor's events (every shard), or an item (its shard). */
export type RetractionKind = 'actor' | 'item';

/** A retraction's record on one shard as stored (absent fields: no record there). */
export interface RetractionRecord {
  actor?: string;
  item?: string;
  state?: string;
  events?: string;
  amount?: string;
  startedMs?: string;
}

/** Retractions in Redis: one bounded step on one shard, and the records of every shard. */
@Injectable()
export class RetractionStore extends sliceStore(RetractionFunctions) {
  /** Most units of work one step does on a shard, about a Redis command each (adminStepUnits). */
  readonly stepUnits = adminStepUnits(this.settings.writeCostPerCall);
  private readonly keys = new RankingKeys(this.redis.prefix);

  /** Notes a retraction as running (until `finished`), for instances that start later to resume. */
  async running(board: string, id: string, nowMs: number): Promise<void> {
    await this.redis.timed(this.redis.client.zadd(this.keys.retractionsRunning(), nowMs, `${board}\u001f${id}`));
  }

  async finished(board: string, id: string): Promise<void> {
    await this.redis.timed(this.redis.client.zrem(this.keys.retractionsRunning(), `${board}\u001f${id}`));
  }

  /** Runs `listener` once the connection to Redis is ready again. */
  onceConnected(listener: () => void): void {
    this.redis.onceReady(listener);
  }

  /** The retractions noted as running (at most `most`, oldest first): [board, id]. */
  async runningOnes(most: number): Promise<Array<[string, string]>> {
    const members = await this.redis.timed(this.redis.client.zrange(this.keys.retractionsRunning(), 0, most - 1));
    return members.map((member) => member.split('\u001f') as [string, string]);
  }

  step(kind: RetractionKind, board: PreparedBoard, shard: ShardKeys, step: RetractStep): Promise<RetractStepReply> {
    const call = { ...step, board, shard, budgetFields: this.budgetFields };
    return guard(this.functions.call(kind === 'actor' ? this.fns.retractStep : this.fns.retractItem, call));
  }

  /**
   * One step of an item's retraction out of the group boards' listings a sharded member board keeps on
   * shard 0 (group_history_retract.lua; the item's own shard rewrites its parts of listings not merged yet).
   */
  groupListingsStep(
    board: PreparedBoard,
    run: { id: string; item: string; nowMs: number },
  ): Promise<{ done: boolean; taken: number }> {
    const windows = board.config.windows.map((window) => window.name);
    const call = { ...run, shard: board.shards[0].keys, windows, most: this.stepUnits };
    return guard(this.functions.call(this.fns.groupHistoryRetract, call));
  }

  /** The record of every shard, shard 0 first. */
  records(board: PreparedBoard, id: string): Promise<RetractionRecord[]> {
    return Promise.all(
      board.shards.map((shard) => this.redis.timed(this.redis.client.hgetall(shard.keys.retraction(id)))),
    );
  }
}
