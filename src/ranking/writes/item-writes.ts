import type { WriteAnswer } from '../../common/retry-safe';
import { GrowthKind, Reservation, reserveGrowth } from '../../governance/growth-quotas';
import type { WriteOutcome } from '../core/ranking.types';
import type {
  GuardedAttempt,
  IncrementCommand,
  ItemWritten,
  LikeCommand,
  LikeWritten,
  UnlikeCommand,
  WriteKind,
} from './write-commands';
import { atRefusal, byWindow, checkAt, checkCreatedAt, growthError } from './write-rules';
import { WritesStore } from './writes.store';

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
