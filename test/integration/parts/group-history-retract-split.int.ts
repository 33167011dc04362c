import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Cluster, Redis } from 'ioredis';
import { FakeClock } from '../../../harness/clock';
import { TOPOLOGIES } from '../../../harness/redis';
import { RetractionStore } from '../../../src/ranking/retraction/retraction.store';
import { useRankingGraph } from '../../support/ranking-graph';

const T0 = 1_600_000_000_000;
/** g0's members: its best one retracted, the others score 1 each, so g0 sinks below every other group. */
const MEMBERS = 200;
/** The other groups, one member each, scoring MEMBERS + k: above g0 without its best member. */
const OTHERS = 950;

/**
 * The work a call's rewrite of a listing may do (group_history_out_lib.lua's MEMBER_WORK, ROW_WORK and
 * WORK_PER_CALL): a weight per member of the group's record summed again (~2.7 k instructions) and per
 * listing row written again (~4 k), at most the bound a call.
 */
const BOUND = { member: 2, row: 3, perCall: 3000 };

/** The bound as the library holds it. */
function libraryBound(): typeof BOUND {
  const lua = readFileSync(join(__dirname, '../../../src/ranking/options/group-of/group_history_out_lib.lua'), 'utf8');
  const [, member, row, perCall] =
    /^local MEMBER_WORK, ROW_WORK, WORK_PER_CALL = (\d+), (\d+), (\d+)$/m.exec(lua) ?? [];
  return { member: Number(member), row: Number(row), perCall: Number(perCall) };
}

it("the bound is the library's", () => expect(libraryBound()).toEqual(BOUND));

const rowsOf = (text: string | null): string[] => (text ?? '').split('\x1e').filter((row) => row !== '');

/**
 * Issue #45: an item retraction rewriting a group board's kept merged listing (group_history_retract on
 * shard 0) sums the group's recorded members again and writes again every row its group's row passes.
 * A group sinking from first to last was one call of both (11.4-11.7 M instructions at 1 000 members and
 * 999 rows). Each call now does at most WORK_PER_CALL of that work (a unit weight
 * per member summed, another per row written again): past it, the group's record is rewritten in one
 * call and its row moved in the next, the listing reading as before the retraction until then. Counted
 * from the keys each call changed (the listing's rows written again, the group's record rewritten).
 */
