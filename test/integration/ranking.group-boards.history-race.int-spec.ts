import { FakeClock } from '../../harness/clock';
import { TOPOLOGIES } from '../../harness/redis';
import { GroupBoardsStore } from '../../src/ranking/group-boards/group-boards.store';
import type { RedisFunctions } from '../../src/redis/redis-functions';
import { useRankingGraph } from '../support/ranking-graph';

const T0 = 1_600_000_000_000;

/** A gate on the next group_history_store call (a merge storing a listing): held till released. */
function holdNextListing(store: GroupBoardsStore) {
  const functions: RedisFunctions = store.functions;
  const call = functions.call.bind(functions);
  let reached!: () => void;
  let release!: () => void;
  const held = new Promise<void>((resolve) => (reached = resolve));
  const gate = new Promise<void>((resolve) => (release = resolve));
  let armed = true;
  const spy = jest.spyOn(functions, 'call').mockImplementation(async (fn, input) => {
    if (fn !== store.fns.groupHistoryStore || !armed) return call(fn, input);
    armed = false;
    reached();
    await gate;
    return call(fn, input);
  });
  return { held, release, spy };
}

/**
 * Issue #48: an item retraction racing the merge of a group board's listing over a sharded member
 * board. The merge reads the shards' parts (the item counted), then is held before it stores the
 * listing on shard 0; the retraction runs whole meanwhile (it marks the item's part, already read, and
 * finds no listing to rewrite on shard 0). Released, the stored listing must still leave the item out.
 * Members (shard of each over 3): p0 0, p1 1, p2 2 in red, p3 0 in blue; top 2, decay 1.
 */
describe.each(TOPOLOGIES)('group boards over 3 shards: a retraction racing a merge (%s)', (topology) => {
  const clock = new FakeClock(T0);
  const world = useRankingGraph(topology, clock, {});

  it('leaves the retracted item out of the listing the merge stores after the retraction ran', async () => {
    const { ranking, groupBoards, retractions } = world.graph;
    const snapshots = { keep: 4, top: 2 };
    await ranking.putBoard({ name: 'hm', windows: [{ name: 'w', period: 60, interval: 20, snapshots }], shards: 3 });
    await ranking.putBoard({ name: 'hg', groupOf: { board: 'hm', window: 'w', top: 2, decay: 1 } });
    const scores = { p0: 1, p1: 5, p2: 3, p3: 2 };
    for (const [item, score] of Object.entries(scores)) {
      await groupBoards.setMember({ name: 'hg', group: item === 'p3' ? 'blue' : 'red', item });
      await ranking.increment('hm', item, score);
    }
    clock.advanceMs(20_000);

    const { held, release, spy } = holdNextListing(world.graph.module.get(GroupBoardsStore));
    const read = ranking.top('hg', undefined, 0, 10);
    await held; // the merge read every shard's part at the boundary: red 5 + 3, blue 2
    const started = (await retractions.start('hm', { kind: 'item', id: 'p1' })).body;
    await retractions.settled('hm', started.id);
    release();
    await read;
    spy.mockRestore();

    const kept = await ranking.history('hg', undefined, undefined);
    expect({ at: kept.at, rows: kept.items.map(({ rank, item, score }) => ({ rank, item, score })) }).toEqual({
      at: T0 / 1000 + 20,
      // red counted p1 and p2: p2 alone now (p0 does not move in past top)
      rows: [
        { rank: 1, item: 'red', score: 3 },
        { rank: 2, item: 'blue', score: 2 },
      ],
    });
  });
});
