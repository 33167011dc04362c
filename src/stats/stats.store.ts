import { Injectable } from '@nestjs/common';
import { AppConfig } from '../common/config';
import { Idempotent, IdemRequest } from '../redis/idempotency';
import { RedisService } from '../redis/redis.service';
import { PairCall, STATS_SCRIPTS as S, StoredHour, WriteResult } from './stats.scripts';
import { StatsKeys } from './stats-keys';
import { Histogram, Moments } from './stats-math';
import { indexMember, parseIndexMember } from './stats-names';

export type { StoredHour, WriteResult, WriteStatus } from './stats.scripts';

/** A batch aggregated in process, for one context/type and the hour its samples were taken in. */
export interface Batch {
  context: string;
  type: string;
  hourStart: number;
  moments: Moments;
  histogram: Histogram;
}

export interface IndexEntry {
  context: string;
  type: string;
  hourStart: number;
}

/** The only file of the stats feature that talks to Redis: keys, script calls, reply parsing. */
@Injectable()
export class StatsStore {
  readonly keys: StatsKeys;

  private readonly idemRetentionMs: number;

  constructor(
    private readonly redis: RedisService,
    config: AppConfig,
  ) {
    this.keys = new StatsKeys(redis.prefix);
    this.idemRetentionMs = config.IDEMPOTENCY_TTL_SEC * 1000;
    redis.defineScripts(Object.values(S));
  }

  get isCluster(): boolean {
    return this.redis.client.isCluster;
  }

  /** Lists context/type pairs in the index with their latest hour (a plain key: its own call). */
  async addToIndex(entries: IndexEntry[]): Promise<void> {
    if (entries.length === 0) return;
    await this.redis.client.zadd(this.keys.index(), 'GT', ...indexArgs(entries));
  }

  /** Records one value; on a replay, the context is the hour the first request was recorded in. */
  record(
    context: string,
    type: string,
    nowMs: number,
    hourStart: number,
    value: number,
    histogramField: string,
    idem?: IdemRequest,
  ): Promise<Idempotent<WriteResult>> {
    const idemCall = idem && { ...idem, retentionMs: this.idemRetentionMs };
    return this.redis.call(S.record, {
      ...this.pair(context, type),
      nowMs,
      hourStart,
      value,
      histogramField,
      idem: idemCall,
    });
  }

  /** Both stored hours of a context/type, read atomically. */
  read(context: string, type: string): Promise<StoredHour[]> {
    return this.redis.call(S.read, this.pair(context, type));
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
      for (const batch of batches) this.redis.queue(pipeline, S.merge, callOf(batch));
      const replies = (await pipeline.exec()) ?? [];
      return batches.map((batch, i) => {
        const [error, reply] = replies[i + (index.length > 0 ? 1 : 0)] ?? [new Error('no reply'), undefined];
        if (error) return error;
        try {
          return S.merge.decode(reply, callOf(batch));
        } catch (decodeError) {
          return toError(decodeError);
        }
      });
    }
    await this.addToIndex(index);
    const settled = await Promise.allSettled(batches.map((batch) => this.redis.call(S.merge, callOf(batch))));
    return settled.map((result) => (result.status === 'fulfilled' ? result.value : toError(result.reason)));
  }

  /** Sets the averages of the slowest list and trims it to the `keep` slowest, in one transaction. */
  async updateSlowest(type: string, entries: Array<{ context: string; average: number }>, keep: number): Promise<void> {
    if (entries.length === 0) return;
    const key = this.keys.slowest(type);
    await this.redis.client
      .multi()
      .zadd(key, ...entries.flatMap((e) => [String(e.average), e.context]))
      .zremrangebyrank(key, 0, -(keep + 1))
      .exec();
  }

  async slowest(type: string, limit: number): Promise<Array<{ context: string; average: number }>> {
    const flat = await this.redis.client.zrevrange(this.keys.slowest(type), 0, limit - 1, 'WITHSCORES');
    const items: Array<{ context: string; average: number }> = [];
    for (let i = 0; i < flat.length; i += 2) items.push({ context: flat[i], average: Number(flat[i + 1]) });
    return items;
  }

  /** Drops index entries whose latest hour is before `oldestHour`, then pages the rest (oldest hour first, then by name). */
  async list(oldestHour: number, offset: number, limit: number): Promise<{ total: number; items: IndexEntry[] }> {
    const key = this.keys.index();
    const [, total, flat] = (await this.redis.client
      .multi()
      .zremrangebyscore(key, '-inf', `(${oldestHour}`)
      .zcard(key)
      .zrange(key, offset, offset + limit - 1, 'WITHSCORES')
      .exec())!.map(([error, value]) => {
      if (error) throw error;
      return value;
    }) as [number, number, string[]];
    const items: IndexEntry[] = [];
    for (let i = 0; i < flat.length; i += 2)
      items.push({ ...parseIndexMember(flat[i]), hourStart: Number(flat[i + 1]) });
    return { total, items };
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
