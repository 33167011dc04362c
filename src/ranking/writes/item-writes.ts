import type { WriteAnswer } from '../../common/retry-safe';
import type { GrowthKind } from '../../common/growth-kinds';
import { Reservation, reserveGrowth } from '../../governance/growth-quotas';
import type { PreparedBoard } from '../core/board';
import type { WriteOutcome } from '../core/ranking.types';
import { eventTimeMs } from '../core/window-math';
import { checkActor } from '../core/actor-rules';
import { refusalOf } from '../core/ranking.errors';
import { checkGroup } from '../options/groups/groups.option';
import type {
  GuardedAttempt,
  IncrementCommand,
  ItemCommand,
  ItemWritten,
  LikeChange,
  LikeWritten,
  ScoreCommand,
  WriteKind,
} from './write-commands';
import {
  atRefusal,
  byWindow,
  checkAmount,
  checkAt,
  checkLikeable,
  checkCreatedAt,
  checkEntryCost,
  checkSegments,
  entryGrowthOf,
  growthError,
} from './write-rules';
import type { IncrementAllowances } from './writes.functions';
import type { IncrementWritten } from './write-records';
import { WritesStore } from './writes.store';

type Growth = Partial<Record<GrowthKind, number>>;
/** What the event-time check found wrong but left to the script (a past `at` of a keyed write). */
type AtProblem = { message: string } | undefined;

/**
 * A write of one item on its shard (increment, like, unlike): the same five steps for each, the kind
 * filling them in. A script's refusal of the event time or of growth becomes the client's error here.
 */
export abstract class ItemWrite<C extends ItemCommand, R, T> implements WriteKind<C, T> {
  constructor(
    protected readonly store: WritesStore,
    /** WRITE_COST_PER_CALL: an item write is one call, so one past it is refused (checkEntryCost). */
    protected readonly costPerCall: number,
  ) {}

  calls(): number {
    return 1;
  }

  /** A `then` on the shard call's promise, not an async frame: every item write passes here. */
  apply(command: C, attempt: GuardedAttempt): Promise<WriteAnswer<T>> {
    let problem: AtProblem;
    let reservation: Reservation;
    try {
      problem = this.check(command, attempt);
      reservation = reserveGrowth(command.context.budget, this.growth(command, attempt.board));
    } catch (error) {
      return Promise.reject(error);
    }
    let applied: Promise<R>;
    try {
      applied = this.onShard(command, attempt, reservation);
    } catch (error) {
      applied = Promise.reject(error);
    }
    return applied.then(
      (result) => {
        reservation.settle(this.created(result));
        return this.answer(command, result);
      },
      (error: unknown) => {
        throw atRefusal(error, problem) ?? growthError(error, reservation, attempt.board);
      },
    );
  }

  /** 400 for what the board cannot take; a past `at` of a keyed write is left to the script, which replays first. */
  protected abstract check(command: C, attempt: GuardedAttempt): AtProblem;
  /** The growth to reserve from the client's allowance. */
  protected abstract growth(command: C, board: PreparedBoard): Growth;
  protected abstract onShard(command: C, attempt: GuardedAttempt, reservation: Reservation): Promise<R>;
  /** What the write created: the reservation keeps that and gives the rest back. */
  protected abstract created(result: R): Growth;
  protected abstract answer(command: C, result: R): WriteAnswer<T>;
}

/** The growth an increment's reservation allows its script call. */
function allowancesOf(reservation: Reservation): IncrementAllowances {
  return {
    newItems: reservation.allowance('items'),
    newActorEntries: reservation.allowance('actorEntries'),
    newSegmentEntries: reservation.allowance('segmentEntries'),
  };
}

/**
 * Where a plain increment's failure goes (IncrementWrite.applyPlain): `recovery` (the write pipeline)
 * retries it as its general path would, on the board `cached` it was sent to.
 */
