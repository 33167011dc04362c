import { Injectable, Logger } from '@nestjs/common';
import { Clock } from '../../common/clock';
import { ConflictError, InvalidInputError, NotFoundError } from '../../common/errors';
import { WriteAnswer } from '../../common/retry-safe';
import { ONE_ANSWER, withAnswerBudget } from '../../governance/answer-budget';
import { ClientBudget, growthErrorOf, Reservation, reserveGrowth } from '../../governance/growth-quotas';
import { IdemRequest, idemRequest } from '../../redis/idempotency';
import { CapRefusal, growthRefusalOf } from '../../redis/refusals';
import { BoardCache } from '../boards/board-cache';
import { BoardsStore } from '../boards/boards.store';
import { PreparedBoard } from '../core/board';
import { AtOutOfSpanError, isRefusal, isSegmentLimit } from '../core/ranking.errors';
import { RANKING_MESSAGES as M } from '../core/ranking.messages';
import type { BatchEntry, BatchOutcome, WindowStanding } from '../core/ranking.types';
import { groupByShard } from '../core/shard-math';
import { atProblem, eventTimeMs } from '../core/window-math';
import {
  allowancesOf,
  atRefusal,
  byWindow,
  checkAt,
  checkCreatedAt,
  checkSegments,
  distinctItems,
  batchFingerprint,
  incrementFingerprint,
  segmentsOf,
  timeOf,
} from './write-rules';
import { WritesStore } from './writes.store';

/** A batch entry as the client sent it: `at` (absent: now) and `createdAt` (absent: none) in unix seconds. */
export interface BatchInput {
  item: string;
  /** Undefined only beside a score. */
  amount?: number;
  /** A max / min / last board's entries carry a score instead of an amount. */
  score?: number;
  at?: number;
  createdAt?: number;
  segments?: string[];
}

/** What an item write answers: each window's new standing. */
export interface ItemWritten {
  board: string;
  item: string;
  windows: Record<string, WindowStanding>;
  /** True while an expired slot larger than one chunk is still being subtracted. */
  draining: boolean;
}

/** What every write request carries besides its own fields: its key (retry-safe when sent) and the client's budget. */
export interface WriteRequest {
  name: string;
  idemKey?: string;
  /** The client's quotas on growth (none: the write may create anything). */
  budget?: ClientBudget;
}

export type BatchWritten = { board: string; count: number; draining: boolean };

/** Increments, batches and likes: checks, growth reservations, the ledger of keyed writes on sharded boards. */
@Injectable()
export class WritesService {
  private readonly logger = new Logger('Ranking');

  constructor(
    private readonly store: WritesStore,
    private readonly boards: BoardsStore,
    private readonly cache: BoardCache,
    private readonly clock: Clock,
  ) {}

  async increment(
    request: WriteRequest & {
      item: string;
      amount: number;
      atSec?: number;
      createdAtSec?: number;
      segments?: string[];
    },
  ): Promise<WriteAnswer<ItemWritten>> {
    const { name, item, amount, budget, atSec, createdAtSec, segments } = request;
    await this.checkAggregate(name, 'sum', 'increment');
    const keyed = idemRequest(request.idemKey, incrementFingerprint(request));
    return this.cache.withBoard(name, (board) =>
      this.ledgered(board, keyed, budget, 1, async (idem) => {
        const nowMs = this.clock.nowMs();
        const problem = checkAt('at', atSec, nowMs, board, idem !== undefined);
        checkCreatedAt('createdAt', createdAtSec, nowMs);
        checkSegments('segments', segments, board);
        const reservation = reserveGrowth(budget, { items: 1 });
        try {
          const result = await this.store.increment({
            board,
            nowMs,
            item,
            amount,
            newItems: reservation.allowance('items'),
            idem,
            atMs: eventTimeMs(atSec, nowMs),
            createdMs: createdAtSec === undefined ? undefined : eventTimeMs(createdAtSec, nowMs),
            segments,
          });
          reservation.settle({ items: result.createdItems });
          const body = { board: name, item, windows: byWindow(result), draining: result.draining };
          return { replayed: result.replayed, body };
        } catch (error) {
          throw atRefusal(error, problem) ?? this.growthError(error, reservation, board);
        }
      }),
    );
  }

