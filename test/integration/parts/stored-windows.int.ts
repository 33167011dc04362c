import { TOPOLOGIES } from '../../../harness/redis';
import { windowsFromStored } from '../../../src/ranking/boards/stored-windows';
import { PASS, T0, useRankingStore } from '../../support/ranking-store';

/** Board `b`'s windows as the configs stored before the text form held them (cjson's key order). */
const JSON_WINDOWS = JSON.stringify([
  { createdAtMs: T0, intervalSec: 60, periodSec: 180, name: 'm' },
  { createdAtMs: T0, intervalSec: 3600, periodSec: 3600, name: 'h' },
]);

describe.each(TOPOLOGIES)("ranking store: a board config's stored windows (real Redis, %s)", (topology) => {
  const world = useRankingStore(topology);
  const { raw } = world;
  const encoding = (key: string) => world.redis.client.call('OBJECT', 'ENCODING', key);

  it('keeps plain windows as text, so the config hash stays a listpack under Redis defaults', async () => {
    world.clock.advanceSec(61);
    await world.putB({ also: [{ name: 'w', period: '10m', interval: '1m' }] });
    await world.ranking.increment('b', 'x', 1);
    const stored = await world.redis.client.hget(raw('cfg'), 'windows');
    expect(stored).toBe(`m 180 60 ${T0},h 3600 3600,w 600 60 ${T0 + 61_000}`);
    expect(windowsFromStored(stored ?? '')).toEqual([
      { name: 'm', periodSec: 180, intervalSec: 60, createdAtMs: T0 },
      { name: 'h', periodSec: 3600, intervalSec: 3600, createdAtMs: T0 },
      { name: 'w', periodSec: 600, intervalSec: 60, createdAtMs: T0 + 61_000 },
    ]);
    expect(await encoding(raw('cfg'))).toBe('listpack');
  });

  it('keeps windows with more than the plain fields as JSON, and reads them back', async () => {
    const snapshots = { keep: 3, top: 5 };
    await world.putB({ also: [{ name: 's', period: '1h', interval: '1m', snapshots }] });
    const stored = (await world.redis.client.hget(raw('cfg'), 'windows')) ?? '';
    expect(windowsFromStored(stored).map((w) => [w.name, w.snapshots])).toEqual([
      ['m', undefined],
      ['h', undefined],
      ['s', snapshots],
    ]);
    expect((await world.putB({ also: [{ name: 's', period: '1h', interval: '1m', snapshots }] })).created).toBe(false);
    expect((await world.ranking.getBoard('b')).windows.map((w) => w.name)).toEqual(['m', 'h', 's']);
  });

  it('copies the text to every shard of a sharded board; a PUT of the same config rewrites shards held as JSON', async () => {
    const put = () =>
      world.ranking.putBoard({ name: 's', windows: [{ name: 'h', period: '1h', interval: '1m' }], shards: 3 });
    await put();
    const keys = [0, 1, 2].map((shard) =>
      shard === 0 ? raw('cfg', 's') : `{${world.redis.prefix}board:s/${shard}}:cfg`,
    );
    const json = JSON.stringify([{ createdAtMs: T0, intervalSec: 60, periodSec: 3600, name: 'h' }]);
    for (const key of keys) {
      expect(await world.redis.client.hget(key, 'windows')).toBe(`h 3600 60 ${T0}`);
      expect(await encoding(key)).toBe('listpack');
      await world.redis.client.hset(key, 'windows', json);
    }
    expect((await put()).created).toBe(false);
    for (const key of keys) {
      expect(await world.redis.client.hget(key, 'windows')).toBe(`h 3600 60 ${T0}`);
      expect(await encoding(key)).toBe('listpack');
    }
  });

  it('reads, writes, expires and deletes a board stored with JSON windows; a PUT of the same config moves it to text', async () => {
    // Board `old`, which the service never loaded: `b`'s config as stored before the text form (a value
    // over 64 bytes makes the hash a hash table).
    const stored = await world.redis.client.hgetall(raw('cfg'));
    await world.redis.client.hset(raw('cfg', 'old'), { ...stored, windows: JSON_WINDOWS });
    await world.redis.client.zadd(`${world.redis.prefix}boards:names`, 0, 'old');
    expect(await encoding(raw('cfg', 'old'))).toBe('hashtable');
    await world.ranking.increment('old', 'x', 2);
    await world.ranking.increment('old', 'y', 1);
    expect((await world.ranking.top('old', 'm', 0, 10)).items.map((row) => [row.item, row.score])).toEqual([
      ['x', 2],
      ['y', 1],
    ]);
    world.clock.advanceSec(181);
    expect((await world.ranking.expireDue(PASS)).failures).toBe(0);
    expect(await world.redis.client.zcard(raw('m:top', 'old'))).toBe(0);
    expect((await world.ranking.top('old', 'h', 0, 10)).items.map((row) => row.item)).toEqual(['x', 'y']);

    const windows = [
      { name: 'm', period: '3m', interval: '1m' },
      { name: 'h', period: '1h', interval: '1h' },
    ];
    expect((await world.ranking.putBoard({ name: 'old', windows })).created).toBe(false);
    expect(await world.redis.client.hget(raw('cfg', 'old'), 'windows')).toBe(`m 180 60 ${T0},h 3600 3600`);
    expect(await world.redis.client.hget(raw('cfg', 'old'), 'version')).toBe(stored.version);
    expect(await encoding(raw('cfg', 'old'))).toBe('listpack');
    expect((await world.ranking.top('old', 'h', 0, 10)).items.map((row) => row.item)).toEqual(['x', 'y']);

    await world.redis.client.hset(raw('cfg', 'old'), 'windows', JSON_WINDOWS);
    await world.ranking.deleteBoard('old');
    // Left: at most the stored answers of writes older than the resend guard, which expire on their own.
    const left = await world.redis.keys('board:old}*');
    expect(left.filter((key) => !key.includes('}:idem:'))).toEqual([]);
    for (const key of left) expect(await world.redis.client.pttl(key)).toBeGreaterThan(0);
  });
});
