import { Injectable } from '@nestjs/common';
import { IdemCalls, Idempotent, IdemRequest } from '../redis/idempotency';
import { isFunctionMissing } from '../redis/functions';
import { growthRefusalOf } from '../redis/refusals';
import { RedisService } from '../redis/redis.service';
import { RedisFunctions } from '../redis/redis-functions';
import { PairCall, STATS, StoredHour, WriteResult } from './stats.functions';
import { StatsKeys } from './stats-keys';
import { StatsSettings } from './stats.settings';
import { Histogram, Moments } from './stats-math';
import { indexMember, parseIndexMember } from './stats-names';

export type { StoredHour, WriteResult, WriteStatus } from './stats.functions';

const S = STATS.functions;

/** A batch aggregated in process, for one context/type and the hour its samples were taken in. */
export interface Batch {
  context: string;
  type: string;
  hourStart: number;
  moments: Moments;
  histogram: Histogram;
}

/** One value to record in the hour of `hourStart`, with its histogram field. */
export interface RecordCall {
  context: string;
  type: string;
  nowMs: number;
  hourStart: number;
  value: number;
  histogramField: string;
}

export interface IndexEntry {
  context: string;
  type: string;
  hourStart: number;
}

/** The only file of the stats feature that talks to Redis: keys, function calls, reply parsing. */
@Injectable()
export class StatsStore {
  readonly keys: StatsKeys;
  /** Most live pairs (MAX_STATS_PAIRS; 0: no cap). */
  readonly maxPairs: number;
  private readonly idemCalls: IdemCalls;

  constructor(
    private readonly redis: RedisService,
    private readonly functions: RedisFunctions,
    settings: StatsSettings,
  ) {
    this.keys = new StatsKeys(redis.prefix);
    this.maxPairs = settings.maxPairs;
    this.idemCalls = IdemCalls.for(settings.idempotencyRetentionMs, redis.client);
    functions.define([STATS.library]);
  }

  get isCluster(): boolean {
    return this.redis.client.isCluster;
  }

  /** Lists context/type pairs in the index with their latest hour (a plain key: its own call). */
  async addToIndex(entries: IndexEntry[]): Promise<void> {
    if (entries.length === 0) return;
    await this.redis.timed(this.redis.client.zadd(this.keys.index(), 'GT', ...indexArgs(entries)));
  }

  /**
   * Lists a pair for `entry.hourStart`, admitting a new one (not listed this or last hour) within the
   * cap and `newPairs` (UNLIMITED: no quota); true when it was new. A refusal is a QuotaRefusal or a
   * CapRefusal, and writes nothing.
   */
  async admitToIndex(entry: IndexEntry, oldestLiveHour: number, newPairs: number): Promise<boolean> {
    try {
      return await this.functions.call(S.indexAdmit, {
        keys: this.keys,
        member: indexMember(entry.context, entry.type),
        hourStart: entry.hourStart,
        oldestLiveHour,
        cap: this.maxPairs,
        newPairs,
      });
    } catch (error) {
      throw growthRefusalOf(error) ?? error;
    }
  }

  /** One bounded pruning step: removes up to `batch` pairs listed before `oldestLiveHour`; answers how many. */
  pruneIndex(oldestLiveHour: number, batch: number): Promise<number> {
    return this.functions.call(S.indexPrune, { keys: this.keys, oldestLiveHour, batch });
  }

  /** Records one value; on a replay, the context is the hour the first request was recorded in. */
  record(value: RecordCall, idem?: IdemRequest): Promise<Idempotent<WriteResult>> {
    return this.functions.call(S.record, { ...this.recordCall(value, idem), apply: true });
  }

  /** The stored answer of a recorded value's Idempotency-Key, recording nothing; undefined when there is none. */
  async storedAnswer(value: RecordCall, idem: IdemRequest): Promise<Idempotent<WriteResult> | undefined> {
    try {
      return await this.functions.call(S.record, { ...this.recordCall(value, idem), apply: false });
    } catch (error) {
      if (error instanceof Error && error.message.startsWith('TB_NOT_STORED')) return undefined;
      throw error;
    }
  }

  /** Both stored hours of a context/type, read atomically. */
  read(context: string, type: string): Promise<StoredHour[]> {
    return this.functions.call(S.read, this.pair(context, type));
  }

