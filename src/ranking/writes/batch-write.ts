import {
  ConflictError,
  DomainError,
  InvalidInputError,
  NotFoundError,
  RequestTooCostlyError,
} from '../../common/errors';
import type { WriteAnswer } from '../../common/retry-safe';
import { ClientBudget, Reservation, reserveGrowth } from '../../governance/growth-quotas';
import { growthRefusalOf } from '../../redis/refusals';
import { AliasMap } from '../aliases/alias-map';
import { BoardCache } from '../boards/board-cache';
import { BoardsStore } from '../boards/boards.store';
import { PreparedBoard, type ShardKeys } from '../core/board';
import { batchMetric } from '../options/metrics/metrics.option';
import { checkActor } from '../core/actor-rules';
import { checkGroup } from '../options/groups/groups.option';
import { AtOutOfSpanError, isRefusal, isSegmentLimit } from '../core/ranking.errors';
import { RANKING_MESSAGES as M } from '../core/ranking.messages';
import type { BatchEntry, BatchOutcome } from '../core/ranking.types';
import { groupByShard } from '../core/shard-math';
import { atProblem, eventTimeMs } from '../core/window-math';
import type { BatchCommand, BatchInput, BatchWritten, GuardedAttempt, WriteAttempt, WriteKind } from './write-commands';
import {
  allowancesOf,
  atRefusal,
  checkAmount,
  checkAt,
  checkCreatedAt,
  checkEntryCost,
  checkSegments,
  distinctItems,
  BoardShape,
  entryGrowthOf,
  growthError,
  tiebreakSent,
} from './write-rules';
import { batchCost, callEntries } from '../core/write-cost';
import { WritesStore } from './writes.store';

/**
 * A batch: checked whole (400 naming the first bad entry, nothing applied), then one script call per
 * shard holding any of its entries. On a sharded board the shards apply their entries independently:
 * when some shard refuses because the config changed, only its entries are run again (regrouped by the
 * reloaded config), once, each run reserving growth for what it sends and settling what it created. A
 * part that would create more new items than the board's cap or the client's quota allows is refused
 * whole (nothing of it applied): 409 BOARD_FULL / 429 QUOTA_EXCEEDED when nothing was applied, else
 * 409 BATCH_PARTIAL naming the reason. The whole batch goes by the time it arrived.
 */
export class BatchWrite implements WriteKind<BatchCommand, BatchWritten> {
  constructor(
    private readonly store: WritesStore,
    private readonly boards: BoardsStore,
    private readonly cache: BoardCache,
    /** WRITE_COST_PER_CALL: most cost units one call on a shard may weigh (write-cost.ts). */
    private readonly costPerCall: number,
    private readonly aliases: AliasMap,
  ) {}

  /**
   * The calls the batch plans, each storing its answer (charged by the pipeline before anything runs):
   * each shard's part cut as shardInCalls cuts it on `board` (write-cost.ts callEntries), each call
   * applying what it is sent. A retry whose earlier calls replay makes no more new calls than planned:
   * a call that replays stores nothing, and each new one carries as much as the planned cut from a
   * place no earlier. Only onShards' run again (a config or an alias changed meanwhile) may cut its
   * entries into more calls than planned: see docs/security.md.
   */
  calls(command: BatchCommand, board: PreparedBoard): number {
    let calls = 0;
    for (const entries of groupByShard(command.entries, board.shards.length).values())
      for (let at = 0; at < entries.length; calls++) at += callEntries(entries, at, board.config, this.costPerCall);
    return calls;
  }

  async apply(command: BatchCommand, attempt: GuardedAttempt): Promise<WriteAnswer<BatchWritten>> {
    const entries = this.check(command, attempt);
    this.checkCost(entries, attempt.board);
    keyCalls(entries, attempt.board);
    return this.onShards(command, entries, attempt).catch((error: unknown) => {
      const entry = error instanceof AtOutOfSpanError ? Number(/ (\d+)$/.exec(error.message)?.[1] ?? 1) - 1 : -1;
      if (entry < 0) throw error;
      const field = `items.${entry}.at`;
      const { nowMs, board } = attempt;
      throw atRefusal(error, atProblem(field, command.entries[entry].at ?? nowMs / 1000, nowMs, board.config.windows));
    });
  }

