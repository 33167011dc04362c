import { Injectable, Logger } from '@nestjs/common';
import { Clock } from '../../common/clock';
import type { WriteAnswer } from '../../common/retry-safe';
import { AnswerCost, ONE_ANSWER, withAnswerBudget } from '../../governance/answer-budget';
import type { IdemRequest } from '../../redis/idempotency';
import { AliasMap } from '../aliases/alias-map';
import { BoardCache } from '../boards/board-cache';
import { BoardsStore } from '../boards/boards.store';
import type { PreparedBoard } from '../core/board';
import { RankingSettings } from '../core/ranking.settings';
import { metricBoardOf } from '../options/metrics/metrics.option';
import { BatchWrite } from './batch-write';
import { IncrementWrite, LikeWrite, ScoreWrite } from './item-writes';
import type {
  BatchCommand,
  BatchWritten,
  IncrementCommand,
  ItemWritten,
  LikeChange,
  LikeWritten,
  ScoreCommand,
  WriteCommand,
  WriteContext,
  WriteKind,
} from './write-commands';
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
 *                build the answer (ItemWrite, item-writes.ts, for increments, likes and unlikes; BatchWrite: batches)
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
    this.batchWrite = new BatchWrite(store, boards, cache, settings.writeCostPerCall, aliases);
    this.targets = new WriteTargets(cache);
  }

  increment(command: IncrementCommand): Promise<WriteAnswer<ItemWritten>> {
    const cached = this.plainTarget(command);
    if (cached === undefined) return this.run(command, this.incrementWrite);
    let board: PreparedBoard;
    try {
      board = metricBoardOf(command, cached);
    } catch (error) {
      return this.recoverPlain(command, cached, error);
    }
    const attempt = { board, nowMs: command.context.nowMs, idem: undefined, replaysInScript: true };
    return this.incrementWrite.applyPlain(command, attempt, { recovery: this, cached });
  }

  /**
   * The cached board of a plain increment (most are: no Idempotency-Key, no key of the service's own
   * to charge, no segment, on a board of one shard this instance read no alias map of, that takes
   * increments), else undefined. Such an increment is run by IncrementWrite.applyPlain in one promise
   * step: run's steps would take it through no strategy (no key), alias (none known) or check (none
   * refused), each a promise of its own.
   */
  private plainTarget(command: IncrementCommand): PreparedBoard | undefined {
    const { idem, budget } = command.context;
    // On a Cluster a write without a key is charged its own key's answer (withAnswerBudget): run's steps.
    if (idem !== undefined || budget?.keylessAnswerShare || command.segments?.length) return undefined;
    const cached = this.cache.cached(command.board);
    if (cached === undefined || cached.sharded || this.aliases.knows(cached)) return undefined;
    return this.targets.takes(cached, command) ? cached : undefined;
  }

  /**
   * A plain increment's failure, taken where run's outer steps take one: run again resolved when the
   * item's shard refused it as an alias, then on the stored config when a script refused the cached one.
   */
  recoverPlain(command: IncrementCommand, cached: PreparedBoard, error: unknown): Promise<WriteAnswer<ItemWritten>> {
    const kind = this.incrementWrite;
    let attempts = 1;
    const onBoard = (board: PreparedBoard) =>
      this.aliases.resolving(board, command, (named) => this.onBoard(named, kind, board, attempts++));
    return this.aliases
      .runRetracted(error, cached, command, (named) => this.onBoard(named, kind, cached, attempts++))
      .catch((failure: unknown) => this.cache.retryStored(command.board, failure, onBoard));
  }

  /** A score on a max / min / last board (409 AGGREGATE_MISMATCH on a sum board). */
  score(command: ScoreCommand): Promise<WriteAnswer<ItemWritten>> {
    return this.run(command, this.scoreWrite);
  }

  /** See BatchWrite: on a sharded board each shard applies its part on its own. */
  incrementBatch(command: BatchCommand): Promise<WriteAnswer<BatchWritten>> {
    return this.run(command, this.batchWrite);
  }

  like(command: LikeChange): Promise<WriteAnswer<LikeWritten>> {
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
    const guarded = { board, nowMs, context: command.context, calls: kind.calls(command, board) };
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

/** A keyed write as a strategy sees it: the board it goes to and how many script calls it plans. */
export interface GuardedWrite {
  board: PreparedBoard;
  nowMs: number;
  context: WriteContext;
  /**
   * The script calls the write plans, each storing its answer: one for an item write, one per call of
   * each shard's part for a batch (BatchWrite.calls).
   */
  calls: number;
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
 * One shard: each script call checks the key, applies and stores its answer atomically, so it needs
 * nothing around it. An item write is one call: one answer stored, none when the script fails. A batch
 * whose work takes several calls stores an answer per call; when one fails, those before it stored
 * theirs (at most all calls but the failed one).
 */
export class InScriptIdempotency implements IdempotencyStrategy {
  readonly name = 'in-script';
  readonly replaysInScript = true;

  run<T>(write: GuardedWrite, apply: KeyedApply<T>): Promise<WriteAnswer<T>> {
    const { calls } = write;
    const cost: AnswerCost = calls === 1 ? ONE_ANSWER : { answers: calls, chargedOnError: calls - 1 };
    return withAnswerBudget(write.context.budget, write.context.idem, cost, apply);
  }
}

/**
 * Sharded boards: the request's ledger entry (request_claim.lua) on the shard its key hashes to. A
 * repeat of an answered request gets the stored body byte for byte (board-wide rank included) and
 * touches no shard; the key used again for another request is refused whichever shards that request
 * touches. Each shard's part stays retry-safe on its own (the key goes with it), so a request claimed
 * but never answered (a failure half way) is simply applied again. Answers stored: the ledger entry and
 * one per call of each part, all charged when the write fails (the claim, and maybe some calls, were stored).
 */
export class LedgerIdempotency implements IdempotencyStrategy {
  readonly name = 'ledger';
  readonly replaysInScript = false;
  private readonly logger = new Logger('Ranking');

  constructor(private readonly ledger: RequestLedger) {}

  run<T>(write: GuardedWrite, apply: KeyedApply<T>): Promise<WriteAnswer<T>> {
    // A write without a key has no ledger entry; on a Cluster its calls still store their answers.
    const answers = (write.context.idem === undefined ? 0 : 1) + write.calls;
    const cost: AnswerCost = { answers, chargedOnError: answers };
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