export interface PlainFailures {
  recovery: {
    recoverPlain(command: IncrementCommand, cached: PreparedBoard, error: unknown): Promise<WriteAnswer<ItemWritten>>;
  };
  cached: PreparedBoard;
}

function failed(failures: PlainFailures, command: IncrementCommand, error: unknown): Promise<WriteAnswer<ItemWritten>> {
  return failures.recovery.recoverPlain(command, failures.cached, error);
}

/** A plain increment refused once sent: worded as apply's caller would get it (atRefusal, growthError), then `failed`. */
function refused(
  failures: PlainFailures,
  command: IncrementCommand,
  sent: { problem: AtProblem; reservation: Reservation; board: PreparedBoard; error: unknown },
): Promise<WriteAnswer<ItemWritten>> {
  const { problem, reservation, board, error } = sent;
  return failed(failures, command, atRefusal(error, problem) ?? growthError(error, reservation, board));
}

/** What an increment without an actor or segments may create: one item (reserveGrowth only reads it). */
const PLAIN_INCREMENT_GROWTH: Readonly<Growth> = Object.freeze({ items: 1, actorEntries: 0, segmentEntries: 0 });

export class IncrementWrite extends ItemWrite<IncrementCommand, WriteOutcome, ItemWritten> {
  protected check(command: IncrementCommand, attempt: GuardedAttempt): AtProblem {
    const { board, nowMs, idem } = attempt;
    checkAmount('amount', command.amount);
    const problem = checkAt('at', command.atSec, nowMs, board, idem !== undefined);
    checkCreatedAt('createdAt', command.createdAtSec, nowMs);
    checkSegments('segments', command.segments, board);
    checkActor('actor', command.actor, board);
    checkGroup('group', command.group, board.config);
    checkEntryCost(command, board, this.costPerCall);
    return problem;
  }

  protected growth(command: IncrementCommand, board: PreparedBoard): Growth {
    // Most increments name no actor and no segment: entryGrowthOf's answer for them, made once.
    if (!command.actor && !command.segments?.length) return PLAIN_INCREMENT_GROWTH;
    return { items: 1, ...entryGrowthOf([command], board.config) };
  }

  /**
   * apply's steps for an increment naming no segment, the store's reply made the answer in one
   * callback (apply takes three promises: the store's, its own and its caller's catch); any failure
   * goes to `failures`, worded as apply's caller would get it. PlainIncrements says which go here.
   */
  applyPlain(
    command: IncrementCommand,
    attempt: GuardedAttempt,
    failures: PlainFailures,
  ): Promise<WriteAnswer<ItemWritten>> {
    let problem: AtProblem;
    let reservation: Reservation;
    let sent: Promise<IncrementWritten>;
    try {
      problem = this.check(command, attempt);
      reservation = reserveGrowth(command.context.budget, this.growth(command, attempt.board));
    } catch (error) {
      return failed(failures, command, error);
    }
    // The failure paths are module functions taking `failures`: only the `then` callbacks are made per increment.
    try {
      sent = this.store.sendIncrement(command, attempt, allowancesOf(reservation));
    } catch (error) {
      return refused(failures, command, { problem, reservation, board: attempt.board, error });
    }
    return sent.then(
      (reply) => {
        let outcome: WriteOutcome | Promise<WriteOutcome>;
        try {
          outcome = this.store.outcomeOf(attempt, reply, command);
        } catch (error) {
          return refused(failures, command, { problem, reservation, board: attempt.board, error });
        }
        // A callback for the answer only when the outcome waits: most are at hand, and a closure costs every increment.
        if (!(outcome instanceof Promise)) return this.settled(command, reservation, outcome, failures);
        return outcome.then(
          (done) => this.settled(command, reservation, done, failures),
          (error: unknown) => refused(failures, command, { problem, reservation, board: attempt.board, error }),
        );
      },
      (error: unknown) =>
        refused(failures, command, { problem, reservation, board: attempt.board, error: refusalOf(error) }),
    );
  }

