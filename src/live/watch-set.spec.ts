import type { LiveClient } from './live-client';
import type { Subscriber } from './watch-set';
import { Watch, WatchSet } from './watch-set';

/** A client that takes every frame: these specs count watches, not bytes. */
const client = (): LiveClient => ({
  write: () => true,
  bufferedBytes: 0,
  takeProgress: () => true,
  close: () => {},
  destroy: () => {},
});

const subscriber = (): Subscriber => ({
  client: client(),
  owner: 'ip:1',
  openedAtMs: 0,
  lastProgressMs: 0,
  detach: () => {},
});

const watch = (over: Partial<Watch>): Watch => ({
  board: 'b',
  shards: 4,
  metrics: 0,
  version: 1,
  window: 'h',
  limit: 10,
  filters: {},
  untilSec: 0,
  rows: '[]',
  ...over,
});

describe('WatchSet with metrics (#50)', () => {
  it('keeps streams of different metrics apart, and the same metric together', () => {
    const watches = new WatchSet();
    watches.add(watch({ metrics: 2 }), subscriber());
    watches.add(watch({ metrics: 2, filters: { metric: 'down' } }), subscriber());
    watches.add(watch({ metrics: 2, filters: { metric: 'down' } }), subscriber());
    const [due] = watches.due(1_000);
    expect(due.groups.map((group) => group.filters.metric)).toEqual([undefined, 'down']);
    expect([...due.groups[1].views.values()][0].subscribers.size).toBe(2);
  });

  it('plans a metric_counts call per shard beside each top read of a board with metrics', () => {
    const plain = new WatchSet();
    plain.add(watch({}), subscriber());
    expect(plain.due(1_000)[0].groups[0].callsPerShard).toBe(1);
    const metrics = new WatchSet();
    metrics.add(watch({ metrics: 8, filters: { metric: 'm8' } }), subscriber());
    metrics.add(watch({ metrics: 8 }), subscriber());
    expect(metrics.due(1_000)[0].groups.map((group) => group.callsPerShard)).toEqual([2, 2]);
    // 4 shards x (1 version read + 2 groups x 2 calls) = 20: a budget of 19 reads one group this tick.
    expect(metrics.due(20)[0].groups).toHaveLength(2);
    expect(metrics.due(19)[0].groups).toHaveLength(1);
  });
});