describe.each(TOPOLOGIES)('a group listing rewritten by an item retraction, split over calls (%s)', (topology) => {
  const clock = new FakeClock(T0);
  const world = useRankingGraph(topology, clock, {});

  /** Every key matching `pattern` on every node. */
  async function keysLike(pattern: string): Promise<string[]> {
    const client = world.redis.client as Redis | Cluster;
    const nodes = 'nodes' in client ? client.nodes('master') : [client];
    return (await Promise.all(nodes.map((node) => node.keys(pattern)))).flat();
  }

  /** g0 first in `hg`'s newest kept listing over `hm` (2 shards unless told). */
  async function listed(hm: string, hg: string, shards = 2): Promise<void> {
    const { ranking, groupBoards } = world.graph;
    const snapshots = { keep: 1000, top: 1000 };
    await ranking.putBoard({ name: hm, windows: [{ name: 'w', period: 3600, interval: 60, snapshots }], shards });
    await ranking.putBoard({ name: hg, groupOf: { board: hm, window: 'w', top: MEMBERS, decay: 1 } });
    const joins = [
      ...Array.from({ length: MEMBERS }, (_, k) => ({ group: 'g0', item: `p${k}` })),
      ...Array.from({ length: OTHERS }, (_, k) => ({ group: `h${k}`, item: `q${k}` })),
    ];
    for (let first = 0; first < joins.length; first += 100)
      await Promise.all(joins.slice(first, first + 100).map((join) => groupBoards.setMember({ name: hg, ...join })));
    const entries = [
      ...Array.from({ length: MEMBERS }, (_, k) => ({ item: `p${k}`, amount: k === 0 ? 10 * MEMBERS * OTHERS : 1 })),
      ...Array.from({ length: OTHERS }, (_, k) => ({ item: `q${k}`, amount: MEMBERS + k })),
    ];
    await ranking.incrementBatch(hm, entries);
    clock.advanceMs(60_000);
    // The group board settles its dirty groups first, a few a round (GROUP_SETTLE_ROWS / top): a read
    // past its rounds is a 503.
    for (let read = 0; read < 200; read++)
      if (
        await ranking.history(hg, undefined, undefined).then(
          () => true,
          () => false,
        )
      )
        break;
  }

  const groupsOf = async (hg: string) =>
    (await world.graph.ranking.history(hg, undefined, undefined)).items.map(({ item, score }) => [item, score]);
  /** The listing once g0 scores `g0`: the other groups, then g0. */
  const listingWith = (g0: number) => [
    ...Array.from({ length: OTHERS }, (_, k) => [`h${OTHERS - 1 - k}`, MEMBERS + OTHERS - 1 - k]),
    ['g0', g0],
  ];
  /** One group_history_retract call of retraction `id` of `item` on `hm`: whether it is done. */
  async function stepped(hm: string, id: string, item: string): Promise<boolean> {
    const board = await world.graph.cache.get(hm);
    const store = world.graph.module.get(RetractionStore);
    return (await store.groupListingsStep(board, { id, item, nowMs: clock.nowMs() })).done;
  }

  it('rewrites the record in one call and moves the row in the next, each within WORK_PER_CALL', async () => {
    const bound = BOUND;
    await listed('sm', 'sg');
    const snaps = await keysLike('*board:sm}:w%sg:snap:*');
    expect(snaps).toHaveLength(1);
    const [snap, record] = [snaps[0], snaps[0].replace(/:snap:/, ':cnt:')];
    const client = world.redis.client;
    const before = await groupsOf('sg');
    expect(before[0][0]).toBe('g0');

    const seen: Array<Array<[string, number]>> = [];
    const works: number[] = [];
    for (let call = 0, done = false; !done && call < 10; call++) {
      const [text, members] = [await client.get(snap), await client.hget(record, 'g\x1fg0')];
      done = await stepped('sm', 'split', 'p0');
      const [after, membersAfter] = [await client.get(snap), await client.hget(record, 'g\x1fg0')];
      const old = new Set(rowsOf(text));
      const written = rowsOf(after).filter((row) => !old.has(row)).length;
      const summed = membersAfter !== members ? rowsOf(members).length : 0;
      works.push(summed * bound.member + written * bound.row);
      seen.push((await groupsOf('sg')) as Array<[string, number]>);
    }

    for (const work of works) expect(work).toBeLessThanOrEqual(bound.perCall);
    const expected = listingWith(MEMBERS - 1);
    // Each listing read between the calls is the one before the retraction or the one after it.
    for (const listing of seen.slice(0, -1)) expect([before, expected]).toContainEqual(listing);
    expect(seen.at(-1)).toEqual(expected);
    expect(seen.filter((listing) => listing[0][0] === 'g0').length).toBeGreaterThan(0);
  });

  it("moves the row to the record's score when another retraction of the group comes between the calls", async () => {
    await listed('cm', 'cg');
    expect(await stepped('cm', 'first', 'p0')).toBe(false);
    expect((await groupsOf('cg'))[0][0]).toBe('g0');
    // p1 out of the record p0 left: the row it moves sums neither.
    for (let call = 0; call < 10 && !(await stepped('cm', 'second', 'p1')); call++);
    expect(await groupsOf('cg')).toEqual(listingWith(MEMBERS - 2));
    for (let call = 0; call < 10 && !(await stepped('cm', 'first', 'p0')); call++);
    expect(await groupsOf('cg')).toEqual(listingWith(MEMBERS - 2));
  });

  it("an unsharded member board's retraction (retract_item's steps) ends with the same listing", async () => {
    const { retractions } = world.graph;
    await listed('um', 'ug', 1);
    const started = (await retractions.start('um', { kind: 'item', id: 'p0' })).body;
    await retractions.settled('um', started.id);
    expect(await groupsOf('ug')).toEqual(listingWith(MEMBERS - 1));
  });
});
