import { Injectable } from '@nestjs/common';
import { RedisService } from '../redis/redis.service';
import { RedisFunctions } from '../redis/redis-functions';
import { Sample } from './counter-math';
import { CounterKeys, member } from './counter-keys';
import { CountersSettings } from './counters.settings';
import { IdemCalls, Idempotent, IdemRequest } from '../redis/idempotency';
import { growthRefusalOf } from '../redis/refusals';
import { CleanPage, CounterCall, COUNTERS } from './counters.functions';

export type { CleanPage } from './counters.functions';

const S = COUNTERS.functions;

/** The only file of the counters feature that talks to Redis: key lists, function calls, reply parsing. */
@Injectable()
export class CounterStore {
  readonly settings: CountersSettings;
  readonly keys: CounterKeys;
  private readonly longestPrecisionSec: number;
  private readonly idemCalls: IdemCalls;

  constructor(
    private readonly redis: RedisService,
    private readonly functions: RedisFunctions,
    settings: CountersSettings,
  ) {
    this.settings = settings;
    this.keys = new CounterKeys(redis.prefix, this.settings.buckets);
    this.longestPrecisionSec = Math.max(...this.settings.precisions);
    this.idemCalls = IdemCalls.for(settings.idempotencyRetentionMs, redis.client);
    functions.define([COUNTERS.library]);
  }

  /**
   * Adds `count` at `atSec` to every precision that still keeps it; answers the precisions it landed
   * in, and on a replay the time the first request was counted at (its context). `newCounters`: how
   * many new counters it may create (UNLIMITED: no quota); a refusal is a QuotaRefusal or CapRefusal.
   */
  async increment(
    name: string,
    nowMs: number,
    atSec: number,
    count: number,
    newCounters: number,
    idem?: IdemRequest,
  ): Promise<Idempotent<number[], 'counters'>> {
    try {
      return await this.functions.call(S.increment, {
        ...this.counter(name),
        nowMs,
        atSec,
        count,
        idem: this.idemCalls.of(idem),
        newCounters,
        bucketCap: this.settings.bucketCap,
      });
    } catch (error) {
      throw growthRefusalOf(error) ?? error;
    }
  }

  /** Live slices of one precision overlapping [from, to] (unsorted), and whether the counter is known. */
  read(
    name: string,
    precisionSec: number,
    nowMs: number,
    fromSec: number,
    toSec: number,
  ): Promise<{ known: boolean; samples: Sample[] }> {
    return this.functions.call(S.read, { ...this.counter(name), precisionSec, nowMs, fromSec, toSec });
  }

  /**
   * Up to `count` counter names of one bucket after `after` ('' for the first), in byte order: the
   * index entries of the longest precision, one lexicographic range of the known zset (members
   * "<prec>:<name>" all scored 0; ';' follows ':' in byte order, so '(<prec>;' ends the range). Every
   * counter with data has an entry there: the longest precision keeps data longest.
   */
  async namesAfter(bucket: number, after: string, count: number): Promise<string[]> {
    const prefix = `${this.longestPrecisionSec}:`;
    const from = after === '' ? `[${prefix}` : `(${prefix}${after}`;
    const members = await this.redis.timed(
      this.redis.client.zrange(
        this.keys.known(bucket),
        from,
        `(${this.longestPrecisionSec};`,
        'BYLEX',
        'LIMIT',
        0,
        count,
      ),
    );
    return members.map((member) => member.slice(prefix.length));
  }

  /** The configured precisions each counter is listed at (one ZMSCORE per bucket holding some of them). */
  async precisionsOf(names: string[]): Promise<Map<string, number[]>> {
    const byBucket = new Map<number, string[]>();
    for (const name of names)
      byBucket.set(this.keys.bucketOf(name), [...(byBucket.get(this.keys.bucketOf(name)) ?? []), name]);
    const found = new Map<string, number[]>();
    const { precisions } = this.settings;
    await Promise.all(
      [...byBucket].map(async ([bucket, inBucket]) => {
        const members = inBucket.flatMap((name) => precisions.map((p) => member(p, name)));
        const scores = await this.redis.timed(this.redis.client.zmscore(this.keys.known(bucket), ...members));
        inBucket.forEach((name, i) =>
          found.set(
            name,
            precisions.filter((_, k) => scores[i * precisions.length + k] !== null).sort((a, b) => a - b),
          ),
        );
      }),
    );
    return found;
  }

  /** Counters in all: the size of every bucket's names zset (one entry per counter). */
  async countersTotal(): Promise<number> {
    const sizes = await Promise.all(
      Array.from({ length: this.settings.buckets }, (_, bucket) =>
        this.redis.timed(this.redis.client.zcard(this.keys.names(bucket))),
      ),
    );
    return sizes.reduce((sum, size) => sum + size, 0);
  }

  /** Deletes every key and index entry of a counter; false when there was none. */
  async delete(name: string): Promise<boolean> {
    return (await this.functions.call(S.delete, this.counter(name))) > 0;
  }

  /** Cleans one page (at most `cleanBatch` index entries) of one bucket, after `cursor`. */
  cleanPage(bucket: number, nowMs: number, pass: number, cursor: string): Promise<CleanPage> {
    const { samples, cleanBatch } = this.settings;
    return this.functions.call(S.clean, {
      keys: this.keys,
      bucket,
      nowMs,
      samples,
      pass,
      cursor,
      pageSize: cleanBatch,
    });
  }

  private counter(name: string): CounterCall {
    return { keys: this.keys, name, precisionsSec: this.settings.precisions, samples: this.settings.samples };
  }
}
