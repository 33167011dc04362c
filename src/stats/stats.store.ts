import { Injectable } from '@nestjs/common';
import type { ChainableCommander } from 'ioredis';
import { RedisService } from '../redis/redis.service';
import { ScriptDefinition } from '../redis/scripts';
import { STATS_SCRIPTS as S } from './stats.scripts';
import { StatsKeys } from './stats-keys';
import { Histogram, isHistogramField, Moments } from './stats-math';
import { indexMember, parseIndexMember } from './stats-names';

/** Where a write landed: the hour the caller asked for was the stored current hour, the previous one, or too old. */
export type WriteStatus = 'current' | 'previous' | 'dropped';

export interface WriteResult {
  status: WriteStatus;
  count: number;
  sum: number;
  sumsq: number;
}

/** One hour of one context/type as stored. */
export interface StoredHour {
  hourStart: number;
  moments: Moments;
  histogram: Histogram;
}

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

const STATUS: Record<number, WriteStatus> = { 0: 'dropped', 1: 'current', 2: 'previous' };

/** The only file of the stats feature that talks to Redis: keys, script calls, reply parsing. */
@Injectable()
export class StatsStore {
  readonly keys: StatsKeys;

  constructor(private readonly redis: RedisService) {
    this.keys = new StatsKeys(redis.keys.prefix);
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

  async record(
    context: string,
    type: string,
    nowMs: number,
    hourStart: number,
    value: number,
    field: string,
  ): Promise<WriteResult> {
    const reply = await this.redis.run<Array<number | string>>(S.record, this.hourKeys(context, type), [
      nowMs,
      hourStart,
      String(value),
      field,
    ]);
    return writeResult(reply);
  }

  /** Both stored hours of a context/type, read atomically. */
  async read(context: string, type: string): Promise<StoredHour[]> {
    const [cur, prev] = await this.redis.run<[string[], string[]]>(S.read, this.hourKeys(context, type), []);
    return [cur, prev].map(parseHour).filter((hour): hour is StoredHour => hour !== undefined);
  }

  /**
   * Adds batches (and index entries first) in one pipeline on a single node; on a Cluster, where a
   * pipeline may not span slots, as concurrent calls. Answers per batch its result or its error.
   */
  async merge(nowMs: number, batches: Batch[], index: IndexEntry[]): Promise<Array<WriteResult | Error>> {
    const argsOf = (batch: Batch) => [
      nowMs,
      batch.hourStart,
      ...momentArgs(batch.moments),
      ...[...batch.histogram].flatMap(([field, count]) => [field, count]),
    ];
    if (!this.isCluster) {
      const pipeline = this.redis.client.pipeline();
      if (index.length > 0) pipeline.zadd(this.keys.index(), 'GT', ...indexArgs(index));
      for (const batch of batches) runIn(pipeline, S.merge, this.hourKeys(batch.context, batch.type), argsOf(batch));
      const replies = (await pipeline.exec()) ?? [];
      return batches.map((_, i) => {
        const [error, reply] = replies[i + (index.length > 0 ? 1 : 0)] ?? [new Error('no reply'), undefined];
        return error ? error : writeResult(reply as Array<number | string>);
      });
    }
    await this.addToIndex(index);
    const settled = await Promise.allSettled(
      batches.map((batch) =>
        this.redis.run<Array<number | string>>(S.merge, this.hourKeys(batch.context, batch.type), argsOf(batch)),
      ),
    );
    return settled.map((result) =>
      result.status === 'fulfilled' ? writeResult(result.value) : toError(result.reason),
    );
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

  private hourKeys(context: string, type: string): string[] {
    return [this.keys.current(context, type), this.keys.previous(context, type)];
  }
}

function runIn(
  pipeline: ChainableCommander,
  script: ScriptDefinition,
  keys: string[],
  args: Array<string | number>,
): void {
  (pipeline as unknown as Record<string, (...a: unknown[]) => unknown>)[script.name](...keys, ...args);
}

function indexArgs(entries: IndexEntry[]): string[] {
  return entries.flatMap((e) => [String(e.hourStart), indexMember(e.context, e.type)]);
}

function momentArgs(m: Moments): string[] {
  return [m.count, m.sum, m.sumsq, m.min, m.max, m.mean, m.m2].map(String);
}

function writeResult(reply: Array<number | string>): WriteResult {
  const status = STATUS[Number(reply[0])] ?? 'dropped';
  if (status === 'dropped') return { status, count: 0, sum: 0, sumsq: 0 };
  return { status, count: Number(reply[1]), sum: Number(reply[2]), sumsq: Number(reply[3]) };
}

function parseHour(flat: string[]): StoredHour | undefined {
  const fields = new Map<string, string>();
  for (let i = 0; i < flat.length; i += 2) fields.set(flat[i], flat[i + 1]);
  const count = Number(fields.get('count'));
  if (!fields.has('hour') || !(count > 0)) return undefined;
  const num = (name: string) => Number(fields.get(name));
  const histogram: Histogram = new Map();
  for (const [field, value] of fields) if (isHistogramField(field)) histogram.set(field, Number(value));
  return {
    hourStart: num('hour'),
    moments: {
      count,
      sum: num('sum'),
      sumsq: num('sumsq'),
      min: num('min'),
      max: num('max'),
      mean: num('mean'),
      m2: num('m2'),
    },
    histogram,
  };
}

function toError(reason: unknown): Error {
  return reason instanceof Error ? reason : new Error(String(reason));
}
