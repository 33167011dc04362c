import { FakeClock } from '../../../harness/clock';
import { TOPOLOGIES } from '../../../harness/redis';
import { useRankingGraph } from '../../support/ranking-graph';

const DAY_MS = 86_400_000;
const METRICS = ['up', 'down'];
/** Each metric's counts of items a to f: b is among the best of both, f among neither. */
const COUNTS: Record<string, number[]> = { up: [6, 5, 4, 3, 2, 1], down: [1, 6, 5, 4, 3, 2] };
const ITEMS = ['a', 'b', 'c', 'd', 'e', 'f'];

/**
 * Archive metric records (issue #50): an item retraction takes the item's row out of every metric's
 * archive, and its record ("archidx:<at>", what another metric's rows read their counts from) with it,
 * so the archive's rows read afterwards answer by every metric what they answer where the item's events
 * never were (a listing with room: the twin that never got them), and a board of 3 shards what a board
 * of one answers (a full listing: the rows past `top` a sharded board's shards keep were cut, their
 * records too, so none of them is found there).
 */
describe.each(TOPOLOGIES)('archive records after an item retraction (%s)', (topology) => {
  const clock = new FakeClock(1_700_000_000_000);
  // The default EXPIRE_CHUNK: each closed day is drained and archived by one read.
  const world = useRankingGraph(topology, clock, {});

  /** A board of both metrics keeping day archives of `top` rows, each item counted (b left out: `without`). */
  async function seeded(name: string, shards: number, top: number, without?: string): Promise<void> {
    const windows = [{ name: 'day', calendar: 'day', archive: { keep: 3, top } }];
    await world.graph.ranking.putBoard({ name, windows, shards, metrics: METRICS });
    for (const metric of METRICS) {
      const entries = ITEMS.map((item, i) => ({ item, amount: COUNTS[metric][i], metric }));
      await world.graph.ranking.incrementBatch(
        name,
        entries.filter((entry) => entry.item !== without),
      );
    }
  }

  async function retracted(name: string, item: string): Promise<void> {
    const started = (await world.graph.retractions.start(name, { kind: 'item', id: item })).body;
    await world.graph.retractions.settled(name, started.id);
  }

  /** Every metric's archive of the closed day: rows, ranks, scores and each row's `metrics`. */
  const archives = async (name: string) => {
    const answers: Record<string, unknown> = {};
    for (const metric of METRICS)
      answers[metric] = (await world.graph.ranking.archives(name, 'day', 3, undefined, {}, { metric })).periods;
    return answers;
  };

  it('answers, a listing with room, as the twin that never got the item', async () => {
    const startMs = clock.nowMs();
    await seeded('roomy', 3, 10);
    await seeded('roomy-twin', 3, 10, 'b');
    clock.advanceMs(DAY_MS);
    await archives('roomy');
    await retracted('roomy', 'b');
    expect(await archives('roomy')).toEqual(await archives('roomy-twin'));
    // Every metric's record on every shard forgot it, as the twin's never held it.
    const records = await world.redis.dataKeys('*board:roomy[}/]*archidx:*');
    expect(records.length).toBeGreaterThan(0);
    for (const key of records) expect([key, await world.redis.client.hexists(key, 'b')]).toEqual([key, 0]);
    clock.setMs(startMs);
  });

  it.each([1, 3])('answers, a full listing on %i shard(s), what a board of one shard answers', async (shards) => {
    const startMs = clock.nowMs();
    await seeded(`full${shards}`, shards, 3);
    await seeded(`full${shards}-one`, 1, 3);
    clock.advanceMs(DAY_MS);
    await archives(`full${shards}`);
    await archives(`full${shards}-one`);
    await retracted(`full${shards}`, 'b');
    await retracted(`full${shards}-one`, 'b');
    const [board, one] = [await archives(`full${shards}`), await archives(`full${shards}-one`)];
    expect(JSON.stringify(board).includes('"item":"b"')).toBe(false);
    expect(board).toEqual(one);
    clock.setMs(startMs);
  });
});
