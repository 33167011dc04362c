import { Injectable } from '@nestjs/common';
import { AppConfig } from '../common/config';
import { RedisService } from '../redis/redis.service';
import { Sample } from './counter-math';
import { CounterKeys } from './counter-keys';
import { counterSettings, CounterSettings } from './counter-settings';
import { Idempotent, IdemRequest } from '../redis/idempotency';
import { CleanPage, CounterCall, COUNTER_SCRIPTS as S } from './counters.scripts';

export type { CleanPage } from './counters.scripts';

/** The only file of the counters feature that talks to Redis: key lists, script calls, reply parsing. */
@Injectable()
export class CounterStore {
  readonly settings: CounterSettings;
  readonly keys: CounterKeys;
  private readonly idemRetentionMs: number;

  constructor(
    private readonly redis: RedisService,
    config: AppConfig,
  ) {
    this.settings = counterSettings(config);
    this.keys = new CounterKeys(redis.prefix, this.settings.buckets);
    this.idemRetentionMs = config.IDEMPOTENCY_TTL_SEC * 1000;
    redis.defineScripts(Object.values(S));
  }

  /**
   * Adds `count` at `atSec` to every precision that still keeps it; answers the precisions it landed
   * in, and on a replay the time the first request was counted at (its context).
   */
  increment(
    name: string,
    nowMs: number,
    atSec: number,
    count: number,
    idem?: IdemRequest,
  ): Promise<Idempotent<number[]>> {
    const idemCall = idem && { ...idem, retentionMs: this.idemRetentionMs };
    return this.redis.call(S.increment, { ...this.counter(name), nowMs, atSec, count, idem: idemCall });
  }

  /** Live slices of one precision overlapping [from, to] (unsorted), and whether the counter is known. */
  read(
    name: string,
    precisionSec: number,
    nowMs: number,
    fromSec: number,
    toSec: number,
  ): Promise<{ known: boolean; samples: Sample[] }> {
    return this.redis.call(S.read, { ...this.counter(name), precisionSec, nowMs, fromSec, toSec });
  }

  /** Every member of every bucket of the known index ("<prec>:<name>"). */
  async knownMembers(): Promise<string[]> {
    const buckets = Array.from({ length: this.settings.buckets }, (_, b) =>
      this.redis.client.zrange(this.keys.known(b), 0, -1),
    );
    return (await Promise.all(buckets)).flat();
  }

  /** Deletes every key and index entry of a counter; false when there was none. */
  async delete(name: string): Promise<boolean> {
    return (await this.redis.call(S.delete, this.counter(name))) > 0;
  }

  /** Cleans one page (at most `cleanBatch` index entries) of one bucket, after `cursor`. */
  cleanPage(bucket: number, nowMs: number, pass: number, cursor: string): Promise<CleanPage> {
    const { samples, cleanBatch } = this.settings;
    return this.redis.call(S.clean, { keys: this.keys, bucket, nowMs, samples, pass, cursor, pageSize: cleanBatch });
  }

  private counter(name: string): CounterCall {
    return { keys: this.keys, name, precisionsSec: this.settings.precisions, samples: this.settings.samples };
  }
}