  /**
   * Adds batches (and index entries first) in one pipeline on a single node; on a Cluster, where a
   * pipeline may not span slots, as concurrent calls. Answers per batch its result or its error.
   */
  async merge(nowMs: number, batches: Batch[], index: IndexEntry[]): Promise<Array<WriteResult | Error>> {
    const callOf = (batch: Batch) => ({ ...this.pair(batch.context, batch.type), ...batch, nowMs });
    if (!this.isCluster) {
      const pipeline = this.redis.client.pipeline();
      if (index.length > 0) pipeline.zadd(this.keys.index(), 'GT', ...indexArgs(index));
      for (const batch of batches) this.functions.queue(pipeline, S.merge, callOf(batch));
      const replies = (await this.redis.timed(pipeline.exec())) ?? [];
      return Promise.all(
        batches.map((batch, i) => {
          const [error, reply] = replies[i + (index.length > 0 ? 1 : 0)] ?? [new Error('no reply'), undefined];
          // A node that lost tb_stats ran nothing: the call on its own reloads it and runs the merge once.
          if (isFunctionMissing(error)) return this.functions.call(S.merge, callOf(batch)).catch(toError);
          if (error) return error;
          try {
            return S.merge.decode(reply, callOf(batch));
          } catch (decodeError) {
            return toError(decodeError);
          }
        }),
      );
    }
    await this.addToIndex(index);
    const settled = await Promise.allSettled(batches.map((batch) => this.functions.call(S.merge, callOf(batch))));
    return settled.map((result) => (result.status === 'fulfilled' ? result.value : toError(result.reason)));
  }

  /**
   * Sets the averages of the hour's slowest list and trims it to the `keep` slowest, in one
   * transaction; the list expires `ttlSec` from now (the caller's clock: after its hour ends, since
   * reads only ever ask for the current hour's).
   */
  async updateSlowest(
    type: string,
    hourStart: number,
    ttlSec: number,
    entries: Array<{ context: string; average: number }>,
    keep: number,
  ): Promise<void> {
    if (entries.length === 0) return;
    const key = this.keys.slowest(type, hourStart);
    await this.redis.timed(
      this.redis.client
        .multi()
        .zadd(key, ...entries.flatMap((e) => [String(e.average), e.context]))
        .zremrangebyrank(key, 0, -(keep + 1))
        .expire(key, ttlSec)
        .exec(),
    );
  }

  async slowest(type: string, hourStart: number, limit: number): Promise<Array<{ context: string; average: number }>> {
    const flat = await this.redis.timed(
      this.redis.client.zrevrange(this.keys.slowest(type, hourStart), 0, limit - 1, 'WITHSCORES'),
    );
    const items: Array<{ context: string; average: number }> = [];
    for (let i = 0; i < flat.length; i += 2) items.push({ context: flat[i], average: Number(flat[i + 1]) });
    return items;
  }

  /**
   * Pages the pairs listed at `oldestHour` or later (oldest hour first, then by name). Older entries
   * are skipped, not removed: the pruner job removes them in bounded steps.
   */
  async list(oldestHour: number, offset: number, limit: number): Promise<{ total: number; items: IndexEntry[] }> {
    const key = this.keys.index();
    const [total, flat] = (await this.redis.timed(
      this.redis.client
        .multi()
        .zcount(key, oldestHour, '+inf')
        .zrange(key, oldestHour, '+inf', 'BYSCORE', 'LIMIT', offset, limit, 'WITHSCORES')
        .exec(),
    ))!.map(([error, value]) => {
      if (error) throw error;
      return value;
    }) as [number, string[]];
    const items: IndexEntry[] = [];
    for (let i = 0; i < flat.length; i += 2)
      items.push({ ...parseIndexMember(flat[i]), hourStart: Number(flat[i + 1]) });
    return { total, items };
  }

  private recordCall(value: RecordCall, idem: IdemRequest | undefined) {
    return { ...this.pair(value.context, value.type), ...value, idem: this.idemCalls.of(idem) };
  }

  private pair(context: string, type: string): PairCall {
    return { keys: this.keys, context, type };
  }
}

function indexArgs(entries: IndexEntry[]): string[] {
  return entries.flatMap((e) => [String(e.hourStart), indexMember(e.context, e.type)]);
}

function toError(reason: unknown): Error {
  return reason instanceof Error ? reason : new Error(String(reason));
}
