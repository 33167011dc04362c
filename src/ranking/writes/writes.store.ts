import { Injectable, Logger } from '@nestjs/common';
import { Coalescer } from '../../common/coalescer';
import { ConflictError } from '../../common/errors';
import { IdemCall, IdemCalls, IdemRequest } from '../../redis/idempotency';
import { RedisService } from '../../redis/redis.service';
import { RedisFunctions } from '../../redis/redis-functions';
import { PreparedBoard, ShardKeys } from '../core/board';
import { BoardGoneError, guard, refusalOf, StaleConfigError } from '../core/ranking.errors';
import { RankingKeys } from '../core/ranking.keys';
import { MAX_COALESCED_INCREMENTS, WRITE_RANK_SHARD_DRAINS } from '../core/ranking.limits';
import { coalescedWork } from '../core/write-cost';
import { RANKING_MESSAGES as M } from '../core/ranking.messages';
import { eventTimeMs } from '../core/window-math';
import type { BatchEntry, BatchOutcome, WriteOutcome } from '../core/ranking.types';
import { boardCall, WriteCall } from '../core/script-call';
import { HistoryStore } from '../history/history.store';
import { ShardsStore } from '../shards/shards.store';
import type { IncrementCommand, LikeChange, WriteAttempt } from './write-commands';
import { CoalescedIncrement, IncrementAllowances, LedgerCall, LedgerEntry, WritesFunctions } from './writes.functions';
import type { ScoreRecord } from '../scores/scores.functions';
import { ScoresStore } from '../scores/scores.store';
import { RankingSettings } from '../core/ranking.settings';
import { isSegmentLimit, SegmentClaims } from './segment-claims';
import { isTakeBackPending, LikeTakeBacks } from './like-take-backs';
import { CoalescingKeys } from './coalescing-keys';
import { tiebreakSent } from './write-rules';
import { batchOutcomeOf, shardsInCalls } from './batch-calls';
import { applyInCalls, type CoalescedAnswer, type IncrementWritten, type StandingsWritten } from './write-records';
import { tiebreakMarkOrder, tiebreakOfMark } from '../options/tiebreak/tiebreak.option';

/** A batch's checked entries grouped by shard, each shard's growth allowances (UNLIMITED: no quota). */
export interface ShardedBatch extends WriteAttempt {
  groups: Map<number, BatchEntry[]>;
  newItems: Map<number, number>;
  newActorEntries: Map<number, number>;
  newSegmentEntries: Map<number, number>;
}

/** An outcome at once when nothing more is asked of Redis, else its promise. */
type Outcome = WriteOutcome | Promise<WriteOutcome>;

/** A sharded increment's outcome with the actor and segment entries its reply says it created. */
function withCreated(outcome: WriteOutcome, created: IncrementWritten['created']): WriteOutcome {
  return { ...outcome, createdActorEntries: created.actor_entries, createdSegmentEntries: created.segment_entries };
}

/** An item increment waiting to share a script call with others to the same shard. */
interface PendingIncrement {
  board: PreparedBoard;
  shard: ShardKeys;
  nowMs: number;
  increment: CoalescedIncrement;
}

/** The writes: increments (coalesced per shard), batches, likes, the ledger of keyed sharded requests. */
@Injectable()
export class WritesStore {
  private readonly keys: RankingKeys;
  private readonly logger = new Logger('RankingWrites');
  private readonly budgetFields: number;
  /** WRITE_COST_PER_CALL: the most work (entryWork) a batch's call on a shard carries. */
  private readonly workPerCall: number;
  private readonly idemCalls: IdemCalls;
  private readonly segmentClaims: SegmentClaims;
  /** The take-backs of likes stored past the write bound: the scheduler's visit sweeps those left (ExpiryService). */
  readonly takeBacks: LikeTakeBacks;
  /** Undefined when WRITE_COALESCE_MS is 0: each increment is its own call. */
  private readonly increments?: Coalescer<PendingIncrement, IncrementWritten>;
  private readonly fns: WritesFunctions['functions'];
  private readonly coalescingKeys = new CoalescingKeys();