  /** The reservation settled and the answer built, as apply's callback does; a throw goes to `failures`. */
  private settled(
    command: IncrementCommand,
    reservation: Reservation,
    outcome: WriteOutcome,
    failures: PlainFailures,
  ): WriteAnswer<ItemWritten> | Promise<WriteAnswer<ItemWritten>> {
    try {
      reservation.settle(this.created(outcome));
      return this.answer(command, outcome);
    } catch (error) {
      return failed(failures, command, error);
    }
  }

  protected onShard(command: IncrementCommand, attempt: GuardedAttempt, reservation: Reservation) {
    return this.store.increment(command, { ...attempt, allowances: allowancesOf(reservation) });
  }

  protected created(result: WriteOutcome): Growth {
    return {
      items: result.createdItems,
      actorEntries: result.createdActorEntries,
      segmentEntries: result.createdSegmentEntries,
    };
  }

  protected answer(command: IncrementCommand, result: WriteOutcome): WriteAnswer<ItemWritten> {
    const body = { board: command.board, item: command.item, windows: byWindow(result), draining: result.draining };
    return { replayed: result.replayed, body };
  }
}

/** A score on a max / min / last board: checked, charged and answered like an increment. */
export class ScoreWrite extends ItemWrite<ScoreCommand, WriteOutcome, ItemWritten> {
  protected check(command: ScoreCommand, attempt: GuardedAttempt): AtProblem {
    return checkAt('at', command.atSec, attempt.nowMs, attempt.board, attempt.idem !== undefined);
  }

  protected growth(): Growth {
    return { items: 1 };
  }

  protected onShard(command: ScoreCommand, attempt: GuardedAttempt, reservation: Reservation) {
    const { item, score, atSec } = command;
    const record = { item, score, newItems: reservation.allowance('items'), atMs: eventTimeMs(atSec, attempt.nowMs) };
    return this.store.score({ ...record, tiebreak: command.tiebreak }, attempt);
  }

  protected created(result: WriteOutcome): Growth {
    return { items: result.createdItems };
  }

  protected answer(command: ScoreCommand, result: WriteOutcome): WriteAnswer<ItemWritten> {
    const body = { board: command.board, item: command.item, windows: byWindow(result), draining: result.draining };
    return { replayed: result.replayed, body };
  }
}

type LikeOutcome = Awaited<ReturnType<WritesStore['like']>>;
/** A like, or its withdrawal (an unlike creates nothing, so it reserves nothing and is never refused growth). */
export class LikeWrite extends ItemWrite<LikeChange, LikeOutcome, LikeWritten> {
  protected check(command: LikeChange, attempt: GuardedAttempt): AtProblem {
    if (command.kind === 'unlike') return undefined;
    checkLikeable(attempt.board);
    const problem = checkAt('at', command.atSec, attempt.nowMs, attempt.board, attempt.idem !== undefined);
    checkSegments('segments', command.segments, attempt.board);
    // On a board with actors the user is the like's actor.
    const actor = attempt.board.config.actors === true ? command.userId : undefined;
    checkEntryCost({ segments: command.segments, actor }, attempt.board, this.costPerCall);
    return problem;
  }

  protected growth(command: LikeChange): Growth {
    return command.kind === 'unlike' ? {} : { items: 1, likeUsers: 1 };
  }

  protected onShard(command: LikeChange, attempt: GuardedAttempt, reservation: Reservation) {
    const growth = { newItems: reservation.allowance('items'), newLikes: reservation.allowance('likeUsers') };
    return this.store.like(command, { ...attempt, growth });
  }

  protected created(result: LikeOutcome): Growth {
    return { items: result.createdItems, likeUsers: result.createdLikes };
  }

  protected answer(command: LikeChange, result: LikeOutcome): WriteAnswer<LikeWritten> {
    const { board, item, userId } = command;
    const written = { board, item, userId, counted: result.counted, windows: byWindow(result) };
    return { replayed: result.replayed, body: { ...written, draining: result.draining } };
  }
}
