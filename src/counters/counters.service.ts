import { Injectable, Logger } from '@nestjs/common';
import { Clock } from '../common/clock';
import { WriteAnswer } from '../common/retry-safe';
import { idemRequest } from '../redis/idempotency';
import { ONE_ANSWER, withAnswerBudget } from '../governance/answer-budget';
import { InvalidInputError, NotFoundError } from '../common/errors';
import { capacityReached, ClientBudget, growthErrorOf, reserveGrowth } from '../governance/growth-quotas';
import { COUNTER_MESSAGES as M } from './counters.messages';
import { atProblem, isCount, resolvePrecision, Sample, shapeSamples } from './counter-math';
import { DEFAULT_COUNT, MAX_ABS_COUNT } from './counters.limits';
import { CountersSettings } from './counters.settings';
import { firstNames } from './name-pages';
import { CounterStore } from './counters.store';

export interface IncrementResult {
  name: string;
  /** The count added. */
  count: number;
  /** The sample's time (unix s): `at` as given, else now. */
  at: number;
  /** The precisions (s) the count landed in (fewer than configured for an old `at`). */
  precisions: number[];
}

export interface CounterSeries {
  name: string;
  precision: number;
  samples: Sample[];
}

export interface CounterSummary {
  name: string;
  precisions: number[];
}

export interface CleanPassResult {
  pass: number;
  visited: number;
  due: number;
  slicesRemoved: number;
  entriesRemoved: number;
  /** Names entries of counters that left every retention. */
  namesRemoved: number;
  /** Buckets whose cleaning failed (logged; retried on a later pass). */
  failures: number;
}

/** Pass `pass` before it has visited anything: nothing removed, no failure. */
export function emptyCleanPass(pass: number): CleanPassResult {
  return { pass, visited: 0, due: 0, slicesRemoved: 0, entriesRemoved: 0, namesRemoved: 0, failures: 0 };
}

/** Multi-precision counters: increments, reads, listing, deletion and the cleaner pass. No HTTP types. */
@Injectable()
export class CountersService {
  readonly settings: CountersSettings;
  private readonly logger = new Logger('Counters');

  constructor(
    private readonly store: CounterStore,
    private readonly clock: Clock,
  ) {
    this.settings = store.settings;
  }

  /** `budget`: the client's quotas on growth (none: the write may create a counter). */
  async increment(
    name: string,
    count = DEFAULT_COUNT,
    atSec?: number,
    idemKey?: string,
    budget?: ClientBudget,
  ): Promise<WriteAnswer<IncrementResult>> {
    if (!isCount(count)) throw new InvalidInputError(M.badCount(MAX_ABS_COUNT));
    const nowMs = this.clock.nowMs();
    const { at, problem } = this.sampleTime(atSec, nowMs, idemKey !== undefined);
    const keyed = idemRequest(idemKey, ['counter', name, count, atSec ?? null]);
    return withAnswerBudget(budget, keyed, ONE_ANSWER, async (idem) => {
      const reservation = reserveGrowth(budget, { counters: 1 });
      const written = await this.store
        .increment(name, nowMs, at, count, reservation.allowance('counters'), idem)
        .catch((error: unknown) => {
          throw growthErrorOf(error, reservation, this.countersFull());
        });
      reservation.settle({ counters: written.created.counters });
      if (written.value.length === 0) {
        if (!problem) throw new Error('the counter script refused a sample the service found live');
        throw new InvalidInputError(problem.message);
      }
      return {
        replayed: written.replayed,
        body: { name, count, at: Number(written.context), precisions: written.value },
      };
    });
  }

  /**
   * The sample's time (default now) and why it is refused, if it is; refused at once unless a keyed
   * sample aged out since its first request: that must still replay its answer, and the script looks
   * the key up before it applies the same retention rule (with the same `now`).
   */
  private sampleTime(atSec: number | undefined, nowMs: number, keyed: boolean) {
    const nowSec = Math.floor(nowMs / 1000);
    const at = atSec ?? nowSec;
    if (!Number.isInteger(at) || at < 0) throw new InvalidInputError(M.badAt());
    const problem = atProblem(at, nowSec, this.settings.samples, this.settings.precisions);
    if (problem && !(problem.kind === 'past' && keyed)) throw new InvalidInputError(problem.message);
    return { at, problem };
  }