  /** The entries with their event times; a keyed batch whose script replays first is checked there (an old `at` still replays). */
  private check(command: BatchCommand, attempt: GuardedAttempt): BatchEntry[] {
    const { nowMs, board } = attempt;
    const leftToScript = attempt.idem !== undefined && attempt.replaysInScript;
    const scored = command.entries.some((input) => input.score !== undefined);
    return command.entries.map((input, i): BatchEntry => {
      // Only the fields an entry sent are checked and kept (most send an item and an amount).
      if (input.at !== undefined) checkAt(`items.${i}.at`, input.at, nowMs, board, leftToScript);
      if (input.createdAt !== undefined) checkCreatedAt(`items.${i}.createdAt`, input.createdAt, nowMs);
      if (input.segments !== undefined) checkSegments(`items.${i}.segments`, input.segments, board);
      if (input.actor !== undefined) checkActor(`items.${i}.actor`, input.actor, board);
      if (input.group !== undefined) checkGroup(`items.${i}.group`, input.group, board.config);
      const entry: BatchEntry = {
        item: input.item,
        amount: batchValue(input, i, scored),
        atMs: eventTimeMs(input.at, nowMs),
      };
      if (input.createdAt !== undefined) entry.createdMs = eventTimeMs(input.createdAt, nowMs);
      if (input.segments !== undefined) entry.segments = input.segments;
      if (input.actor !== undefined) entry.actor = input.actor;
      if (input.group !== undefined) entry.group = input.group;
      const tiebreak = tiebreakSent(board, input.tiebreak);
      if (scored && tiebreak !== undefined) entry.tiebreak = tiebreak;
      return entry;
    });
  }

  /**
   * Refuses (422 REQUEST_TOO_COSTLY, nothing applied) a batch whose call on some shard would weigh more
   * than the bound: a batch is atomic per shard, so it is refused rather than split.
   */
  private checkCost(entries: BatchEntry[], board: PreparedBoard): void {
    for (const entry of entries) checkEntryCost(entry, board, this.costPerCall);
    const parts = groupByShard(entries, board.shards.length).values();
    const { costliestCall, entriesWithin } = batchCost(parts, board.config, this.costPerCall);
    if (costliestCall > this.costPerCall)
      throw new RequestTooCostlyError(
        M.batchTooCostly(board.config.name, costliestCall, this.costPerCall, entriesWithin),
      );
  }

  private async onShards(
    command: BatchCommand,
    entries: BatchEntry[],
    attempt: WriteAttempt,
  ): Promise<WriteAnswer<BatchWritten>> {
    const { board: name, context } = command;
    let pending = entries;
    const done = { applied: 0, draining: false, replayed: true };
    for (let run = 0; run < 2; run++) {
      // The first run on the board the pipeline counted the calls on (the batch metric's: metricBoardOf).
      const fresh = run === 0 ? undefined : await this.cache.reload(name);
      const board = fresh === undefined ? attempt.board : fresh.metric(batchMetric(command, fresh.config));
      const { outcome, reservation } = await this.run(board, pending, attempt, context.budget);
      done.applied += outcome.applied;
      done.draining ||= outcome.draining;
      done.replayed &&= outcome.replayed;
      if (outcome.refused.length === 0)
        return { replayed: done.replayed, body: { board: name, count: done.applied, draining: done.draining } };
      const resolved = await this.resolvedAliases(board, outcome, entries);
      if (resolved === undefined)
        throwUnlessRetryable(board, outcome, reservation, { applied: done.applied, entries: entries.length });
      pending = resolved ?? outcome.refused;
    }
    return this.refuseUnapplied(name, done.applied, entries.length, pending.length);
  }

  /**
   * The refused entries with the aliases among them renamed, when a shard refused an alias this instance
   * did not know (the merge blocks it): run again, only they, so the entries other shards applied are not
   * sent twice. Each renamed entry takes a call key of its own (its place in `entries`), the request's
   * key being its old shard's. Undefined when no refused entry names an alias the map holds.
   */
  private async resolvedAliases(
    board: PreparedBoard,
    outcome: BatchOutcome,
    entries: BatchEntry[],
  ): Promise<BatchEntry[] | undefined> {
    if (!outcome.errors.some((error) => error instanceof DomainError && error.code === 'RETRACTED')) return undefined;
    const map = await this.aliases.of(board);
    if (!outcome.refused.some((entry) => map.has(entry.item))) return undefined;
    return outcome.refused.map((entry) => {
      const canonical = map.get(entry.item);
      return canonical === undefined
        ? entry
        : { ...entry, item: canonical, callKey: entry.callKey ?? entries.indexOf(entry) };
    });
  }

