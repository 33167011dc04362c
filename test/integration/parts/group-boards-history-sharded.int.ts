import { FakeClock } from '../../../harness/clock';
import { TOPOLOGIES } from '../../../harness/redis';
import { GroupBoardsStore } from '../../../src/ranking/group-boards/group-boards.store';
import { RetractionStore } from '../../../src/ranking/retraction/retraction.store';
import type { RedisFunctions } from '../../../src/redis/redis-functions';
import { useRankingGraph } from '../../support/ranking-graph';

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

/** A race of the retraction of p1 with a merge: the clocks of the merge's and the retraction's instances, the members. */
interface Race {
  name: string;
  /** ms after T0 the merge (a read of the group board) begins and the retraction runs at */
  mergeMs: number;
  retractMs: number;
  scores: Record<string, number>;
  rows: Array<{ rank: number; item: string; score: number }>;
}

const RACES: Race[] = [
  {
    name: 'one clock',
    ...{ mergeMs: 20_000, retractMs: 20_000, scores: { p0: 1, p1: 5, p2: 3, p3: 2 } },
    // red counted p1 and p2: p2 alone now (p0 does not move in past top)
    rows: [
      { rank: 1, item: 'red', score: 3 },
      { rank: 2, item: 'blue', score: 2 },
    ],
  },
  {
    name: "the retraction's instance 5 s behind the merge's",
    ...{ mergeMs: 30_000, retractMs: 25_000, scores: { p0: 1, p1: 5, p2: 3, p3: 2 } },
    rows: [
      { rank: 1, item: 'red', score: 3 },
      { rank: 2, item: 'blue', score: 2 },
    ],
  },
  {
    // Shard 0 names the group board at the merge's start, before any listing is kept there.
    name: 'shard 0 holding no member, the first listing',
    ...{ mergeMs: 20_000, retractMs: 20_000, scores: { p1: 5, p2: 3 } },
    rows: [{ rank: 1, item: 'red', score: 3 }],
  },
];

/**
 * Issue #48: an item retraction racing the merge of a group board's listing over a sharded member
 * board. The merge reads the shards' parts (the item counted), then is held before it stores the
 * listing on shard 0; the retraction runs whole meanwhile (it marks the item's part, already read, and
 * finds no listing to rewrite on shard 0). Released, the stored listing must still leave the item out,
 * whatever the two instances' clocks, and on a board whose shard 0 holds no member (nothing named the
 * group board there before its first listing). Members (shard of each over 3): p0 0, p1 1, p2 2 in
 * red, p3 0 in blue; top 2, decay 1.
 */
describe.each(TOPOLOGIES.flatMap((topology) => RACES.map((race) => [topology, race.name, race] as const)))(
  'group boards over 3 shards: a retraction racing a merge (%s, %s)',
  (topology, _, race) => {
    const clock = new FakeClock(T0);
    const world = useRankingGraph(topology, clock, {});

    it('leaves the retracted item out of the listing the merge stores after the retraction ran', async () => {
      const { ranking, groupBoards, retractions } = world.graph;
      const snapshots = { keep: 4, top: 2 };
      await ranking.putBoard({ name: 'hm', windows: [{ name: 'w', period: 60, interval: 20, snapshots }], shards: 3 });
      await ranking.putBoard({ name: 'hg', groupOf: { board: 'hm', window: 'w', top: 2, decay: 1 } });
      for (const [item, score] of Object.entries(race.scores)) {
        await groupBoards.setMember({ name: 'hg', group: item === 'p3' ? 'blue' : 'red', item });
        await ranking.increment('hm', item, score);
      }
      clock.setMs(T0 + race.mergeMs);

      const { held, release, spy } = holdNextListing(world.graph.module.get(GroupBoardsStore));
      const read = ranking.top('hg', undefined, 0, 10);
      await held; // the merge read every shard's part at the boundary: red 5 + 3, blue 2
      clock.setMs(T0 + race.retractMs);
      const started = (await retractions.start('hm', { kind: 'item', id: 'p1' })).body;
      await retractions.settled('hm', started.id);
      clock.setMs(T0 + race.mergeMs);
      release();
      await read;
      spy.mockRestore();

      const kept = await ranking.history('hg', undefined, undefined);
      expect({ at: kept.at, rows: kept.items.map(({ rank, item, score }) => ({ rank, item, score })) }).toEqual({
        at: T0 / 1000 + 20,
        rows: race.rows,
      });
    });
  },
);