  private countersFull() {
    return capacityReached(
      'counters',
      `MAX_COUNTERS ${this.settings.maxCounters} split over ${this.settings.buckets} index buckets`,
    );
  }

  async read(
    name: string,
    precision: unknown,
    options: { from?: number; to?: number; fill?: boolean } = {},
  ): Promise<CounterSeries> {
    const precisionSec = this.resolvePrecision(precision);
    const { from, to } = options;
    if (from !== undefined && to !== undefined && from > to) throw new InvalidInputError(M.fromAfterTo(from, to));
    const nowMs = this.clock.nowMs();
    const nowSec = Math.floor(nowMs / 1000);
    const stored = await this.store.read(name, precisionSec, nowMs, from ?? 0, to ?? Number.MAX_SAFE_INTEGER);
    if (!stored.known) throw new NotFoundError('COUNTER_NOT_FOUND', M.counterNotFound(name));
    const samples = shapeSamples(stored.samples, {
      nowSec,
      samples: this.settings.samples,
      precisionSec,
      fromSec: from,
      toSec: to,
      fill: options.fill ?? false,
    });
    return { name, precision: precisionSec, samples };
  }

  /**
   * Counters sorted by name (byte order), each with the precisions it is listed at: from `offset`, or
   * after the name `cursor`. The buckets are merged progressively (firstNames): about offset + limit
   * names are read in all (limit after a cursor, at any depth), never the whole index. `total` counts
   * the buckets' names entries (one per counter).
   */
  async list(page: {
    offset: number;
    limit: number;
    cursor?: string;
  }): Promise<{ counters: CounterSummary[]; total: number; nextCursor: string | null }> {
    const skip = page.cursor === undefined ? page.offset : 0;
    const [names, total] = await Promise.all([
      firstNames(this.settings.buckets, skip + page.limit, page.cursor ?? '', (bucket, after, count) =>
        this.store.namesAfter(bucket, after, count),
      ),
      this.store.countersTotal(),
    ]);
    const pageNames = names.slice(skip);
    const precisions = await this.store.precisionsOf(pageNames);
    return {
      counters: pageNames.map((name) => ({ name, precisions: precisions.get(name) ?? [] })),
      total,
      nextCursor: pageNames.length === page.limit ? pageNames[pageNames.length - 1] : null,
    };
  }

  async delete(name: string): Promise<void> {
    if (!(await this.store.delete(name))) throw new NotFoundError('COUNTER_NOT_FOUND', M.counterNotFound(name));
  }

  /**
   * One cleaner pass over every bucket of the index, a page (COUNTER_CLEAN_BATCH entries) per script
   * call, with a lexicographic cursor that stays valid while entries are added or removed under it.
   * Only precisions due on this pass are trimmed. A failing bucket is logged and counted; the others
   * are still cleaned.
   */
  async cleanPass(pass: number): Promise<CleanPassResult> {
    const result = emptyCleanPass(pass);
    for (let bucket = 0; bucket < this.settings.buckets; bucket++) {
      let cursor = '';
      try {
        do {
          const page = await this.store.cleanPage(bucket, this.clock.nowMs(), pass, cursor);
          result.visited += page.visited;
          result.due += page.due;
          result.slicesRemoved += page.slicesRemoved;
          result.entriesRemoved += page.entriesRemoved;
          result.namesRemoved += page.namesRemoved;
          cursor = page.next;
        } while (cursor !== '');
      } catch (error) {
        result.failures++;
        this.logger.warn(
          `cleaning counter bucket ${bucket} failed: ${error instanceof Error ? error.message : String(error)}`,
        );
      }
    }
    return result;
  }

  private resolvePrecision(value: unknown): number {
    const seconds = resolvePrecision(value, this.settings.precisions);
    if (seconds === undefined) {
      const given =
        value === undefined ? 'precision is required' : `precision ${JSON.stringify(value)} is not configured`;
      throw new InvalidInputError(M.unknownPrecision(given, this.settings.precisions));
    }
    return seconds;
  }
}