  constructor(
    private readonly redis: RedisService,
    private readonly functions: RedisFunctions,
    part: WritesFunctions,
    settings: RankingSettings,
    private readonly shards: ShardsStore,
    private readonly history: HistoryStore,
    private readonly scores: ScoresStore,
  ) {
    this.keys = new RankingKeys(redis.prefix);
    this.budgetFields = settings.expireChunk;
    this.workPerCall = settings.writeCostPerCall;
    if (settings.writeCoalesceMs > 0)
      this.increments = new Coalescer(
        // A call weighs the work its increments do together inside Redis (write-cost.ts coalescedWork).
        { delayMs: settings.writeCoalesceMs, maxBatch: MAX_COALESCED_INCREMENTS, maxWeight: settings.writeCostPerCall },
        (_, pending) => this.sendIncrements(pending),
      );
    this.idemCalls = IdemCalls.for(settings.idempotencyRetentionMs, redis.client);
    this.fns = part.functions;
    this.segmentClaims = new SegmentClaims(functions, this.fns);
    this.takeBacks = new LikeTakeBacks(redis, functions, this.fns, settings, (board, due) => this.indexDue(board, due));
    functions.define([part.library]);
  }

  /**
   * An increment on its item's shard (coalesced with others when WRITE_COALESCE_MS > 0); `allowances` its
   * growth's. Promise callbacks, not async frames: every increment passes here.
   */
  increment(
    command: IncrementCommand,
    attempt: WriteAttempt & { allowances: IncrementAllowances },
  ): Promise<WriteOutcome> {
    const apply = () =>
      this.sendIncrement(command, attempt, attempt.allowances).then(
        (reply) => this.outcomeOf(attempt, reply, command),
        (error: unknown) => {
          throw refusalOf(error);
        },
      );
    if (!command.segments?.length) return apply();
    return this.segmentClaims.claim(attempt.board, command.segments, attempt.nowMs).then(apply);
  }

  /** An increment naming no segment sent on its item's shard: the reply, or Redis's error (refusalOf words it). */
  sendIncrement(
    command: IncrementCommand,
    attempt: WriteAttempt,
    allowances: IncrementAllowances,
  ): Promise<IncrementWritten> {
    const { board, nowMs, idem } = attempt;
    const shard = board.shardOf(command.item);
    const increment = coalesced(command, nowMs, allowances, this.idemCalls.of(idem));
    return this.increments
      ? this.increments.submit(
          this.coalescingKeys.of(board, shard, nowMs),
          { board, shard, nowMs, increment },
          coalescedWork(command, board.config),
        )
      : this.functions.call(this.fns.increment, { ...this.write(board, shard, nowMs, idem), ...increment });
  }

  /** An increment's outcome from its reply: at once on an unsharded board whose due time stays. */
  outcomeOf(attempt: WriteAttempt, reply: IncrementWritten, command: IncrementCommand): Outcome {
    const dueMs = reply.created.due_ms;
    if (dueMs > 0) return this.incrementedOnceDue(dueMs, attempt, reply, command);
    return this.incremented(attempt.board, attempt.board.shardOf(command.item), attempt.nowMs, reply, command);
  }

  /** outcomeOf's rare wait, apart: its closure made every call of outcomeOf allocate the context it holds. */
  private incrementedOnceDue(dueMs: number, attempt: WriteAttempt, reply: IncrementWritten, command: IncrementCommand) {
    const { board, nowMs } = attempt;
    const shard = board.shardOf(command.item);
    return this.indexDue(board, dueMs).then(() => this.incremented(board, shard, nowMs, reply, command));
  }

  /** An applied increment's outcome: an unsharded board's ranks are at hand, built into it at once. */
  private incremented(
    board: PreparedBoard,
    shard: ShardKeys,
    nowMs: number,
    reply: IncrementWritten,
    command: IncrementCommand,
  ): Outcome {
    if (!board.sharded || reply.context !== board.windowNames) {
      const { replayed, windowNames, createdItems } = answeredOf(reply, board);
      const { draining, standings } = reply.value;
      const { actor_entries: createdActorEntries, segment_entries: createdSegmentEntries } = reply.created;
      return { replayed, windowNames, createdItems, draining, standings, createdActorEntries, createdSegmentEntries };
    }
    return this.rankedOnOtherShards(reply, [board, shard, nowMs, reply, command.item]);
  }

