import { Injectable } from '@nestjs/common';
import { Clock } from '../common/clock';
import { WriteAnswer } from '../common/retry-safe';
import { InvalidInputError, NotFoundError } from '../common/errors';
import { capacityReached, ClientBudget, growthErrorOf, Reservation, reserveGrowth } from '../governance/growth-quotas';
import { growthRefusalOf } from '../redis/refusals';
import { STATS_MESSAGES as M } from './stats.messages';
import { isName, NAME_RULE } from '../common/names';
import { Batch, IndexEntry, RecordCall, StatsStore, WriteResult } from './stats.store';
import { IdemRequest, Idempotent, IdempotentAnswerUnfundedError, idemRequest } from '../redis/idempotency';
import { ONE_ANSWER, withAnswerBudget } from '../governance/answer-budget';
import { bucketField, hourStartOf, HOUR_SEC, isRecordableValue, quantiles, sampleStddev } from './stats-math';
import { CONTEXT_RULE, indexMember, isContext } from './stats-names';
import { MAX_ABS_VALUE, SLOWEST_KEPT_CONTEXTS } from './stats.limits';

export type HourName = 'current' | 'previous';

export interface RecordResult {
  context: string;
  type: string;
  /** Start of the hour the value went into (unix s). */
  hourStart: number;
  /** False only when the value was older than every kept hour (a recorder clock over an hour behind). */
  recorded: boolean;
  count: number;
  sum: number;
  sumsq: number;
}

export interface StatsView {
  context: string;
  type: string;
  hourStart: number;
  count: number;
  sum: number;
  sumsq: number;
  min: number;
  max: number;
  average: number;
  /** Sample standard deviation; null below two samples. */
  stddev: number | null;
  p50: number | null;
  p90: number | null;
  p99: number | null;
}

/** What a flush could not write: batches to retry, and the error of a slowest-list update that failed. */
export interface FlushResult {
  failed: Batch[];
  slowestError?: unknown;
}

/** The access-time type. */
export const ACCESS_TIME = 'AccessTime';
/** Types the service records itself: a client may read them, never write them (it would skew the slowest list). */
export const RESERVED_TYPES: ReadonlySet<string> = new Set([ACCESS_TIME]);
/** Most index entries remembered in process as already written (the cache is cleared when full). */
const INDEX_CACHE_LIMIT = 10_000;

/**
 * Records and reads hourly statistics per context/type, and flushes batches aggregated in process.
 * Every write names its hour (from the Clock); the scripts roll current -> previous atomically.
 */
@Injectable()
export class StatsService {
  /** index member -> latest hour this process wrote to the index for it. */
  private readonly indexed = new Map<string, number>();
  /**
   * "<hourStart> <context>" -> an average not yet in that hour's slowest list (its update failed): sent
   * again with the next flush while its hour lasts.
   */
  private readonly unsavedSlowest = new Map<string, { hourStart: number; context: string; average: number }>();

  constructor(
    private readonly store: StatsStore,
    private readonly clock: Clock,
  ) {}

  /**
   * `budget`: the client's quotas on growth (none: the value may start a new pair). A pair is new when
   * the index lists it neither this hour nor the last; the index admits it within MAX_STATS_PAIRS and
   * the quota, before anything is recorded.
   */
  async record(
    context: string,
    type: string,
    value: unknown,
    idemKey?: string,
    budget?: ClientBudget,
  ): Promise<WriteAnswer<RecordResult>> {
    checkNames(context, type);
    if (RESERVED_TYPES.has(type)) throw new InvalidInputError(M.reservedType(type));
    if (!isRecordableValue(value)) throw new InvalidInputError(M.badValue(MAX_ABS_VALUE));
    const nowMs = this.clock.nowMs();
    const hourStart = hourStartOf(nowMs);
    const keyed = idemRequest(idemKey, ['stats', context, type, value]);
    const call: RecordCall = { context, type, nowMs, hourStart, value, histogramField: bucketField(value) };
    return withAnswerBudget(budget, keyed, ONE_ANSWER, async (idem) => {
      // Without budget for a new answer only a stored one is answered (none: refused), nothing indexed.
      if (idem?.mayStore === false) {
        const stored = await this.store.storedAnswer(call, idem);
        if (!stored) throw new IdempotentAnswerUnfundedError();
        return this.answerOf(context, type, stored);
      }
      return this.indexAndRecord(call, idem, budget);
    });
  }