  /** Records a score on a max / min / last board: checked, charged and answered like an increment. */
  async score(
    request: WriteRequest & { item: string; score: number; atSec?: number },
  ): Promise<WriteAnswer<ItemWritten>> {
    const { name, item, score, budget, atSec } = request;
    await this.checkAggregate(name, 'best', 'score');
    const keyed = idemRequest(request.idemKey, ['score', name, item, score, ...timeOf(atSec)]);
    return this.cache.withBoard(name, (board) =>
      this.ledgered(board, keyed, budget, 1, async (idem) => {
        const nowMs = this.clock.nowMs();
        const problem = checkAt('at', atSec, nowMs, board, idem !== undefined);
        const reservation = reserveGrowth(budget, { items: 1 });
        const atMs = eventTimeMs(atSec, nowMs);
        const newItems = reservation.allowance('items');
        const result = await this.store
          .score({ board, nowMs, item, score, newItems, idem, atMs })
          .catch((error: unknown) => {
            throw atRefusal(error, problem) ?? this.growthError(error, reservation, board);
          });
        reservation.settle({ items: result.createdItems });
        const body = { board: name, item, windows: byWindow(result), draining: result.draining };
        return { replayed: result.replayed, body };
      }),
    );
  }

  /**
   * On a sharded board the shards apply their entries independently: when some shard refuses because
   * the config changed, only its entries are retried (regrouped by the reloaded config), once. A part
   * that would create more new items than the board's cap or the client's quota allows is refused
   * whole (nothing of it applied): 409 BOARD_FULL / 429 QUOTA_EXCEEDED when nothing was applied, else
   * 409 BATCH_PARTIAL naming the reason.
   */
  async incrementBatch(request: WriteRequest & { inputs: BatchInput[] }): Promise<WriteAnswer<BatchWritten>> {
    const { name, inputs, budget } = request;
    const keyed = idemRequest(request.idemKey, batchFingerprint(name, inputs));
    // The request's time is when it arrived, whatever loading the config costs.
    const nowMs = this.clock.nowMs();
    const scored = inputs.some((input) => input.score !== undefined);
    const board = await this.checkAggregate(name, scored ? 'best' : 'sum', scored ? 'a batch of scores' : 'increments');
    const shardsTouched = new Set(inputs.map((input) => board.shardOf(input.item))).size;
    return this.ledgered(board, keyed, budget, shardsTouched, (idem) => {
      // A keyed batch on one shard is checked by its script, after its replay (an old `at` still replays).
      const keyedOnOneShard = idem !== undefined && !board.sharded;
      const entries = inputs.map((input, i): BatchEntry => {
        checkAt(`items.${i}.at`, input.at, nowMs, board, keyedOnOneShard);
        checkCreatedAt(`items.${i}.createdAt`, input.createdAt, nowMs);
        checkSegments(`items.${i}.segments`, input.segments, board);
        return {
          item: input.item,
          amount: batchValue(input, i, scored),
          atMs: eventTimeMs(input.at, nowMs),
          ...(input.createdAt === undefined ? {} : { createdMs: eventTimeMs(input.createdAt, nowMs) }),
          ...(input.segments === undefined ? {} : { segments: input.segments }),
        };
      });
      return this.applyBatch(name, entries, nowMs, idem, budget).catch((error: unknown) => {
        const entry = error instanceof AtOutOfSpanError ? Number(/ (\d+)$/.exec(error.message)?.[1] ?? 1) - 1 : -1;
        if (entry < 0) throw error;
        const field = `items.${entry}.at`;
        throw atRefusal(error, atProblem(field, inputs[entry].at ?? nowMs / 1000, nowMs, board.config.windows));
      });
    });
  }

