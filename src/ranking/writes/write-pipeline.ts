import { Injectable } from '@nestjs/common';
import { Clock } from '../../common/clock';
import type { WriteAnswer } from '../../common/retry-safe';
import { BoardCache } from '../boards/board-cache';
import { BoardsStore } from '../boards/boards.store';
import type { PreparedBoard } from '../core/board';
import { BatchWrite } from './batch-write';
import { IdempotencyPolicy } from './idempotency-policy';
import { IncrementWrite, LikeWrite } from './item-writes';
import type {
  BatchCommand,
  BatchWritten,
  IncrementCommand,
  ItemWritten,
  LikeCommand,
  LikeWritten,
  UnlikeCommand,
  WriteCommand,
  WriteKind,
} from './write-commands';
import { WritesStore } from './writes.store';

/**
 * Every write runs the same way, whatever its kind:
 *
 *   1. board     the cached config; when a script refuses it (stale or gone), reloaded and run once more
 *   2. strategy  the board's idempotency strategy (IdempotencyPolicy: in-script or the ledger), which
 *                charges the client's stored answers and hands the write its key
 *   3. the kind's steps: check, reserve growth, run on the shard(s), settle, answer (item-writes.ts,
 *                batch-write.ts)
 */
@Injectable()
export class WritePipeline {
  private readonly policy: IdempotencyPolicy;
  private readonly incrementWrite: IncrementWrite;
  private readonly likeWrite: LikeWrite;
  private readonly batchWrite: BatchWrite;

  constructor(
    store: WritesStore,
    boards: BoardsStore,
    private readonly cache: BoardCache,
    private readonly clock: Clock,
  ) {
    this.policy = new IdempotencyPolicy(store);
    this.incrementWrite = new IncrementWrite(store);
    this.likeWrite = new LikeWrite(store);
    this.batchWrite = new BatchWrite(store, boards, cache);
  }

  increment(command: IncrementCommand): Promise<WriteAnswer<ItemWritten>> {
    return this.run(command, this.incrementWrite);
  }

  /** See BatchWrite: on a sharded board each shard applies its part on its own. */
  incrementBatch(command: BatchCommand): Promise<WriteAnswer<BatchWritten>> {
    return this.run(command, this.batchWrite);
  }

  like(command: LikeCommand | UnlikeCommand): Promise<WriteAnswer<LikeWritten>> {
    return this.run(command, this.likeWrite);
  }

  private run<C extends WriteCommand, T>(command: C, kind: WriteKind<C, T>): Promise<WriteAnswer<T>> {
    let attempts = 0;
    return this.cache.withBoard(command.board, (board) => this.onBoard(command, kind, board, attempts++));
  }

  private onBoard<C extends WriteCommand, T>(
    command: C,
    kind: WriteKind<C, T>,
    board: PreparedBoard,
    attempt: number,
  ): Promise<WriteAnswer<T>> {
    const nowMs = this.attemptMs(command, attempt);
    const strategy = this.policy.strategyFor(board);
    const guarded = { board, nowMs, context: command.context, parts: kind.parts(command, board) };
    return strategy.run(guarded, (idem) =>
      kind.apply(command, { board, nowMs, idem, replaysInScript: strategy.replaysInScript }),
    );
  }

  /**
   * The request's time, except when run again on a reloaded config: that config may have remade a
   * window after the request arrived, and a like timed before its window existed would be invisible
   * to its unlike (and counted again by a repeat), so the second run takes the clock's time.
   */
  private attemptMs(command: WriteCommand, attempt: number): number {
    return attempt === 0 ? command.context.nowMs : this.clock.nowMs();
  }
}