  /** incremented on a sharded board, apart: its closure made every call of incremented allocate the context it holds. */
  private rankedOnOtherShards(reply: IncrementWritten, on: Parameters<WritesStore['rankOnOtherShards']>) {
    return this.rankOnOtherShards(...on).then((outcome) => withCreated(outcome, reply.created));
  }

  /** A score of a max / min / last board: one call on the item's shard, ranked over the shards like an increment. */
  async score(record: ScoreRecord, attempt: WriteAttempt): Promise<WriteOutcome> {
    const { board, nowMs, idem } = attempt;
    const shard = board.shardOf(record.item);
    // Refused (400) on a board without a tiebreak, before anything is applied.
    const tiebreak = tiebreakSent(board, record.tiebreak);
    const reply = await this.scores.record({ ...record, tiebreak, ...this.write(board, shard, nowMs, idem) });
    await this.indexDue(board, reply.created.due_ms);
    const outcome = await this.rankOverShards(board, shard, nowMs, reply, record.item);
    return withTiebreaks(board, outcome, reply.value.marks);
  }

  /**
   * One script call per shard holding any of the entries, in parallel, a shard's part cut into calls of
   * at most WRITE_COST_PER_CALL of work (callEntries) sent one after the other, each atomic (see
   * batch-calls.ts); the shards of a sharded board apply independently (see docs/scaling.md). Answers
   * what was applied, and the entries of shards that failed with their errors.
   */
  async incrementBatch(batch: ShardedBatch): Promise<BatchOutcome> {
    const { board, nowMs } = batch;
    const named = [...batch.groups.values()].flat().flatMap((entry) => entry.segments ?? []);
    if (named.length > 0) await this.segmentClaims.claim(board, named, nowMs);
    const call = (shard: number) => boardCall(board, board.shards[shard], nowMs, this.budgetFields);
    const shards = await shardsInCalls(batch, this.workPerCall, this.idemCalls.of(batch.idem), (shard, calls) =>
      guard(this.functions.call(this.fns.incrementBatch, { ...call(shard), ...calls })),
    );
    const { outcome, dueMs } = batchOutcomeOf(shards);
    await this.indexDue(board, dueMs);
    return outcome;
  }

  /**
   * A like or an unlike on its item's shard; `growth`: the new items and likes it may create. An unlike
   * takes the like out of at most LikeTakeBacks.segmentsPerCall of its segments per call and sends the next calls
   * here (a like stored past the write bound); a like refused while its take-back is unfinished (an
   * instance stopped midway) finishes it first, then is sent again.
   */
  async like(
    command: LikeChange,
    attempt: WriteAttempt & { growth: { newItems: number; newLikes: number } },
  ): Promise<WriteOutcome & { counted: boolean; createdLikes: number }> {
    const { board, nowMs, idem, growth } = attempt;
    const { item, userId } = command;
    const shard = board.shardOf(item);
    const undo = command.kind === 'unlike';
    const atMs = eventTimeMs(command.kind === 'like' ? command.atSec : undefined, nowMs);
    const { segments, refused } = await this.likeSegments(board, command, nowMs);
    const takeBackSegments = this.takeBacks.segmentsPerCall(board, userId);
    // A like whose names the registry refused still runs when it repeats an earlier like (it counts
    // nowhere): with no new segment allowed on its shard, like.lua refuses only a like that counts.
    const send = () =>
      guard(
        this.functions.call(this.fns.like, {
          ...this.write(board, shard, nowMs, idem),
          ...{ item, userId, undo, ...growth, atMs, segments, takeBackSegments },
          ...(refused ? { segmentsMax: 0 } : {}),
        }),
      ).catch((error: unknown) => {
        throw refused && isSegmentLimit(error) ? refused : error;
      });
    const reply = await send().catch(async (error: unknown) => {
      if (undo || !isTakeBackPending(error)) throw error;
      await this.takeBacks.finish(board, item, userId, nowMs);
      return send();
    });
    const { take_back_left: left, due_ms: dueMs } = reply.created;
    // A take-back left makes the board due now (the sweep finishes it should this instance stop); a
    // replayed answer does not say what is left: one more call finds out (and finishes it).
    await this.indexDue(board, left > 0 ? nowMs : dueMs);
    if (undo && (left > 0 || reply.replayed)) await this.takeBacks.finish(board, item, userId, nowMs);
    return {
      ...(await this.rankOverShards(board, shard, nowMs, reply, item)),
      counted: reply.value.counted,
      createdLikes: reply.created.likes,
    };
  }

