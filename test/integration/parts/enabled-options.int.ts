import { TOPOLOGIES } from '../../../harness/redis';
import { useRankingStore } from '../../support/ranking-store';

/**
 * The options a board enables (config field `options`, issue #46): a call runs the hooks of those
 * options only, and a config without the field (or stamped with another config version: written by a
 * library before it) runs every option's, each checking the config itself.
 */
describe.each(TOPOLOGIES)('ranking: the options a board enables (real Redis, %s)', (topology) => {
  const world = useRankingStore(topology);
  const { raw } = world;
  const windows = [{ name: 'h', period: '1h', interval: '1h' }];

  /** Two items reaching the same score, `a` first: listed a, b with ties first, else b, a (ids descending). */
  async function tiedListing(): Promise<string[]> {
    await world.ranking.increment('t', 'a', 1);
    await world.ranking.increment('t', 'b', 1);
    return (await world.ranking.top('t', 'h', 0, 10)).items.map((row) => row.item);
  }

  it('names none on a board of no option, and the ones a PUT turns on, stamped with its version', async () => {
    const cfg = await world.redis.client.hmget(raw('cfg'), 'version', 'options');
    expect(cfg[1]).toBe(`${cfg[0]}|`);
    await world.ranking.putBoard({ name: 't', windows, ties: 'first', groups: true });
    const [version, options] = await world.redis.client.hmget(raw('cfg', 't'), 'version', 'options');
    // The names come in the order the modules registered their hooks, which the modules' dependencies decide.
    const [stamp, names] = (options ?? '').split('|');
    expect([stamp, names.split(',').sort()]).toEqual([version, ['groups', 'ties']]);
    await world.ranking.putBoard({ name: 't', windows, groups: false });
    expect(await world.redis.client.hget(raw('cfg', 't'), 'options')).toMatch(/\|ties$/);
  });

  it('runs an enabled option: ties: first lists equal scores by when they were reached', async () => {
    await world.ranking.putBoard({ name: 't', windows, ties: 'first' });
    expect(await tiedListing()).toEqual(['a', 'b']);
  });

  it('runs every option on a config without the field, or with the field of another config version', async () => {
    await world.ranking.putBoard({ name: 't', windows, ties: 'first' });
    await world.redis.client.hdel(raw('cfg', 't'), 'options');
    expect(await tiedListing()).toEqual(['a', 'b']);
    await world.redis.client.hset(raw('cfg', 't'), 'options', 'an-older-version|');
    await world.ranking.increment('t', 'c', 2);
    expect((await world.ranking.top('t', 'h', 0, 10)).items.map((row) => row.item)).toEqual(['c', 'a', 'b']);
  });

  it("names an option again on a PUT changing nothing when its state is stored unnamed (an older library's moderation)", async () => {
    await world.ranking.putBoard({ name: 't', windows, shards: 2 });
    await world.ranking.increment('t', 'a', 2);
    await world.ranking.increment('t', 'b', 1);
    const listed = async () => (await world.ranking.top('t', 'h', 0, 10)).items.map((row) => row.item);
    // What moderation_set of a library before `options` stores on every shard: states and their count.
    for (const shard of [0, 1]) {
      const tag = `{${world.redis.prefix}board:t${shard === 0 ? '' : `/${shard}`}}`;
      await world.redis.client.hset(`${tag}:moderation`, 'a', 'hidden');
      await world.redis.client.hset(`${tag}:cfg`, 'modheld', 1);
    }
    expect(await listed()).toEqual(['a', 'b']);
    expect((await world.ranking.putBoard({ name: 't', windows, shards: 2 })).created).toBe(false);
    expect(await listed()).toEqual(['b']);
  });

  it('runs no hook of an option the field does not name (the field decides, not the option field)', async () => {
    await world.ranking.putBoard({ name: 't', windows, ties: 'first' });
    const version = await world.redis.client.hget(raw('cfg', 't'), 'version');
    await world.redis.client.hset(raw('cfg', 't'), 'options', `${version}|`);
    expect(await tiedListing()).toEqual(['b', 'a']);
  });
});
