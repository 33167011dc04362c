import { Injectable } from '@nestjs/common';
import { AppConfig } from '../common/config';
import { RedisService } from '../redis/redis.service';
import { Sample } from './counter-math';
import { CounterKeys } from './counter-keys';
import { counterSettings, CounterSettings } from './counter-settings';
import { COUNTER_SCRIPTS as S } from './counters.scripts';

/** What one cleaner script call did on one page of one bucket. */
export interface CleanPage {
  /** Cursor for the next page; '' when the bucket is done. */
  next: string;
  visited: number;
  due: number;
  slicesRemoved: number;
  entriesRemoved: number;
}

/** The only file of the counters feature that talks to Redis: key lists, script calls, reply parsing. */
@Injectable()
export class CounterStore {
  readonly settings: CounterSettings;
  readonly keys: CounterKeys;

  constructor(
    private readonly redis: RedisService,
    config: AppConfig,
  ) {
    this.settings = counterSettings(config);
    this.keys = new CounterKeys(redis.keys.prefix, this.settings.buckets);
    redis.defineScripts(Object.values(S));
  }

  /** Adds `count` at `atSec` to every precision that still keeps it; answers the precisions it landed in. */
  async increment(name: string, nowMs: number, atSec: number, count: number): Promise<number[]> {
    const { precisions, samples } = this.settings;
    const keys = [this.keys.knownOf(name), ...precisions.map((p) => this.keys.count(name, p))];
    const reply = await this.redis.run<number[]>(S.increment, keys, [
      nowMs,
      samples,
      atSec,
      count,
      name,
      ...precisions,
    ]);
    return reply.map(Number);
  }

  /** Live slices of one precision overlapping [from, to] (unsorted), and whether the counter is known. */
  async read(
    name: string,
    precisionSec: number,
    nowMs: number,
    fromSec: number,
    toSec: number,
  ): Promise<{ known: boolean; samples: Sample[] }> {
    const { precisions, samples } = this.settings;
    const keys = [this.keys.knownOf(name), this.keys.count(name, precisionSec)];
    const reply = await this.redis.run<number[]>(S.read, keys, [
      nowMs,
      samples,
      precisionSec,
      fromSec,
      toSec,
      name,
      ...precisions,
    ]);
    const result: Sample[] = [];
    for (let i = 1; i < reply.length; i += 2) result.push({ t: Number(reply[i]), count: Number(reply[i + 1]) });
    return { known: reply[0] === 1, samples: result };
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
    const { precisions } = this.settings;
    const keys = [this.keys.knownOf(name), ...precisions.map((p) => this.keys.count(name, p))];
    return (await this.redis.run<number>(S.delete, keys, [name, ...precisions])) > 0;
  }

  /** Cleans one page (at most `cleanBatch` index entries) of one bucket, after `cursor`. */
  async cleanPage(bucket: number, nowMs: number, pass: number, cursor: string): Promise<CleanPage> {
    const { samples, cleanBatch } = this.settings;
    const reply = await this.redis.run<Array<string | number>>(
      S.clean,
      [this.keys.known(bucket)],
      [nowMs, samples, pass, cursor, cleanBatch],
    );
    return {
      next: String(reply[0]),
      visited: Number(reply[1]),
      due: Number(reply[2]),
      slicesRemoved: Number(reply[3]),
      entriesRemoved: Number(reply[4]),
    };
  }
}
