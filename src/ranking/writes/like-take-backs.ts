import { ConflictError } from '../../common/errors';
import { RedisService } from '../../redis/redis.service';
import { RedisFunctions } from '../../redis/redis-functions';
import { PreparedBoard } from '../core/board';
import { guard } from '../core/ranking.errors';
import { RankingSettings } from '../core/ranking.settings';
import { boardCall } from '../core/script-call';
import { segmentsWithin } from '../core/write-cost';
import { SEGMENTS_PER_EVENT, TAKE_BACK_CALLS_PER_VISIT } from '../options/segments/segments.limits';
import type { WritesFunctions } from './writes.functions';

/** Records one read of a shard's take-backs asks for (HSCAN's COUNT: a small hash answers whole). */
const TAKE_BACKS_PER_SCAN = 50;

/** The calls a resumed take-back sent and whether it is finished. */
interface Resumed {
  calls: number;
  finished: boolean;
}

/**
 * The take-back of a like stored past the write bound (more segments than one call may weigh): an
 * unlike takes the like out of at most `segmentsPerCall` of its segments per call, like.lua records
 * the rest on the item's shard, and the calls here take them out, one bounded call after another:
 * the unlike's own request sends them, and the scheduler's sweep finishes those a stopped instance
 * left. Each call takes its segments out of the record in the same script that subtracts them, so
 * calls of two requests or instances on one take-back never subtract a segment twice.
 */
export class LikeTakeBacks {
  private readonly costPerCall: number;
  private readonly budgetFields: number;

  constructor(
    private readonly redis: RedisService,
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
    // Each call takes at least one segment out: an event names at most SEGMENTS_PER_EVENT.max.
    await this.resume(board, item, userId, nowMs, SEGMENTS_PER_EVENT.max + 1);
  }

  /**
   * The scheduler's part (its visit of a due board, ExpiryService): finishes the take-backs left
   * recorded on the board's shards (a segmented board's only: none records any other) in at most
   * `calls` calls, each an unlike's; answers true when none is left (false: visit it again). The unlike
   * that leaves one makes its board due at once, so a stopped instance's is swept on the next pass.
   */
  async sweep(board: PreparedBoard, nowMs: number, calls = TAKE_BACK_CALLS_PER_VISIT): Promise<boolean> {
    if (!board.config.segmentsMax) return true;
    for (const shard of board.shards) {
      const scan = this.redis.client.hscan(shard.keys.likeTakeBacks(), '0', 'COUNT', TAKE_BACKS_PER_SCAN);
      const [cursor, flat] = await this.redis.timed(scan);
      for (let i = 0; i < flat.length; i += 2) {
        const [item, userId] = flat[i].split('\u001f');
        const resumed = calls > 0 ? await this.resume(board, item, userId, nowMs, calls) : undefined;
        if (!resumed?.finished) return false;
        calls -= resumed.calls;
      }
      if (cursor !== '0') return false;
    }
    return true;
  }

  /** Goes on with a take-back in at most `most` calls (none recorded: one call finds so). */
  private async resume(board: PreparedBoard, item: string, userId: string, nowMs: number, most: number) {
    const shard = board.shardOf(item);
    const takeBackSegments = this.segmentsPerCall(board, userId);
    const resume = { item, userId, undo: true, resume: true, newItems: 0, newLikes: 0, takeBackSegments };
    const resumed: Resumed = { calls: 0, finished: false };
    while (!resumed.finished && resumed.calls < most) {
      const call = { ...boardCall(board, shard, nowMs, this.budgetFields), idem: undefined };
      const reply = await guard(this.functions.call(this.fns.like, { ...call, ...resume }));
      await this.indexDue(board, reply.created.due_ms);
      resumed.calls++;
      resumed.finished = reply.created.take_back_left === 0;
    }
    return resumed;
  }
}

export function isTakeBackPending(error: unknown): boolean {
  return error instanceof ConflictError && error.code === 'LIKE_TAKE_BACK_PENDING';
}
