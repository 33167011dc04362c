import { Injectable } from '@nestjs/common';
import { Clock } from '../../common/clock';
import type { WriteAnswer } from '../../common/retry-safe';
import { GrowthKind, Reservation, reserveGrowth } from '../../governance/growth-quotas';
import { BoardCache } from '../boards/board-cache';
import { BoardsStore } from '../boards/boards.store';
import type { PreparedBoard } from '../core/board';
import type { WriteOutcome } from '../core/ranking.types';
import { BatchWrite } from './batch-write';
import { IdempotencyPolicy } from './idempotency-policy';
import type {
  BatchCommand,
  BatchWritten,
  GuardedAttempt,
  IncrementCommand,
  ItemWritten,
  LikeCommand,
  LikeWritten,
  UnlikeCommand,
  WriteCommand,
  WriteKind,
} from './write-commands';
import { atRefusal, byWindow, checkAt, checkCreatedAt, growthError } from './write-rules';
import { WritesStore } from './writes.store';

/**
 * Every write runs the same way, whatever its kind:
 *
 *   1. board     the cached config; when a script refuses it (stale or gone), reloaded and run once more
 *   2. strategy  the board's idempotency strategy (IdempotencyPolicy: in-script or the ledger), which
 *                charges the client's stored answers and hands the write its key
 *   3. steps     the kind's: check the command, reserve growth, run on the shard(s), settle the
 *                reservation, build the answer (ItemWrite below for increments, likes and unlikes;
 *                BatchWrite in batch-write.ts)
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

type Growth = Partial<Record<GrowthKind, number>>;

/** What the event-time check found wrong but left to the script (a past `at` of a keyed write). */
type AtProblem = { message: string } | undefined;

/**
 * A write of one item on its shard (increment, like, unlike): the same five steps for each, the kind
 * filling them in. A script's refusal of the event time or of growth becomes the client's error here.
 */
abstract class ItemWrite<C extends IncrementCommand | LikeCommand | UnlikeCommand, R, T> implements WriteKind<C, T> {
  constructor(protected readonly store: WritesStore) {}

  parts(): number {
    return 1;
  }

  async apply(command: C, attempt: GuardedAttempt): Promise<WriteAnswer<T>> {
    const problem = this.check(command, attempt);
    const reservation = reserveGrowth(command.context.budget, this.growth(command));
    let result: R;
    try {
      result = await this.onShard(command, attempt, reservation);
    } catch (error) {
      throw atRefusal(error, problem) ?? growthError(error, reservation, attempt.board);
    }
    reservation.settle(this.created(result));
    return this.answer(command, result);
  }

  /** 400 for what the board cannot take; a past `at` of a keyed write is left to the script, which replays first. */
  protected abstract check(command: C, attempt: GuardedAttempt): AtProblem;
  /** The growth to reserve from the client's allowance. */
  protected abstract growth(command: C): Growth;
  protected abstract onShard(command: C, attempt: GuardedAttempt, reservation: Reservation): Promise<R>;
  /** What the write created: the reservation keeps that and gives the rest back. */
  protected abstract created(result: R): Growth;
  protected abstract answer(command: C, result: R): WriteAnswer<T>;
}

export class IncrementWrite extends ItemWrite<IncrementCommand, WriteOutcome, ItemWritten> {
  protected check(command: IncrementCommand, attempt: GuardedAttempt): AtProblem {
    const { board, nowMs, idem } = attempt;
    const problem = checkAt('at', command.atSec, nowMs, board, idem !== undefined);
    checkCreatedAt('createdAt', command.createdAtSec, nowMs);
    return problem;
  }

  protected growth(): Growth {
    return { items: 1 };
  }

  protected onShard(command: IncrementCommand, attempt: GuardedAttempt, reservation: Reservation) {
    return this.store.increment(command, { ...attempt, newItems: reservation.allowance('items') });
  }

  protected created(result: WriteOutcome): Growth {
    return { items: result.createdItems };
  }

  protected answer(command: IncrementCommand, result: WriteOutcome): WriteAnswer<ItemWritten> {
    const body = { board: command.board, item: command.item, windows: byWindow(result), draining: result.draining };
    return { replayed: result.replayed, body };
  }
}

type LikeOutcome = Awaited<ReturnType<WritesStore['like']>>;

/** A like, or its withdrawal (an unlike creates nothing, so it reserves nothing and is never refused growth). */
export class LikeWrite extends ItemWrite<LikeCommand | UnlikeCommand, LikeOutcome, LikeWritten> {
  protected check(command: LikeCommand | UnlikeCommand, attempt: GuardedAttempt): AtProblem {
    if (command.kind === 'unlike') return undefined;
    return checkAt('at', command.atSec, attempt.nowMs, attempt.board, attempt.idem !== undefined);
  }

  protected growth(command: LikeCommand | UnlikeCommand): Growth {
    return command.kind === 'unlike' ? {} : { items: 1, likeUsers: 1 };
  }

  protected onShard(command: LikeCommand | UnlikeCommand, attempt: GuardedAttempt, reservation: Reservation) {
    const growth = { newItems: reservation.allowance('items'), newLikes: reservation.allowance('likeUsers') };
    return this.store.like(command, { ...attempt, growth });
  }

  protected created(result: LikeOutcome): Growth {
    return { items: result.createdItems, likeUsers: result.createdLikes };
  }

  protected answer(command: LikeCommand | UnlikeCommand, result: LikeOutcome): WriteAnswer<LikeWritten> {
    const { board, item, userId } = command;
    const written = { board, item, userId, counted: result.counted, windows: byWindow(result) };
    return { replayed: result.replayed, body: { ...written, draining: result.draining } };
  }
}