  /** A like's segments and, when the board's registry refuses one of them, that refusal. */
  private async likeSegments(board: PreparedBoard, command: LikeChange, nowMs: number) {
    // An unlike names none: it takes the like out of the segments it was counted in.
    const segments = command.kind === 'like' ? command.segments : undefined;
    const refused = segments?.length ? await this.segmentClaims.claimOrRefusal(board, segments, nowMs) : undefined;
    return { segments, refused };
  }

  /** Claims (or reads) the ledger entry of a keyed request on a sharded board: see request_claim.lua. */
  claimRequest(board: PreparedBoard, idem: IdemRequest, nowMs: number): Promise<LedgerEntry> {
    return this.functions.call(this.fns.requestClaim, this.ledger(board, idem, nowMs));
  }

  /** Stores the whole answer of a keyed request on a sharded board in its ledger entry. */
  async completeRequest(board: PreparedBoard, idem: IdemRequest, nowMs: number, body: string): Promise<void> {
    await this.functions.call(this.fns.requestComplete, { ...this.ledger(board, idem, nowMs), body });
  }

  /** The ledger entry of a request lives on the shard its key hashes to: ledgers spread like items. */
  private ledger(board: PreparedBoard, idem: IdemRequest, nowMs: number): LedgerCall {
    return { ledger: board.shardOf(idem.key), nowMs, idem: this.idemCalls.of(idem) };
  }

  /**
   * Increments of one shard and config version that arrived together within one second: one call of
   * increment.lua applying them in order (`increments`; `increment` for a lone one). Slots and expiry go
   * by the second, so each lands where it would have alone at its own arrival; each gets its own answer
   * or refusal. A call past its work leaves its last requests to the next (increment.lua's WORK_BUDGET).
   */
  private async sendIncrements(pending: PendingIncrement[]): Promise<CoalescedAnswer[]> {
    const call = callOf(pending, this.budgetFields);
    if (pending.length === 1)
      return [await this.functions.call(this.fns.increment, { ...call, ...pending[0].increment })];
    const send = (requests: CoalescedIncrement[]) => this.functions.call(this.fns.increments, { ...call, requests });
    return applyInCalls(pending.map(incrementOf), send);
  }

  /**
   * Adds the items scoring above each window's score on the other shards to ranks computed on the
   * item's own shard, draining at most WRITE_RANK_SHARD_DRAINS other shards first (the rest counted as
   * they stand: the answer is then draining). The write has been applied by then, so a config change racing this read must
   * not reach the caller's retry (which would apply the write again): it answers a 409 saying so.
   */
  private rankOverShards(
    board: PreparedBoard,
    home: ShardKeys,
    nowMs: number,
    reply: StandingsWritten,
    item: string,
  ): WriteOutcome | Promise<WriteOutcome> {
    const { draining, standings: own } = reply.value;
    // A replay whose windows have changed since is answered exactly as stored; an unsharded board's
    // ranks are its shard's, answered without a promise.
    if (!board.sharded || reply.context !== board.windowNames)
      return { ...answeredOf(reply, board), draining, standings: own };
    return this.rankOnOtherShards(board, home, nowMs, reply, item);
  }