  private async indexAndRecord(
    call: RecordCall,
    idem: IdemRequest | undefined,
    budget: ClientBudget | undefined,
  ): Promise<WriteAnswer<RecordResult>> {
    const { context, type, hourStart } = call;
    // The index entry comes first, so recorded stats are never missing from the list.
    const [entry] = this.unindexed([{ context, type, hourStart }]);
    if (entry) {
      const reservation = reserveGrowth(budget, { statsPairs: 1 });
      try {
        const created = await this.store.admitToIndex(entry, hourStart - HOUR_SEC, reservation.allowance('statsPairs'));
        reservation.settle({ statsPairs: created ? 1 : 0 });
      } catch (error) {
        const refused = this.growthError(error, reservation);
        // A refused write may repeat one recorded long ago (its pair gone since): it gets that answer.
        const stored = idem && growthRefusalOf(error) ? await this.store.storedAnswer(call, idem) : undefined;
        if (!stored) throw refused;
        return this.answerOf(context, type, stored);
      }
      this.markIndexed([entry]);
    }
    return this.answerOf(context, type, await this.store.record(call, idem));
  }

  private answerOf(context: string, type: string, written: Idempotent<WriteResult>): WriteAnswer<RecordResult> {
    const result = written.value;
    return {
      replayed: written.replayed,
      body: {
        context,
        type,
        hourStart: Number(written.context),
        recorded: result.status !== 'dropped',
        count: result.count,
        sum: result.sum,
        sumsq: result.sumsq,
      },
    };
  }

  private growthError(error: unknown, reservation: Reservation): unknown {
    return growthErrorOf(
      error,
      reservation,
      capacityReached('stats context/type pairs recorded this or last hour', 'MAX_STATS_PAIRS'),
    );
  }

  /** One pruner pass: removes index entries older than the last hour in steps of `batch`, at most `maxSteps`. */
  async pruneIndex(batch: number, maxSteps: number): Promise<{ removed: number; steps: number }> {
    const oldestLiveHour = hourStartOf(this.clock.nowMs()) - HOUR_SEC;
    let removed = 0;
    for (let steps = 1; steps <= maxSteps; steps++) {
      const step = await this.store.pruneIndex(oldestLiveHour, batch);
      removed += step;
      if (step < batch) return { removed, steps };
    }
    return { removed, steps: maxSteps };
  }

  async read(context: string, type: string, hour: HourName = 'current'): Promise<StatsView> {
    checkNames(context, type);
    const currentHour = hourStartOf(this.clock.nowMs());
    const wanted = hour === 'current' ? currentHour : currentHour - HOUR_SEC;
    // A stored "current" hash whose hour has passed (no write since) is read as the previous hour.
    const stored = (await this.store.read(context, type)).find((h) => h.hourStart === wanted);
    if (!stored) throw new NotFoundError('STATS_NOT_FOUND', M.nothingRecorded(context, type, hour));
    const m = stored.moments;
    const [p50, p90, p99] = quantiles(stored.histogram, [0.5, 0.9, 0.99], { min: m.min, max: m.max });
    return {
      context,
      type,
      hourStart: stored.hourStart,
      count: m.count,
      sum: m.sum,
      sumsq: m.sumsq,
      min: m.min,
      max: m.max,
      average: m.sum / m.count,
      stddev: sampleStddev(m),
      p50,
      p90,
      p99,
    };
  }

