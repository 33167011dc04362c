import { ConflictError } from '../../common/errors';
import { RedisFunctions } from '../../redis/redis-functions';
import { PreparedBoard } from '../core/board';
import { guard } from '../core/ranking.errors';
import { RankingSettings } from '../core/ranking.settings';
import { boardCall } from '../core/script-call';
import { segmentsWithin } from '../core/write-cost';
import { SEGMENTS_PER_EVENT } from '../options/segments/segments.limits';
import type { WritesFunctions } from './writes.functions';

/**
 * The take-back of a like stored past the write bound (more segments than one call may weigh): an
 * unlike takes the like out of at most `segmentsPerCall` of its segments per call, like.lua records
 * the rest on the item's shard, and the calls here take them out, one bounded call after another.
 */
export class LikeTakeBacks {
  private readonly costPerCall: number;
  private readonly budgetFields: number;

  constructor(
    private readonly functions: RedisFunctions,
    private readonly fns: WritesFunctions['functions'],
    settings: RankingSettings,
    private readonly indexDue: (board: PreparedBoard, dueMs: number) => Promise<void>,
  ) {
    this.costPerCall = settings.writeCostPerCall;
    this.budgetFields = settings.expireChunk;
  }

  /** Most segments an unlike takes a like out of in one call: as many as its like could name within WRITE_COST_PER_CALL. */
  segmentsPerCall(board: PreparedBoard, userId: string): number {
    const actor = board.config.actors === true ? userId : undefined;
    return Math.max(1, segmentsWithin({ actor }, board.config, this.costPerCall));
  }

  /** Goes on with the take-back of a like left unfinished until none is left. */
  async finish(board: PreparedBoard, item: string, userId: string, nowMs: number): Promise<void> {
    const shard = board.shardOf(item);
    const takeBackSegments = this.segmentsPerCall(board, userId);
    const resume = { item, userId, undo: true, resume: true, newItems: 0, newLikes: 0, takeBackSegments };
    // Each call takes at least one segment out: an event names at most SEGMENTS_PER_EVENT.max.
    for (let calls = 0; calls <= SEGMENTS_PER_EVENT.max; calls++) {
      const call = { ...boardCall(board, shard, nowMs, this.budgetFields), idem: undefined };
      const reply = await guard(this.functions.call(this.fns.like, { ...call, ...resume }));
      await this.indexDue(board, reply.created[2]);
      if (reply.created[3] === 0) return;
    }
  }
}

export function isTakeBackPending(error: unknown): boolean {
  return error instanceof ConflictError && error.code === 'LIKE_TAKE_BACK_PENDING';
}