/**
 * Issue #48: a rolling boundary where a shard holding members ran no call in the slot it ends (only
 * shard 0 ran one there: a membership change of its item) keeps its listing all the same, the quiet
 * shards' members counted as they stood then: the next crossing of each records its quiet parts
 * (group_parts_lib), the slots that left the window by then taken out. A boundary where no shard ran
 * keeps none, as on an unsharded member board. Members (shard of each over 3): p0 0, p1 1 in red; p2 2,
 * p3 0 in blue; top 2, decay 1. (Writes and reads run on every shard.) On a sum board and a max one.
 */
const QUIET_CASES = TOPOLOGIES.flatMap((topology) =>
  (['sum', 'max'] as const).map((mode) => [topology, mode] as const),
);

describe.each(QUIET_CASES)(
  'group boards over 3 shards: boundaries some shards were quiet through (%s, %s)',
  (topology, mode) => {
    const clock = new FakeClock(T0);
    const world = useRankingGraph(topology, clock, {});

    it("keeps the listing where only shard 0 ran, with the quiet shards' members as they stood then", async () => {
      const { ranking, groupBoards } = world.graph;
      const snapshots = { keep: 4, top: 2 };
      const windows = [{ name: 'w', period: 60, interval: 20, snapshots }];
      await ranking.putBoard({ name: 'qm', windows, shards: 3, ...(mode === 'max' ? { aggregate: mode } : {}) });
      await ranking.putBoard({ name: 'qg', groupOf: { board: 'qm', window: 'w', top: 2, decay: 1 } });
      const join = (item: string) =>
        groupBoards.setMember({ name: 'qg', group: item === 'p0' || item === 'p1' ? 'red' : 'blue', item });
      const write = (item: string, value: number) =>
        mode === 'sum' ? ranking.increment('qm', item, value) : ranking.score('qm', item, value);
      for (const [item, score] of Object.entries({ p0: 1, p1: 5, p2: 3, p3: 2 })) {
        await join(item);
        await write(item, score);
      }
      clock.advanceMs(20_000);
      await write('p0', mode === 'sum' ? 1 : 2); // p0 2 (sum: 1 in this slot)
      await ranking.top('qg', undefined, 0, 10);
      for (let slot = 0; slot < 2; slot++) {
        clock.advanceMs(20_000);
        await join('p0'); // shard 0 alone runs a call in this slot
      }
      clock.advanceMs(40_000);
      const at = T0 / 1000;
      const points = async (group: string) =>
        (await ranking.itemHistory('qg', undefined, group, undefined, undefined)).points;
      // The slots ending at +40 and +60 hold slot +0 (red p1 5 + p0 2, blue p2 3 + p3 2); the one ending
      // at +80 no longer does (red p0 as slot +20 holds it, blue none).
      expect(await points('red')).toEqual([
        { at: at + 40, rank: 1, score: 7 },
        { at: at + 60, rank: 1, score: 7 },
        { at: at + 80, rank: 1, score: mode === 'sum' ? 1 : 2 },
      ]);
      expect(await points('blue')).toEqual([
        { at: at + 40, rank: 2, score: 5 },
        { at: at + 60, rank: 2, score: 5 },
        { at: at + 80, rank: null, score: null },
      ]);
      const latest = await ranking.history('qg', undefined, undefined);
      expect(latest.at).toBe(at + 80); // none at +100: no shard ran in the slot it ends
    });
  },
);

/**
 * Issue #48: the boundaries kept where the group board's next settle round (a read, the scheduler's
 * visit) comes more than 3 slots after them. A shard keeps its newest 4 parts till merged, and a shard
 * quiet through slots records its quiet parts at the 3 boundaries before its next crossing only: a
 * boundary before those keeps no listing (here +100: shard 0 ran in the slot it ends and still holds
 * its part, shard 1 has none). The history read at it answers the kept listing before it; the item
 * history has no point there. Members (shard of each over 3): p0 0, p1 1 in red; top 2, decay 1.
 */