  /**
   * Writes batches aggregated in process (one script call each, pipelined), then sets the average of
   * every access-time context whose batch landed in the current hour in the slowest list.
   * Answers the batches that failed, for the caller to retry. A failed slowest-list update is answered
   * apart: the batches are written by then and must not be merged again; the list is derived from them,
   * so its entries are kept here and sent again with the next flush.
   */
  async flush(batches: Batch[]): Promise<FlushResult> {
    if (batches.length === 0) return { failed: [] };
    const nowMs = this.clock.nowMs();
    const entries = this.unindexed(batches);
    const results = await this.store.merge(nowMs, batches, entries);
    const failed = batches.filter((_, i) => results[i] instanceof Error);
    if (failed.length === 0) this.markIndexed(entries);
    batches.forEach((batch, i) => {
      const result = results[i];
      if (result instanceof Error || result.status !== 'current' || batch.type !== ACCESS_TIME || result.count === 0)
        return;
      const entry = { hourStart: batch.hourStart, context: batch.context, average: result.sum / result.count };
      this.unsavedSlowest.set(`${batch.hourStart} ${batch.context}`, entry);
    });
    return { failed, slowestError: await this.saveSlowest(nowMs) };
  }

  /**
   * Sends every unsaved slowest-list entry of the current hour (older ones are dropped: nobody reads
   * them); answers the error when that fails (the entries stay).
   */
  private async saveSlowest(nowMs: number): Promise<unknown> {
    const currentHour = hourStartOf(nowMs);
    const sent: Array<{ key: string; context: string; average: number }> = [];
    for (const [key, entry] of this.unsavedSlowest) {
      if (entry.hourStart === currentHour) sent.push({ key, context: entry.context, average: entry.average });
      else this.unsavedSlowest.delete(key);
    }
    // Kept until an hour after its own ends, whichever clock Redis keeps.
    const ttlSec = Math.max(1, currentHour + 2 * HOUR_SEC - Math.floor(nowMs / 1000));
    try {
      await this.store.updateSlowest(ACCESS_TIME, currentHour, ttlSec, sent, SLOWEST_KEPT_CONTEXTS);
    } catch (error) {
      return error;
    }
    // A concurrent flush may have set a newer average meanwhile: that one is still to be saved.
    for (const { key, average } of sent)
      if (this.unsavedSlowest.get(key)?.average === average) this.unsavedSlowest.delete(key);
    return undefined;
  }

  /** The slowest routes of the current hour (a route not called this hour is not listed). */
  async slowest(limit: number): Promise<Array<{ context: string; average: number }>> {
    return this.store.slowest(ACCESS_TIME, hourStartOf(this.clock.nowMs()), limit);
  }

  /** Contexts and types recorded in the current or previous hour, with the latest hour of each. */
  async list(offset: number, limit: number): Promise<{ total: number; items: IndexEntry[] }> {
    return this.store.list(hourStartOf(this.clock.nowMs()) - HOUR_SEC, offset, limit);
  }

  private unindexed(entries: IndexEntry[]): IndexEntry[] {
    const seen = new Map<string, IndexEntry>();
    for (const e of entries) {
      const member = indexMember(e.context, e.type);
      if ((this.indexed.get(member) ?? -Infinity) >= e.hourStart) continue;
      const known = seen.get(member);
      if (!known || known.hourStart < e.hourStart)
        seen.set(member, { context: e.context, type: e.type, hourStart: e.hourStart });
    }
    return [...seen.values()];
  }

  private markIndexed(entries: IndexEntry[]): void {
    if (this.indexed.size + entries.length > INDEX_CACHE_LIMIT) this.indexed.clear();
    for (const e of entries) this.indexed.set(indexMember(e.context, e.type), e.hourStart);
  }
}

function checkNames(context: string, type: string): void {
  if (!isContext(context)) throw new InvalidInputError(M.badContext(CONTEXT_RULE));
  if (!isName(type)) throw new InvalidInputError(M.badType(NAME_RULE));
}
