import { Logger } from '@nestjs/common';
import type { WriteAnswer } from '../../common/retry-safe';
import { AnswerCost, ONE_ANSWER, withAnswerBudget } from '../../governance/answer-budget';
import type { IdemRequest } from '../../redis/idempotency';
import type { PreparedBoard } from '../core/board';
import type { WriteContext } from './write-commands';
import type { LedgerEntry } from './writes.scripts';

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