  /** One run of `pending` on the shards of `board`: reserved for what it may create, settled with what it did. */
  private async run(
    board: PreparedBoard,
    pending: BatchEntry[],
    attempt: WriteAttempt,
    budget: ClientBudget | undefined,
  ): Promise<{ outcome: BatchOutcome; reservation: Reservation }> {
    const groups = groupByShard(pending, board.shards.length);
    const reservation = reserveGrowth(budget, {
      items: distinctItems(pending),
      ...entryGrowthOf(pending, board.config),
    });
    const { nowMs, idem } = attempt;
    const allowances = allowancesByShard(groups, reservation, board.config);
    const outcome = await this.store
      .incrementBatch({ board, nowMs, idem, groups, ...allowances })
      .catch((error: unknown) => {
        reservation.settle();
        throw error;
      });
    const { createdItems: items, createdActorEntries: actorEntries, createdSegmentEntries: segmentEntries } = outcome;
    reservation.settle({ items, actorEntries, segmentEntries });
    return { outcome, reservation };
  }

  /** Entries still refused for a stale config after the second run: partly applied, gone, or changed again. */
  private async refuseUnapplied(name: string, applied: number, entries: number, pending: number): Promise<never> {
    if (applied > 0) throw new ConflictError('BATCH_PARTIAL', M.batchPartial(name, applied, entries, pending));
    if (!(await this.boards.loadBoard(name))) throw new NotFoundError('BOARD_NOT_FOUND', M.boardNotFound(name));
    throw new ConflictError('CONFIG_CHANGED', M.configChanged(name));
  }
}

/**
 * A batch some shards (or a shard's later calls, batch-calls.ts) refused: only a stale or missing config
 * is run again (the caller regroups the refused entries by the reloaded config). An event time out of
 * span, a growth refusal or any other refusal ends the batch here, as a partial answer when something
 * was applied; an error that is no refusal (Redis unreachable) is thrown as it is.
 */
function throwUnlessRetryable(
  board: PreparedBoard,
  outcome: BatchOutcome,
  reservation: Reservation,
  sofar: { applied: number; entries: number },
): void {
  const outOfSpan = outcome.errors.find((error) => error instanceof AtOutOfSpanError);
  if (outOfSpan !== undefined && sofar.applied === 0) throw outOfSpan;
  // A part over segments.max is refused like one over a growth limit: whole, the others kept.
  const limited = (error: unknown) => growthRefusalOf(error) !== undefined || isSegmentLimit(error);
  // A refusal after a shard's earlier calls applied (a blocked actor or item: batch-calls.ts) is a partial answer too.
  const unexpected = outcome.errors.find((error) => !isRefusal(error) && !limited(error));
  if (unexpected !== undefined && (sofar.applied === 0 || !(unexpected instanceof DomainError))) throw unexpected;
  const refused = unexpected ?? outcome.errors.find(limited);
  if (refused === undefined) return;
  const refusal = unexpected ?? growthError(refused, reservation, board);
  if (sofar.applied === 0) throw refusal;
  const message = (refusal as Error).message;
  throw new ConflictError(
    'BATCH_PARTIAL',
    M.batchRefusedPartly(board.config.name, sofar.applied, sofar.entries, outcome.refused.length, message),
  );
}

/** Each shard's share of the reservation, of each kind its entries can create. */
function allowancesByShard(groups: Map<number, BatchEntry[]>, reservation: Reservation, shape: BoardShape) {
  const share = (kind: 'actorEntries' | 'segmentEntries') =>
    allowancesOf(groups, reservation.allowance(kind), (entries) => entryGrowthOf(entries, shape)[kind]);
  return {
    newItems: allowancesOf(groups, reservation.allowance('items')),
    newActorEntries: share('actorEntries'),
    newSegmentEntries: share('segmentEntries'),
  };
}

/**
 * Marks each entry but the first of its shard with its place in the request: a shard's part may go in
 * several calls (batch-calls.ts), each keeping its answer under the key and its first entry's place.
 */
function keyCalls(entries: BatchEntry[], board: PreparedBoard): void {
  const opened = new Set<ShardKeys>();
  entries.forEach((entry, i) => {
    const shard = board.shardOf(entry.item);
    if (opened.has(shard)) entry.callKey = i;
    else opened.add(shard);
  });
}

/** A batch entry's value: its amount, or in a batch of scores (a max / min / last board) its score; never both kinds. */
function batchValue(input: BatchInput, i: number, scored: boolean): number {
  const value = scored ? input.score : input.amount;
  if (value === undefined || (scored && input.amount !== undefined))
    throw new InvalidInputError(M.batchKinds(`items.${i}`));
  if (!scored) checkAmount(`items.${i}.amount`, value);
  return value;
}
