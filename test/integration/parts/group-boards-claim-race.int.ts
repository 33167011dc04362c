import { FakeClock } from '../../../harness/clock';
import { TOPOLOGIES } from '../../../harness/redis';
import { GroupBoardsStore } from '../../../src/ranking/group-boards/group-boards.store';
import type { RedisFunctions } from '../../../src/redis/redis-functions';
import { useRankingGraph } from '../../support/ranking-graph';

const T0 = 1_600_000_000_000;
const MEMBERS = ['p0', 'p1', 'p2', 'p3', 'p4', 'p5'];

/** A gate on the next store of a settle round (group_scores_store with a token): held till released. */
function holdNextStore(store: GroupBoardsStore) {
  const functions: RedisFunctions = store.functions;
  const call = functions.call.bind(functions);
  let reached!: () => void;
  let release!: () => void;
  const held = { reached: new Promise<void>((resolve) => (reached = resolve)), stored: [] as string[] };
  const gate = new Promise<void>((resolve) => (release = resolve));
  let armed = true;
  const spy = jest.spyOn(functions, 'call').mockImplementation(async (fn, input) => {
    const storing = fn === store.fns.groupScoresStore && (input as { token: string }).token !== '';
    if (!storing || !armed) return call(fn, input);
    armed = false;
    reached();
    await gate;
    const answer = await call(fn, input);
    held.stored = (answer as { stored: string[] }).stored;
    return answer;
  });
  return { held, release, spy };
}

/**
 * Issue #48: two reads settling the same dirty group of a group board over a sharded member board.
 * Round A claims the group, reads the shards' rows and is held before it stores; a member write then
 * moves the group, and round B (another read) claims it again, stores the new score and clears the
 * marks. Released, A's store of its older score is refused by the claim check (B claimed the group
 * after it): A stores nothing, and every read answers B's score. Without the check A's stale score
 * overwrote B's, and with B's marks cleared nothing made the group dirty again.
 */
describe.each(TOPOLOGIES)('group boards over 3 shards: a settle round outrun by another (%s)', (topology) => {
  const clock = new FakeClock(T0);
  const world = useRankingGraph(topology, clock, {});

  const scores = async () => {
    const top = await world.graph.ranking.top('rg', undefined, 0, 10);
    return top.items.map(({ item, score }) => [item, score]);
  };

  it("refuses the held round's store once a later round claimed the group, and reads the later score", async () => {
    await world.graph.ranking.putBoard({ name: 'rm', windows: [{ name: 'w', period: 3600, interval: 60 }], shards: 3 });
    await world.graph.ranking.putBoard({ name: 'rg', groupOf: { board: 'rm', window: 'w', top: 2, decay: 1 } });
    for (const [i, item] of MEMBERS.entries()) {
      await world.graph.groupBoards.setMember({ name: 'rg', group: 'red', item });
      await world.graph.ranking.increment('rm', item, i + 1);
    }
    expect(await scores()).toEqual([['red', 11]]); // p5 6 + p4 5
    await world.graph.ranking.increment('rm', 'p0', 10); // red: 11 + 6

    const { held, release, spy } = holdNextStore(world.graph.module.get(GroupBoardsStore));
    const first = world.graph.ranking.top('rg', undefined, 0, 10);
    await held.reached; // round A claimed red and read 11 + 6 from the shards
    await world.graph.ranking.increment('rm', 'p1', 20); // red: 22 + 11
    expect(await scores()).toEqual([['red', 33]]); // round B, whole
    release();
    const answered = await first;
    spy.mockRestore();

    expect(answered.items.map(({ item, score }) => [item, score])).toEqual([['red', 33]]);
    expect(await scores()).toEqual([['red', 33]]);
    expect(held.stored).toEqual([]); // A stood down: B claimed red after it
  });
});