  /** Likes (undo = false) or takes a like back (undo = true: never refused, it creates nothing). */
  async like(
    request: WriteRequest & { item: string; userId: string; undo: boolean; atSec?: number; segments?: string[] },
  ): Promise<WriteAnswer<ItemWritten & { userId: string; counted: boolean }>> {
    const { name, item, userId, undo, budget, atSec, segments } = request;
    await this.checkAggregate(name, 'sum', undo ? 'unlike' : 'like');
    const fingerprint = [undo ? 'unlike' : 'like', name, item, userId, ...timeOf(atSec), ...segmentsOf(segments)];
    const keyed = idemRequest(request.idemKey, fingerprint);
    return this.cache.withBoard(name, (board) =>
      this.ledgered(board, keyed, budget, 1, async (idem) => {
        const nowMs = this.clock.nowMs();
        const problem = checkAt('at', atSec, nowMs, board, idem !== undefined);
        checkSegments('segments', segments, board);
        const reservation = reserveGrowth(budget, undo ? {} : { items: 1, likeUsers: 1 });
        const growth = { newItems: reservation.allowance('items'), newLikes: reservation.allowance('likeUsers') };
        const atMs = eventTimeMs(atSec, nowMs);
        const result = await this.store
          .like({ board, nowMs, item, userId, undo, growth, idem, atMs, segments })
          .catch((error: unknown) => {
            throw atRefusal(error, problem) ?? this.growthError(error, reservation, board);
          });
        reservation.settle({ items: result.createdItems, likeUsers: result.createdLikes });
        const written = { board: name, item, userId, counted: result.counted, windows: byWindow(result) };
        return { replayed: result.replayed, body: { ...written, draining: result.draining } };
      }),
    );
  }

  /**
   * A sum board takes increments and likes, a max / min / last board ('best') scores: the other kind is
   * 409 AGGREGATE_MISMATCH. A mismatch with the cached config is checked once more against the stored
   * one (another instance may have changed the aggregate); a match needs no check: the write's call is
   * refused if the config changed since. Answers the board as checked.
   */
  private async checkAggregate(name: string, takes: 'sum' | 'best', write: string): Promise<PreparedBoard> {
    const takesOf = (board: PreparedBoard) => ((board.config.aggregate ?? 'sum') === 'sum' ? 'sum' : 'best');
    const cached = await this.cache.get(name);
    if (takesOf(cached) === takes) return cached;
    const fresh = await this.cache.reload(name);
    if (takesOf(fresh) === takes) return fresh;
    throw new ConflictError('AGGREGATE_MISMATCH', M.aggregateMismatch(name, fresh.config.aggregate ?? 'sum', write));
  }

  private async applyBatch(
    name: string,
    entries: BatchEntry[],
    nowMs: number,
    idem: IdemRequest | undefined,
    budget: ClientBudget | undefined,
  ): Promise<WriteAnswer<BatchWritten>> {
    let pending = entries;
    const done = { applied: 0, draining: false, replayed: true };
    for (let attempt = 0; attempt < 2; attempt++) {
      const board = attempt === 0 ? await this.cache.get(name) : await this.cache.reload(name);
      const groups = groupByShard(pending, board.shards.length);
      const reservation = reserveGrowth(budget, { items: distinctItems(pending) });
      const newItems = allowancesOf(groups, reservation.allowance('items'));
      const outcome = await this.store
        .incrementBatch({ board, nowMs, groups, newItems, idem })
        .catch((error: unknown) => {
          reservation.settle();
          throw error;
        });
      reservation.settle({ items: outcome.createdItems });
      done.applied += outcome.applied;
      done.draining ||= outcome.draining;
      done.replayed &&= outcome.replayed;
      if (outcome.refused.length === 0)
        return { replayed: done.replayed, body: { board: name, count: done.applied, draining: done.draining } };
      this.throwUnlessRetryable(board, outcome, reservation, { applied: done.applied, entries: entries.length });
      pending = outcome.refused;
    }
    if (done.applied > 0)
      throw new ConflictError('BATCH_PARTIAL', M.batchPartial(name, done.applied, entries.length, pending.length));
    if (!(await this.boards.loadBoard(name))) throw new NotFoundError('BOARD_NOT_FOUND', M.boardNotFound(name));
    throw new ConflictError('CONFIG_CHANGED', M.configChanged(name));
  }

