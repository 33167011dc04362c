import calculateSlot from 'cluster-key-slot';

/**
 * Key naming of the counters feature. The known-counters index is split into `buckets` zsets; a counter
 * lives in bucket hash(name) % buckets (CRC16 of the name, the Redis Cluster slot function), and its
 * count hashes share that bucket's hash tag, so every script call touches one Cluster slot:
 *
 *   {<prefix>cnt:<bucket>}:known                  zset  "<prec>:<name>" -> 0
 *   {<prefix>cnt:<bucket>}:names                  zset  name -> when its newest slice leaves every retention (ms)
 *   {<prefix>cnt:<bucket>}:count:<prec>:<name>    hash  slice start -> count (expires with its newest slice)
 *
 * Names are validated (NAME_PATTERN) to contain no braces, so a name never breaks out of the tag.
 */
export class CounterKeys {
  constructor(
    readonly prefix: string,
    readonly buckets: number,
  ) {}

  bucketOf(name: string): number {
    return calculateSlot(name) % this.buckets;
  }

  tag(bucket: number): string {
    return `{${this.prefix}cnt:${bucket}}`;
  }

  known(bucket: number): string {
    return `${this.tag(bucket)}:known`;
  }

  /** Also derived inside the scripts from the known key: "<tag>:" .. "count:" .. member. */
  count(name: string, precisionSec: number): string {
    return `${this.tag(this.bucketOf(name))}:count:${member(precisionSec, name)}`;
  }

  /** Also derived inside the scripts from the known key ("known" -> "names"). */
  names(bucket: number): string {
    return `${this.tag(bucket)}:names`;
  }

  knownOf(name: string): string {
    return this.known(this.bucketOf(name));
  }
}

/** An index member: "<prec>:<name>". */
export function member(precisionSec: number, name: string): string {
  return `${precisionSec}:${name}`;
}

/** Splits an index member (tests read the raw index with it); undefined for anything that is not "<digits>:<name>". */
export function parseMember(value: string): { precisionSec: number; name: string } | undefined {
  const match = /^([0-9]+):(.+)$/.exec(value);
  return match ? { precisionSec: Number(match[1]), name: match[2] } : undefined;
}