  private async rankOnOtherShards(
    board: PreparedBoard,
    home: ShardKeys,
    nowMs: number,
    reply: StandingsWritten,
    item: string,
  ): Promise<WriteOutcome> {
    const { draining, standings: own, marks } = reply.value;
    try {
      const { windows } = board.config;
      const scores = own.map((s) => s.score);
      const drainShards = WRITE_RANK_SHARD_DRAINS;
      const [others, previous] = await Promise.all([
        this.shards.countAbove({ board, except: home, windows, nowMs, scores, marks, ranked: false, drainShards }),
        Promise.all(windows.map((window) => this.history.previousRanks(board, window, nowMs))),
      ]);
      return {
        ...answeredOf(reply, board),
        draining: draining || others.draining,
        standings: own.map((s, w) => ({
          score: s.score,
          rank: s.rank === null ? null : s.rank + others.above[w],
          previousRank: previous[w].get(item) ?? null,
        })),
      };
    } catch (error) {
      if (!(error instanceof StaleConfigError || error instanceof BoardGoneError)) throw error;
      throw new ConflictError('WRITE_APPLIED_RANK_UNKNOWN', M.writeAppliedRankUnknown(board.config.name));
    }
  }

  /**
   * A write created a slot that is now its shard's earliest to expire (`dueMs` > 0): the board's due
   * entry moves that early (ZADD LT never delays it). A single-key command on the index's own tag,
   * since no script may touch a board's keys and the index together on a Cluster. A failure only
   * delays the scheduler's visit to this board until the sweep (reads expire lazily anyway), so the
   * applied write is still answered.
   */
  private async indexDue(board: PreparedBoard, dueMs: number): Promise<void> {
    if (dueMs <= 0) return;
    await this.redis
      .timed(this.redis.client.zadd(this.keys.dueIndex(), 'LT', dueMs, board.config.name))
      .catch((error: unknown) =>
        this.logger.warn(`due index not updated for "${board.config.name}": ${String(error)}`),
      );
  }

  private write(board: PreparedBoard, shard: ShardKeys, nowMs: number, idem: IdemRequest | undefined): WriteCall {
    return { ...boardCall(board, shard, nowMs, this.budgetFields), idem: this.idemCalls.of(idem) };
  }
}

const incrementOf = (pending: PendingIncrement) => pending.increment;

/** The call of increments that arrived together: their board's shard, at the latest one's time. */
function callOf(pending: PendingIncrement[], budgetFields: number) {
  const { board, shard } = pending[0];
  return boardCall(board, shard, Math.max(...pending.map((p) => p.nowMs)), budgetFields);
}

/** An increment command as one request of an increment.lua call: event and creation times in unix ms. */
function coalesced(
  command: IncrementCommand,
  nowMs: number,
  allowances: IncrementAllowances,
  idem: IdemCall | undefined,
): CoalescedIncrement {
  const { item, amount, atSec, createdAtSec, segments, actor, group } = command;
  const { newItems, newActorEntries, newSegmentEntries } = allowances;
  const createdMs = createdAtSec === undefined ? undefined : eventTimeMs(createdAtSec, nowMs);
  const atMs = eventTimeMs(atSec, nowMs);
  return { item, amount, idem, newItems, newActorEntries, newSegmentEntries, atMs, createdMs, segments, actor, group };
}

/** What a write's reply says of the write itself, whichever shards rank it. */
function answeredOf(
  reply: StandingsWritten,
  board: PreparedBoard,
): Pick<WriteOutcome, 'replayed' | 'windowNames' | 'createdItems'> {
  // The board's own windows (all but a replay stored before they changed) are split once, on the board.
  const windowNames = reply.context === board.windowNames ? board.windowNameList : reply.context.split(',');
  return { replayed: reply.replayed, windowNames, createdItems: reply.created.items };
}

/** A score's standings, on a board with a tiebreak, each with the tiebreak its window holds (its mark's). */
function withTiebreaks(board: PreparedBoard, outcome: WriteOutcome, marks: string[] | undefined): WriteOutcome {
  const order = tiebreakMarkOrder(board.config);
  if (order === undefined || marks === undefined) return outcome;
  const standings = outcome.standings.map((standing, w) => {
    const tiebreak = standing.rank === null ? undefined : tiebreakOfMark(order, marks[w]);
    return tiebreak === undefined ? standing : { ...standing, tiebreak };
  });
  return { ...outcome, standings };
}
