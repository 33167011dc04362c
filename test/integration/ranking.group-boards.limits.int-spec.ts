import { FakeClock } from '../../harness/clock';
import { useRankingService } from '../../harness/ranking';
import { useRankingGraph } from '../support/ranking-graph';

// The group board's caps, made small enough to reach: the same code path as the real ones.
jest.mock('../../src/ranking/options/group-of/group-of.limits', () => ({
  ...jest.requireActual<object>('../../src/ranking/options/group-of/group-of.limits'),
  MAX_GROUPS_PER_BOARD: 2,
  MAX_MEMBERS_PER_GROUP: 2,
  MAX_MEMBERS_PER_BOARD: 3,
  // keep 1: each listing's record holds at most floor(6 / (1 + 2)) = 2 counted members.
  MAX_RECORDED_MEMBERS_PER_BOARD: 6,
}));

describe('group boards: memberships are bounded per group board (429 QUOTA_EXCEEDED, nothing changed)', () => {
  const setup = useRankingService('single');

  it('refuses a third group, a third member of a group and a fourth member, and takes members again after one leaves', async () => {
    await setup.ranking.putBoard({ name: 'players', windows: [{ name: 'w', period: 60, interval: 20 }] });
    await setup.ranking.putBoard({ name: 'teams', groupOf: { board: 'players', window: 'w', top: 2, decay: 1 } });
    const join = (group: string | null, item: string) => setup.groupBoards.setMember({ name: 'teams', group, item });
    const membersKey = `{${setup.redis.prefix}board:players}:w%teams:mem`;
    await join('red', 'a');
    await join('red', 'b');
    await expect(join('red', 'c')).rejects.toMatchObject({ code: 'QUOTA_EXCEEDED', message: /2 members in one group/ });
    await join('blue', 'c');
    await expect(join('green', 'd')).rejects.toMatchObject({ code: 'QUOTA_EXCEEDED', message: /2 groups/ });
    await expect(join('blue', 'd')).rejects.toMatchObject({ code: 'QUOTA_EXCEEDED', message: /3 members/ });
    expect(await setup.redis.client.hgetall(membersKey)).toEqual({ a: 'red', b: 'red', c: 'blue' });
    await join('blue', 'a'); // a move creates nothing: taken at the cap
    await join(null, 'b');
    await join('green', 'd'); // red went with its last member: a second group again
    expect(await setup.redis.client.hgetall(membersKey)).toEqual({ a: 'blue', c: 'blue', d: 'green' });
  });
});

describe("group boards: the records of kept listings hold at most each listing's share (MAX_RECORDED_MEMBERS_PER_BOARD)", () => {
  const clock = new FakeClock(0);
  const world = useRankingGraph('single', clock, {});

  it('records groups best first while they fit, boundary after boundary; a retraction rewrites only those', async () => {
    const { ranking, groupBoards, retractions } = world.graph;
    const snapshots = { keep: 1, top: 10 };
    await ranking.putBoard({ name: 'ply', windows: [{ name: 'w', period: 3600, interval: 20, snapshots }] });
    await ranking.putBoard({ name: 'tms', groupOf: { board: 'ply', window: 'w', top: 2, decay: 1 } });
    const groupOf = { a: 'red', b: 'red', c: 'blue' };
    for (const [item, group] of Object.entries(groupOf)) await groupBoards.setMember({ name: 'tms', group, item });
    // red (a, b) outscores blue (c): red's 2 counted members take the listing's share, blue's 1 more would pass it.
    for (let boundary = 0; boundary < 4; boundary++) {
      for (const [item, amount] of [
        ['a', 3],
        ['b', 2],
        ['c', 1],
      ] as const)
        await ranking.increment('ply', item, amount);
      clock.advanceMs(20_000);
    }
    await ranking.increment('ply', 'a', 1); // crosses the last boundary
    const records = await world.redis.client.keys(`{${world.redis.prefix}board:ply}:w%tms:cnt:*`);
    expect(records.length).toBeGreaterThan(1);
    for (const key of records) {
      const fields = await world.redis.client.hkeys(key);
      // group_history_out_lib's fields: "g\31<group>" (its counted members), "i\31<item>" (its group).
      const named = fields.filter((field) => field.startsWith('g\x1f') || field.startsWith('i\x1f'));
      expect(named.sort()).toEqual(['g\x1fred', 'i\x1fa', 'i\x1fb']);
    }
    const kept = async () =>
      (await ranking.history('tms', undefined, undefined)).items.map(({ item, score }) => ({ item, score }));
    expect(await kept()).toEqual([
      { item: 'red', score: 20 },
      { item: 'blue', score: 4 },
    ]);
    for (const item of ['a', 'c']) {
      const started = (await retractions.start('ply', { kind: 'item', id: item })).body;
      await retractions.settled('ply', started.id);
    }
    // red lost a's share; blue, not recorded, keeps its row.
    expect(await kept()).toEqual([
      { item: 'red', score: 8 },
      { item: 'blue', score: 4 },
    ]);
  });
});
