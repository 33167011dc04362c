import { Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { ConflictError } from '../../common/errors';
import { PreparedBoard, ShardKeys } from '../core/board';
import { guard } from '../core/ranking.errors';
import { RankingKeys } from '../core/ranking.keys';
import { RANKING_MESSAGES as M } from '../core/ranking.messages';
import { adminStepUnits } from '../core/write-cost';
import { ActorWeightsFunctions, ReweightStepCall, ReweightStepReply } from './actor-weights.functions';
import { sliceStore } from '../core/slice-store';

/** A step's own fields: the rest of the call (board, shard, record, expiry budget) the store adds. */
export type ReweightStep = Omit<ReweightStepCall, 'board' | 'shard' | 'budgetFields' | 'record'>;

/** An actor's re-weighting record on one shard as stored (absent fields: none there, or expired). */
export interface ReweightRecord {
  actor?: string;
  weight?: string;
  state?: string;
  events?: string;
}

/** Actor ids may hold any printable character: a record's key names a digest of the actor instead. */
export function actorDigest(actor: string): string {
  return createHash('sha256').update(actor).digest('hex').slice(0, 32);
}

/** A refusal of a new weighed actor past the board's places (`TB_ACTOR_WEIGHTS_FULL <held> <places>`). */
function placesOf(board: string) {
  return (error: unknown): never => {
    const refusal = /^TB_ACTOR_WEIGHTS_FULL (\d+) (\d+)/.exec(error instanceof Error ? error.message : '');
    if (!refusal) throw error;
    throw new ConflictError('ACTOR_WEIGHTS_FULL', M.actorWeightsFull(board, Number(refusal[1]), Number(refusal[2])));
  };
}

/** Actor weights in Redis: one bounded re-weighting step on one shard, the records, the stored weight. */
@Injectable()
export class ActorWeightsStore extends sliceStore(ActorWeightsFunctions) {
  /** Most units of work one step does on a shard, about a Redis command each (adminStepUnits). */
  readonly stepUnits = adminStepUnits(this.settings.writeCostPerCall);
  private readonly keys = new RankingKeys(this.redis.prefix);

  step(board: PreparedBoard, shard: ShardKeys, step: ReweightStep): Promise<ReweightStepReply> {
    const record = shard.keys.reweight(actorDigest(step.actor));
    return guard(
      this.functions.call(this.fns.reweightStep, { ...step, board, shard, record, budgetFields: this.budgetFields }),
    ).catch(placesOf(board.config.name));
  }

  /** The record of every shard, shard 0 first. */
  records(board: PreparedBoard, actor: string): Promise<ReweightRecord[]> {
    const key = (shard: ShardKeys) => shard.keys.reweight(actorDigest(actor));
    return Promise.all(board.shards.map((shard) => this.redis.timed(this.redis.client.hgetall(key(shard)))));
  }

  /** The actor's weight as shard 0 holds it (1: none set). */
  async weight(board: PreparedBoard, actor: string): Promise<number> {
    const stored = await this.redis.timed(this.redis.client.hget(board.shards[0].keys.actorWeights(), actor));
    return stored === null ? 1 : Number(stored);
  }

  /** Notes a re-weighting as running (until `finished`), for instances that start later to resume. */
  async running(board: string, actor: string, nowMs: number): Promise<void> {
    await this.redis.timed(this.redis.client.zadd(this.keys.reweightsRunning(), nowMs, `${board}\u001f${actor}`));
  }

  async finished(board: string, actor: string): Promise<void> {
    await this.redis.timed(this.redis.client.zrem(this.keys.reweightsRunning(), `${board}\u001f${actor}`));
  }

  /** The re-weightings noted as running (at most `most`, oldest first): [board, actor]. */
  async runningOnes(most: number): Promise<Array<[string, string]>> {
    const members = await this.redis.timed(this.redis.client.zrange(this.keys.reweightsRunning(), 0, most - 1));
    return members.map((member) => {
      const cut = member.indexOf('\u001f');
      return [member.slice(0, cut), member.slice(cut + 1)];
    });
  }

  /** Runs `listener` once the connection to Redis is ready again. */
  onceConnected(listener: () => void): void {
    this.redis.onceReady(listener);
  }
}