  /**
   * A batch some shards refused: only a stale or missing config is retried (the caller regroups the
   * refused entries by the reloaded config). An event time out of span, a growth refusal or any other
   * error ends the batch here, as a partial answer when something was applied.
   */
  private throwUnlessRetryable(
    board: PreparedBoard,
    outcome: BatchOutcome,
    reservation: Reservation,
    sofar: { applied: number; entries: number },
  ): void {
    const outOfSpan = outcome.errors.find((error) => error instanceof AtOutOfSpanError);
    if (outOfSpan !== undefined && sofar.applied === 0) throw outOfSpan;
    // A part over segments.max is refused like one over a growth limit: whole, the others kept.
    const limited = (error: unknown) => growthRefusalOf(error) !== undefined || isSegmentLimit(error);
    const unexpected = outcome.errors.find((error) => !isRefusal(error) && !limited(error));
    if (unexpected !== undefined) throw unexpected;
    const growth = outcome.errors.find(limited);
    if (growth === undefined) return;
    const refusal = this.growthError(growth, reservation, board);
    if (sofar.applied === 0) throw refusal;
    const { name } = board.config;
    const message = (refusal as Error).message;
    throw new ConflictError(
      'BATCH_PARTIAL',
      M.batchRefusedPartly(name, sofar.applied, sofar.entries, outcome.refused.length, message),
    );
  }

  /**
   * A keyed write on a sharded board goes through its ledger entry (request_claim.lua) on the shard its
   * key hashes to: a repeat of an answered request gets the stored body byte for byte (board-wide rank
   * included) and touches no shard, and the key used again for another request is refused (422)
   * whichever shards that request touches. Each shard's part stays retry-safe on its own, so a request
   * claimed but never answered (a failure half way) is simply applied again. An unsharded board needs
   * none of this: its one script call stores the whole answer.
   * Every answer stored counts against the client's quota of them (withAnswerBudget): one on an unsharded
   * board; on a sharded one the ledger entry and one per shard part (`parts`), all charged when the write
   * fails (the claim, and maybe some parts, were stored).
   */
  private ledgered<T>(
    board: PreparedBoard,
    keyed: IdemRequest | undefined,
    budget: ClientBudget | undefined,
    parts: number,
    write: (idem: IdemRequest | undefined) => Promise<WriteAnswer<T>>,
  ): Promise<WriteAnswer<T>> {
    if (!board.sharded) return withAnswerBudget(budget, keyed, ONE_ANSWER, write);
    const cost = { answers: 1 + parts, chargedOnError: 1 + parts };
    return withAnswerBudget(budget, keyed, cost, (idem) => this.throughLedger(board, idem, write));
  }

  private async throughLedger<T>(
    board: PreparedBoard,
    idem: IdemRequest | undefined,
    write: (idem: IdemRequest | undefined) => Promise<WriteAnswer<T>>,
  ): Promise<WriteAnswer<T>> {
    if (idem === undefined) return write(idem);
    const nowMs = this.clock.nowMs();
    const entry = await this.store.claimRequest(board, idem, nowMs);
    if (entry.state === 'answered') return { replayed: true, body: JSON.parse(entry.body) as T };
    const answer = await write(idem);
    // Lost, the stored answer only costs a repeat its byte-for-byte rank: the parts replay on their shards.
    await this.store
      .completeRequest(board, idem, nowMs, JSON.stringify(answer.body))
      .catch((error: unknown) => this.logger.warn(`storing the answer of a sharded request failed: ${String(error)}`));
    return answer;
  }

  /** A script's growth refusal as the client's error (BOARD_FULL for the board's cap); any other error as it is. */
  private growthError(error: unknown, reservation: Reservation, board: PreparedBoard): unknown {
    return growthErrorOf(
      error,
      reservation,
      (refusal: CapRefusal) =>
        new ConflictError(
          'BOARD_FULL',
          M.boardFull(board.config.name, refusal.held, refusal.cap, board.shards.length, refusal.wanted),
        ),
    );
  }
}

/** A batch entry's value: its amount, or in a batch of scores (a max / min / last board) its score; never both kinds. */
function batchValue(input: BatchInput, i: number, scored: boolean): number {
  const value = scored ? input.score : input.amount;
  if (value === undefined || (scored && input.amount !== undefined))
    throw new InvalidInputError(M.batchKinds(`items.${i}`));
  return value;
}
