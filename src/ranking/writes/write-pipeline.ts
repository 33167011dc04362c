import { Injectable, Logger } from '@nestjs/common';
import { Clock } from '../../common/clock';
import type { WriteAnswer } from '../../common/retry-safe';
import { AnswerCost, ONE_ANSWER, withAnswerBudget } from '../../governance/answer-budget';
import type { GrowthKind } from '../../common/growth-kinds';
import { Reservation, reserveGrowth } from '../../governance/growth-quotas';
import type { IdemRequest } from '../../redis/idempotency';
import { AliasMap } from '../aliases/alias-map';
import { BoardCache } from '../boards/board-cache';
import { BoardsStore } from '../boards/boards.store';
import type { PreparedBoard } from '../core/board';
import { RankingSettings } from '../core/ranking.settings';
import type { WriteOutcome } from '../core/ranking.types';
import { eventTimeMs } from '../core/window-math';
import { metricBoardOf } from '../options/metrics/metrics.option';
import { BatchWrite } from './batch-write';
import type {
  BatchCommand,
  BatchWritten,
  GuardedAttempt,
  IncrementCommand,
  ItemWritten,
  LikeCommand,
  LikeWritten,
  ScoreCommand,
  UnlikeCommand,
  WriteCommand,
  WriteContext,
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
import { checkActor } from '../core/actor-rules';
import { checkGroup } from '../options/groups/groups.option';
import type { LedgerEntry } from './writes.functions';
import { WritesStore } from './writes.store';
import { WriteTargets } from './write-target';

/**
 * Every write runs the same way, whatever its kind:
 *
 *   1. board     the cached config (reloaded and run once more when a script refuses it), aliases resolved
 *   2. strategy  the board's idempotency strategy (IdempotencyPolicy: in-script or the ledger), which
 *                charges the client's stored answers and hands the write its key
 *   3. steps     the kind's: check the command, reserve growth, run on the shard(s), settle the reservation,
 *                build the answer (ItemWrite below for increments, likes and unlikes; BatchWrite: batches)
 */
@Injectable()
export class WritePipeline {
  private readonly policy: IdempotencyPolicy;
  private readonly incrementWrite: IncrementWrite;
  private readonly likeWrite: LikeWrite;
  private readonly scoreWrite: ScoreWrite;
  private readonly batchWrite: BatchWrite;
  private readonly targets: WriteTargets;
  constructor(
    store: WritesStore,
    boards: BoardsStore,
    private readonly cache: BoardCache,
    private readonly clock: Clock,
    settings: RankingSettings,
    private readonly aliases: AliasMap,
  ) {
    this.policy = new IdempotencyPolicy(store);
    this.incrementWrite = new IncrementWrite(store, settings.writeCostPerCall);
    this.likeWrite = new LikeWrite(store, settings.writeCostPerCall);
    this.scoreWrite = new ScoreWrite(store, settings.writeCostPerCall);
    this.batchWrite = new BatchWrite(store, boards, cache, settings.writeCostPerCall);
    this.targets = new WriteTargets(cache);
  }

  increment(command: IncrementCommand): Promise<WriteAnswer<ItemWritten>> {
    return this.run(command, this.incrementWrite);
  }

  /** A score on a max / min / last board (409 AGGREGATE_MISMATCH on a sum board). */
  score(command: ScoreCommand): Promise<WriteAnswer<ItemWritten>> {
    return this.run(command, this.scoreWrite);
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
    const onBoard = (board: PreparedBoard) =>
      this.aliases.resolving(board, command, (named) => this.onBoard(named, kind, board, attempts++));
    const write = () => this.cache.withBoard(command.board, onBoard);
    const checking = this.targets.check(command);
    return checking ? checking.then(write) : write();
  }

  private onBoard<C extends WriteCommand, T>(
    command: C,
    kind: WriteKind<C, T>,
    board: PreparedBoard,
    attempt: number,
  ): Promise<WriteAnswer<T>> {
    const nowMs = this.attemptMs(command, attempt);
    board = metricBoardOf(command, board);
    const strategy = this.policy.strategyFor(board);
    const guarded = { board, nowMs, context: command.context, parts: kind.parts(command, board) };
    return strategy.run(guarded, (idem) =>
      kind.apply(command, { board, nowMs, idem, replaysInScript: strategy.replaysInScript }),
    );
  }

  /**
   * The request's time, except when run again on a reloaded config (which may have remade a window since:
   * a like timed before its window existed would be invisible to its unlike), then the clock's.
   */
  private attemptMs(command: WriteCommand, attempt: number): number {
    return attempt === 0 ? command.context.nowMs : this.clock.nowMs();
  }
}

/**
 * One idempotency policy for every write: a repeat of a keyed request gets the first answer (byte for
 * byte, `Idempotent-Replayed`), the key reused for another request is refused (422), and every answer
 * Redis keeps counts against the client's quota of them (withAnswerBudget). Two strategies, chosen per
 * board: in-script on a board of one shard, the ledger on a sharded one.
 */

/** A keyed write as a strategy sees it: the board it goes to and how many shard parts it touches. */
export interface GuardedWrite {
  board: PreparedBoard;
  nowMs: number;
  context: WriteContext;
  /** Shards the write calls (each stores its part's answer on a sharded board). */
  parts: number;
}

/** Runs the write under the key it hands it (the request's own, replay-only when out of budget, or none). */
export type KeyedApply<T> = (idem: IdemRequest | undefined) => Promise<WriteAnswer<T>>;

export interface IdempotencyStrategy {
  readonly name: 'in-script' | 'ledger';
  /** True when the script sees the key before anything else answers a repeat (it replays before its checks). */
  readonly replaysInScript: boolean;
  run<T>(write: GuardedWrite, apply: KeyedApply<T>): Promise<WriteAnswer<T>>;
}

/** The ledger's calls (WritesStore): an entry per keyed request on the shard its key hashes to. */
export interface RequestLedger {
  claimRequest(board: PreparedBoard, idem: IdemRequest, nowMs: number): Promise<LedgerEntry>;
  completeRequest(board: PreparedBoard, idem: IdemRequest, nowMs: number, body: string): Promise<void>;
}

/**
 * One shard: the write's one script call checks the key, applies and stores the whole answer
 * atomically, so it needs nothing around it; one answer stored, none when the script fails.
 */
export class InScriptIdempotency implements IdempotencyStrategy {
  readonly name = 'in-script';
  readonly replaysInScript = true;

  run<T>(write: GuardedWrite, apply: KeyedApply<T>): Promise<WriteAnswer<T>> {
    return withAnswerBudget(write.context.budget, write.context.idem, ONE_ANSWER, apply);
  }
}

/**
 * Sharded boards: the request's ledger entry (request_claim.lua) on the shard its key hashes to. A
 * repeat of an answered request gets the stored body byte for byte (board-wide rank included) and
 * touches no shard; the key used again for another request is refused whichever shards that request
 * touches. Each shard's part stays retry-safe on its own (the key goes with it), so a request claimed
 * but never answered (a failure half way) is simply applied again. Answers stored: the ledger entry and
 * one per part, all charged when the write fails (the claim, and maybe some parts, were stored).
 */
export class LedgerIdempotency implements IdempotencyStrategy {
  readonly name = 'ledger';
  readonly replaysInScript = false;
  private readonly logger = new Logger('Ranking');

  constructor(private readonly ledger: RequestLedger) {}

  run<T>(write: GuardedWrite, apply: KeyedApply<T>): Promise<WriteAnswer<T>> {
    const cost: AnswerCost = { answers: 1 + write.parts, chargedOnError: 1 + write.parts };
    return withAnswerBudget(write.context.budget, write.context.idem, cost, (idem) =>
      this.throughLedger(write, idem, apply),
    );
  }

  private async throughLedger<T>(
    write: GuardedWrite,
    idem: IdemRequest | undefined,
    apply: KeyedApply<T>,
  ): Promise<WriteAnswer<T>> {
    if (idem === undefined) return apply(idem);
    const { board, nowMs } = write;
    const entry = await this.ledger.claimRequest(board, idem, nowMs);
    if (entry.state === 'answered') return { replayed: true, body: JSON.parse(entry.body) as T };
    const answer = await apply(idem);
    // Lost, the stored answer only costs a repeat its byte-for-byte rank: the parts replay on their shards.
    await this.ledger
      .completeRequest(board, idem, nowMs, JSON.stringify(answer.body))
      .catch((error: unknown) => this.logger.warn(`storing the answer of a sharded request failed: ${String(error)}`));
    return answer;
  }
}

/** The policy: the strategy a board's writes use. */
export class IdempotencyPolicy {
  readonly inScript = new InScriptIdempotency();
  readonly ledger: LedgerIdempotency;
  constructor(ledger: RequestLedger) {
    this.ledger = new LedgerIdempotency(ledger);
  }

  /** A sharded board's write spans shards no one script call can cover: its answer goes to the ledger. */
  strategyFor(board: Pick<PreparedBoard, 'sharded'>): IdempotencyStrategy {
    return board.sharded ? this.ledger : this.inScript;
  }
}

type Growth = Partial<Record<GrowthKind, number>>;
/** What the event-time check found wrong but left to the script (a past `at` of a keyed write). */
type AtProblem = { message: string } | undefined;

/**
 * A write of one item on its shard (increment, like, unlike): the same five steps for each, the kind
 * filling them in. A script's refusal of the event time or of growth becomes the client's error here.
 */
abstract class ItemWrite<
  C extends IncrementCommand | ScoreCommand | LikeCommand | UnlikeCommand,
  R,
  T,
> implements WriteKind<C, T> {
  constructor(
    protected readonly store: WritesStore,
    /** WRITE_COST_PER_CALL: an item write is one call, so one past it is refused (checkEntryCost). */
    protected readonly costPerCall: number,
  ) {}

  parts(): number {
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

/** What an increment without an actor or segments may create: one item (reserveGrowth only reads it). */
const PLAIN_INCREMENT_GROWTH: Readonly<Growth> = Object.freeze({ items: 1, actorEntries: 0, segmentEntries: 0 });

class IncrementWrite extends ItemWrite<IncrementCommand, WriteOutcome, ItemWritten> {
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

  protected onShard(command: IncrementCommand, attempt: GuardedAttempt, reservation: Reservation) {
    const allowances = {
      newItems: reservation.allowance('items'),
      newActorEntries: reservation.allowance('actorEntries'),
      newSegmentEntries: reservation.allowance('segmentEntries'),
    };
    return this.store.increment(command, { ...attempt, allowances });
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
class ScoreWrite extends ItemWrite<ScoreCommand, WriteOutcome, ItemWritten> {
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
class LikeWrite extends ItemWrite<LikeCommand | UnlikeCommand, LikeOutcome, LikeWritten> {
  protected check(command: LikeCommand | UnlikeCommand, attempt: GuardedAttempt): AtProblem {
    if (command.kind === 'unlike') return undefined;
    checkLikeable(attempt.board);
    const problem = checkAt('at', command.atSec, attempt.nowMs, attempt.board, attempt.idem !== undefined);
    checkSegments('segments', command.segments, attempt.board);
    // On a board with actors the user is the like's actor.
    const actor = attempt.board.config.actors === true ? command.userId : undefined;
    checkEntryCost({ segments: command.segments, actor }, attempt.board, this.costPerCall);
    return problem;
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
