import { CounterStore } from '../../src/counters/counters.store';
import { TestRedis } from '../../harness/redis';

/** Every member ("<prec>:<name>") of every bucket of the known-counters index, read raw. */
export async function knownMembers(redis: TestRedis, store: CounterStore): Promise<string[]> {
  const buckets = Array.from({ length: store.settings.buckets }, (_, bucket) =>
    redis.client.zrange(store.keys.known(bucket), 0, -1),
  );
  return (await Promise.all(buckets)).flat();
}