describe.each(TOPOLOGIES)('group boards over 3 shards: a shard quiet over more than 3 slots (%s)', (topology) => {
  const clock = new FakeClock(T0);
  const world = useRankingGraph(topology, clock, {});

  it('keeps no listing at a boundary more than 3 slots before the quiet shard crosses again', async () => {
    const { ranking, groupBoards } = world.graph;
    const windows = [{ name: 'w', period: 600, interval: 20, snapshots: { keep: 10, top: 2 } }];
    await ranking.putBoard({ name: 'sm', windows, shards: 3 });
    await ranking.putBoard({ name: 'sg', groupOf: { board: 'sm', window: 'w', top: 2, decay: 1 } });
    const join = (item: string) => groupBoards.setMember({ name: 'sg', group: 'red', item });
    for (const [item, score] of Object.entries({ p0: 1, p1: 5 })) {
      await join(item);
      await ranking.increment('sm', item, score);
    }
    clock.advanceMs(20_000);
    await ranking.top('sg', undefined, 0, 10); // every shard runs a call in slot +20
    for (let slot = 0; slot < 6; slot++) {
      clock.advanceMs(20_000);
      await join('p0'); // shard 0 alone runs a call in slots +40 to +140
    }
    clock.advanceMs(20_000);
    await ranking.top('sg', undefined, 0, 10);
    const at = T0 / 1000;
    const { points } = await ranking.itemHistory('sg', undefined, 'red', undefined, undefined);
    expect(points.map((point) => point.at - at)).toEqual([20, 120, 140, 160]);
    expect(points.map((point) => point.score)).toEqual([6, 6, 6, 6]);
    expect((await ranking.history('sg', undefined, at + 100)).at).toBe(at + 20);
  });
});

/**
 * Issue #48: an item retraction on a sharded board calls shard 0's group listings (group_history_retract)
 * only when the item's shard names a group board (groupedBy, answered by retract_item): an item on a
 * shard naming none is in no group, and no group board's listing counts it.
 */
describe.each(TOPOLOGIES)('item retractions on a sharded board and its group listings (%s)', (topology) => {
  const clock = new FakeClock(T0);
  const world = useRankingGraph(topology, clock, {});

  it('calls group_history_retract for an item of a shard naming a group board only', async () => {
    const { ranking, groupBoards, retractions } = world.graph;
    const store = world.graph.module.get(RetractionStore);
    const functions: RedisFunctions = store.functions;
    const call = functions.call.bind(functions);
    let listingCalls = 0;
    const spy = jest.spyOn(functions, 'call').mockImplementation((fn, input) => {
      if (fn === store.fns.groupHistoryRetract) listingCalls++;
      return call(fn, input);
    });
    const retracted = async (board: string, item: string) => {
      listingCalls = 0;
      const started = (await retractions.start(board, { kind: 'item', id: item })).body;
      await retractions.settled(board, started.id);
      return listingCalls;
    };
    const windows = [{ name: 'w', period: 60, interval: 20 }];
    await ranking.putBoard({ name: 'rn', windows, shards: 3 });
    await ranking.putBoard({ name: 'rj', windows, shards: 3 });
    await ranking.putBoard({ name: 'rjg', groupOf: { board: 'rj', window: 'w', top: 2, decay: 1 } });
    await groupBoards.setMember({ name: 'rjg', group: 'red', item: 'p1' });
    for (const [board, item] of [
      ['rn', 'p1'],
      ['rj', 'p1'],
      ['rj', 'p2'],
    ])
      await ranking.increment(board, item, 1);
    expect(await retracted('rn', 'p1')).toBe(0); // no group board over rn
    expect(await retracted('rj', 'p2')).toBe(0); // shard 2 of rj holds no member
    expect(await retracted('rj', 'p1')).toBeGreaterThan(0);
    spy.mockRestore();
  });
});
