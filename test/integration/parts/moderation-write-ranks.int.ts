import { ADMIN } from '../../../harness/app';
import { TOPOLOGIES } from '../../../harness/redis';
import { useSharedTestApps } from '../../support/app-world';
import { commandCalls } from '../../support/slowlog';

/**
 * A write's rank on a board of many hidden items counts the hidden items ahead of it inside Redis
 * (moderation's hook exceptions_ahead, stored_ahead: a ZINTERSTORE of the results and the hidden items, one
 * ZCOUNT), not by a ZMSCORE of every hidden item read into Lua per window (issue #45: about 1.3 M
 * instructions a window at 200 hidden items). The rank a write answers is the one a read answers,
 * hidden items of better, equal and worse scores around it, on a sum board (only scores above 0
 * listed) and on an ascending `last` board (every score listed, negative ones among them); the
 * keys the count writes are gone when the call answers. The hidden items' set is stored once a call,
 * whatever its windows (a write of 8 windows at the moderation maxima: 18.4 M instructions with a
 * SADD a window, 14.1 M). Counted, never timed.
 */
const T0 = 1_700_003_600_000;
const HIDDEN = 40;

/** One app per topology: each block names its boards apart. */
const appFor = useSharedTestApps(T0);

describe.each(TOPOLOGIES)('moderation: a write ranks among many hidden items as a read does (%s)', (topology) => {
  const world = appFor(topology);
  const { http } = world;
  let board = 0;

  const tag = (name: string) => `{${world.redis.prefix}board:${name}}`;
  const hide = (name: string, item: string) =>
    http().put(`/admin/boards/${name}/moderation/items/${item}`).set(ADMIN).send({ state: 'hidden' }).expect(204);
  const readRank = async (name: string, item: string, window: string) =>
    (await http().get(`/boards/${name}/items/${item}?window=${window}`).expect(200)).body.rank as number;
  const calls = (command: string) => commandCalls(world.redis.client, command);
  /** The key a write's count keeps till it answers: the hidden items' set (each window's index is kept for the next). */
  const keptKeys = (name: string) => [`${tag(name)}:exasked`];

  /** The answer of a write: its amount, or on a board keeping a score, its score. */
  const send = (name: string, item: string, value: number, kept: boolean) =>
    kept
      ? http().post(`/boards/${name}/items/${item}/score`).send({ score: value }).expect(200)
      : http().post(`/boards/${name}/items/${item}/increment`).send({ amount: value }).expect(200);

  /** A board of items i0.. scored by `score`, every even one hidden (HIDDEN of them). */
  async function seeded(body: object, score: (n: number) => number, kept = false): Promise<string> {
    const name = `wranks-${topology}-${board++}`;
    await http().put(`/admin/boards/${name}`).set(ADMIN).send(body).expect(201);
    for (let n = 0; n < 2 * HIDDEN; n++) await send(name, `i${n}`, score(n), kept);
    for (let n = 0; n < 2 * HIDDEN; n += 2) await hide(name, `i${n}`);
    return name;
  }

  /** Each write's ranks against the read's in `windows`; answers the ZMSCOREs and SADDs the writes ran. */
  async function writesRankAsReads(name: string, windows: string[], writes: Array<[string, number]>, kept = false) {
    let zmscores = 0;
    let sadds = 0;
    for (const [item, value] of writes) {
      const [zmscoreBefore, saddBefore] = [await calls('zmscore'), await calls('sadd')];
      const written = await send(name, item, value, kept);
      zmscores += (await calls('zmscore')) - zmscoreBefore;
      sadds += (await calls('sadd')) - saddBefore;
      for (const window of windows)
        expect([item, window, written.body.windows[window].rank]).toEqual([
          item,
          window,
          await readRank(name, item, window),
        ]);
    }
    return { zmscores, sadds };
  }

  it.each([
    ['competition ties', {}],
    ['ties first', { ties: 'first' }],
  ])(
    'answers the read rank on a sum board of %s, ties with hidden items among them, running no ZMSCORE and at most one SADD a write',
    async (_, ties) => {
      const windows = [
        { name: 'h', period: '1h', interval: '1m' },
        { name: 'd', period: '1d', interval: '1h' },
        { name: 'w', period: '7d', interval: '1h' },
      ];
      // Scores 80, 80, 78, 78, ...: each hidden item tied with a shown one.
      const name = await seeded({ windows, ...ties }, (n) => 2 * HIDDEN - Math.floor(n / 2) * 2);
      const writes: Array<[string, number]> = [
        ['new-low', 1],
        ['new-tied', 20],
        ['i7', 3],
        ['new-top', 500],
      ];
      // The hidden items' set stored once a call, not once a window (3 here): the first write's 2 calls (its windows'
      // indexes built 2 a call before it applies) and each index noted in the shard's list (exidx, 3); none after.
      const { zmscores, sadds } = await writesRankAsReads(name, ['h', 'd', 'w'], writes);
      expect(zmscores).toBe(0);
      expect(sadds).toBeLessThanOrEqual(writes.length + 1);
      expect(await world.redis.client.exists(...keptKeys(name))).toBe(0);
    },
  );

  it('answers the read rank on an ascending last board of negative and positive scores', async () => {
    const windows = [{ name: 'h', period: '1h', interval: '1m' }];
    const name = await seeded({ windows, aggregate: 'last', order: 'asc' }, (n) => (n % 5) - 2, true);
    const writes: Array<[string, number]> = [
      ['new-neg', -1],
      ['new-zero', 0],
      ['i9', 2],
    ];
    expect((await writesRankAsReads(name, ['h'], writes, true)).zmscores).toBe(0);
    expect(await world.redis.client.exists(...keptKeys(name))).toBe(0);
  });
});
