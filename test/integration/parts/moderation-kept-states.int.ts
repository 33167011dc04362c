import { ADMIN } from '../../../harness/app';
import { useTestApp } from '../../support/app-world';

/**
 * Each shard keeps its items' moderation states (its own, else its group's) in `<tag>:modeff`, which
 * every read asks instead of the states, the group states and each group's items. A shard moderated
 * before it existed (no config field `modeff`) is read from the states themselves and builds it at its
 * next moderation write; a board PUT builds it whole. Either way the listing is the same.
 */
const T0 = 1_700_002_800_000;

describe('moderation: the states each shard keeps for its reads (single)', () => {
  const world = useTestApp('single', T0);
  const { http } = world;
  const windows = [{ name: 'w', period: '1h', interval: '1h' }];
  let board = 0;

  const tag = (name: string) => `{${world.redis.prefix}board:${name}}`;
  const put = (name: string, kind: 'items' | 'groups', id: string, state: 'hidden' | 'allowed') =>
    http().put(`/admin/boards/${name}/moderation/${kind}/${id}`).set(ADMIN).send({ state }).expect(204);
  const write = (name: string, items: Array<{ item: string; amount: number; group: string }>) =>
    http().post(`/boards/${name}/increments`).send({ items }).expect(200);
  const listed = async (name: string) =>
    ((await http().get(`/boards/${name}/top?window=w`).expect(200)).body.items as Array<{ item: string }>).map(
      (row) => row.item,
    );
  /** What an older library left: the states, and neither the kept states nor the field saying they are built. */
  const forget = async (name: string) => {
    await world.redis.client.del(`${tag(name)}:modeff`);
    await world.redis.client.hdel(`${tag(name)}:cfg`, 'modeff');
  };

  /** a, b of g1; c of g2; d of g3. g1 hidden, a allowed on its own, d hidden on its own: a and c listed. */
  async function moderated(): Promise<string> {
    const name = `kept${board++}`;
    await http().put(`/admin/boards/${name}`).set(ADMIN).send({ windows, groups: true }).expect(201);
    await write(name, [
      { item: 'a', amount: 4, group: 'g1' },
      { item: 'b', amount: 3, group: 'g1' },
      { item: 'c', amount: 2, group: 'g2' },
      { item: 'd', amount: 1, group: 'g3' },
    ]);
    await put(name, 'groups', 'g1', 'hidden');
    await put(name, 'items', 'a', 'allowed');
    await put(name, 'items', 'd', 'hidden');
    return name;
  }

  it('keeps each item state, its own or its latest group, as writes move items between groups', async () => {
    const name = await moderated();
    expect(await listed(name)).toEqual(['a', 'c']);
    await write(name, [{ item: 'c', amount: 1, group: 'g1' }]);
    expect(await listed(name)).toEqual(['a']);
    expect(await world.redis.client.hgetall(`${tag(name)}:modeff`)).toEqual({
      a: 'allowed',
      b: 'hidden',
      c: 'hidden',
      d: 'hidden',
    });
    await write(name, [{ item: 'c', amount: 1, group: 'g2' }]);
    expect(await listed(name)).toEqual(['c', 'a']);
  });

  it('reads a shard moderated before it kept them from the states, and builds them at its next moderation write', async () => {
    const name = await moderated();
    await forget(name);
    expect(await listed(name)).toEqual(['a', 'c']);
    await write(name, [{ item: 'c', amount: 1, group: 'g1' }]);
    expect(await listed(name)).toEqual(['a']);
    await put(name, 'items', 'd', 'allowed');
    expect(await world.redis.client.hget(`${tag(name)}:cfg`, 'modeff')).toBe('1');
    expect(await world.redis.client.hgetall(`${tag(name)}:modeff`)).toEqual({
      a: 'allowed',
      b: 'hidden',
      c: 'hidden',
      d: 'allowed',
    });
    expect(await listed(name)).toEqual(['a', 'd']);
  });

  it('reads a page from the top past the hidden items at its head, in a window and in a view', async () => {
    const name = `head${board++}`;
    const views = [{ name: 'v', mode: 'decay', window: 'w', halfLife: '30m' }];
    await http().put(`/admin/boards/${name}`).set(ADMIN).send({ windows, views }).expect(201);
    const items = ['a', 'b', 'c', 'd', 'e', 'f'].map((item, i) => ({ item, amount: 10 - i }));
    await http().post(`/boards/${name}/increments`).send({ items }).expect(200);
    for (const item of ['a', 'b', 'd']) await put(name, 'items', item, 'hidden');
    for (const window of ['w', 'v']) {
      const { body } = await http().get(`/boards/${name}/top?window=${window}&limit=2`).expect(200);
      expect((body.items as Array<{ item: string; rank: number }>).map((row) => [row.rank, row.item])).toEqual([
        [1, 'c'],
        [2, 'e'],
      ]);
    }
  });

  it('a deleted board leaves no group, group state or kept state behind: made again, it starts without', async () => {
    const name = await moderated();
    await http().delete(`/admin/boards/${name}`).set(ADMIN).expect(204);
    for (let attempt = 0; (await world.redis.dataKeys(`board:${name}*`)).length > 0 && attempt < 40; attempt++)
      await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await world.redis.dataKeys(`board:${name}*`)).toEqual([]);
    await http().put(`/admin/boards/${name}`).set(ADMIN).send({ windows, groups: true }).expect(201);
    await write(name, [{ item: 'x', amount: 1, group: 'g1' }]);
    await put(name, 'items', 'y', 'hidden');
    expect(await listed(name)).toEqual(['x']);
  });

  it('builds them whole at a board PUT', async () => {
    const name = await moderated();
    await forget(name);
    await http().put(`/admin/boards/${name}`).set(ADMIN).send({ windows, groups: true }).expect(200);
    expect(await world.redis.client.hgetall(`${tag(name)}:modeff`)).toEqual({ a: 'allowed', b: 'hidden', d: 'hidden' });
    expect(await listed(name)).toEqual(['a', 'c']);
  });
});
