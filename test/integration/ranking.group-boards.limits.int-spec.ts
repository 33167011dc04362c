import { useRankingService } from '../../harness/ranking';

// The group board's caps, made small enough to reach: the same code path as the real ones.
jest.mock('../../src/ranking/options/group-of/group-of.limits', () => ({
  ...jest.requireActual<object>('../../src/ranking/options/group-of/group-of.limits'),
  MAX_GROUPS_PER_BOARD: 2,
  MAX_MEMBERS_PER_GROUP: 2,
  MAX_MEMBERS_PER_BOARD: 3,
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
