import { createBoard } from '../../../harness/app';
import { useApp } from '../../support/e2e';
import { Topology } from '../../../harness/redis';
import { shardOf } from '../../../src/ranking/core/shard-math';

/** One API key per test: each is a client of its own, with fresh budgets. */
const KEYS = [
  'entries-actors-0123456789',
  'entries-segments-012345678',
  'entries-data-0123456789ab',
  'entries-segkeys-012345678',
];
const [ACTORS_KEY, SEGMENTS_KEY, DATA_KEY, SEGMENT_KEYS_KEY] = KEYS;
const WINDOWS = [
  { name: 'hour', period: '1h', interval: '5m' },
  { name: 'day', period: '24h', interval: '1h' },
  { name: 'week', period: '7d', interval: '1d' },
];
const ITEMS = ['x1', 'x2', 'x3', 'x4', 'x5'];
/** Keys a segment makes on a shard where it is new (each window's slots and results; no views), counted as entries. */
const SEGMENT_KEYS = 2 * WINDOWS.length;
/**
 * The segment quota: the 15 entries of ITEMS in s1 (one per window), s1's keys on each shard the items
 * land on, and 8 more: too few for another new segment (3 entries and its 6 keys).
 */
const segmentQuota = (shards: number) =>
  15 + SEGMENT_KEYS * new Set(ITEMS.map((item) => shardOf(item, shards))).size + 8;

/**
 * What a client makes Redis hold beyond new items is counted too: actor contributions and segment
 * entries (three windows: one entry per window an event lands in) and item data bytes. Past a quota a
 * write is 429 QUOTA_EXCEEDED with nothing applied; what exists keeps counting.
 */
describe.each<[Topology, number]>([
  ['single', 1],
  ['single', 4],
  ['cluster', 4],
])('quotas on actor contributions, segment entries and item data (%s, shards: %i)', (topology, shards) => {
  const env = {
    API_KEYS: KEYS.join(','),
    QUOTA_NEW_ACTOR_ENTRIES: '31',
    QUOTA_NEW_SEGMENT_ENTRIES: String(segmentQuota(shards)),
    QUOTA_ITEM_DATA_BYTES: '100',
  };
  const e2e = useApp(topology, { env });
  const { http } = e2e;
  const batch = (key: string, items: object[]) =>
    http().post('/boards/g/increments').set('X-Api-Key', key).send({ items });
  const increment = (key: string, item: string, body: object) =>
    http().post(`/boards/g/items/${item}/increment`).set('X-Api-Key', key).send(body);
  const scoreOf = async (key: string, item: string): Promise<number> =>
    (await http().get(`/boards/g/items/${item}`).set('X-Api-Key', key).expect(200)).body.score;
  const expectRefused = (answer: { status: number; body: { code: string; message: string } }, kind: string) => {
    expect([answer.status, answer.body.code]).toEqual([429, 'QUOTA_EXCEEDED']);
    expect(answer.body.message).toContain(kind);
  };

  beforeAll(async () => {
    await createBoard(e2e.app(), 'g', { windows: WINDOWS, actors: true, segments: { max: 10 }, shards });
    await batch(
      ACTORS_KEY,
      ITEMS.map((item) => ({ item })),
    ).expect(200);
  });

  it('counts actor contributions: a batch and an increment past the quota apply nothing; existing ones keep counting', async () => {
    // Five entries of one item and actor reserve 30 and make 6 (per window a contribution and x1's
    // distinct-actor count): the other 24 go back (exact settlement).
    await batch(
      ACTORS_KEY,
      ITEMS.map(() => ({ item: 'x1', actor: 'a1' })),
    ).expect(200);
    // The four other items with that actor: 24 more, 30 entries (two per window and item) of 31 in all.
    await batch(
      ACTORS_KEY,
      ITEMS.slice(1).map((item) => ({ item, actor: 'a1' })),
    ).expect(200);
    const before = await scoreOf(ACTORS_KEY, 'x1');
    expectRefused(await batch(ACTORS_KEY, [{ item: 'x1', actor: 'a2' }]), 'new actor contributions');
    expectRefused(await increment(ACTORS_KEY, 'x1', { actor: 'a3' }), 'new actor contributions');
    expect(await scoreOf(ACTORS_KEY, 'x1')).toBe(before);
    // The same actor on the same items again creates nothing: it keeps counting.
    await batch(
      ACTORS_KEY,
      ITEMS.map((item) => ({ item, actor: 'a1' })),
    ).expect(200);
    await increment(ACTORS_KEY, 'x1', { actor: 'a1' }).expect(200);
    expect(await scoreOf(ACTORS_KEY, 'x1')).toBe(before + 2);
  });

  it('counts segment entries: past the quota nothing is applied, the segment never appears; existing ones keep counting', async () => {
    await batch(
      SEGMENTS_KEY,
      ITEMS.map(() => ({ item: 'x1', segments: ['s1'] })),
    ).expect(200);
    await batch(
      SEGMENTS_KEY,
      ITEMS.slice(1).map((item) => ({ item, segments: ['s1'] })),
    ).expect(200);
    const before = await scoreOf(SEGMENTS_KEY, 'x2');
    expectRefused(await batch(SEGMENTS_KEY, [{ item: 'x2', segments: ['s2'] }]), 'new segment entries');
    expectRefused(await increment(SEGMENTS_KEY, 'x2', { segments: ['s3'] }), 'new segment entries');
    expect(await scoreOf(SEGMENTS_KEY, 'x2')).toBe(before);
    const segments = await http().get('/boards/g/segments').set('X-Api-Key', SEGMENTS_KEY).expect(200);
    expect(segments.body.segments.map((row: { name: string }) => row.name)).toEqual(['s1']);
    await batch(
      SEGMENTS_KEY,
      ITEMS.map((item) => ({ item, segments: ['s1'] })),
    ).expect(200);
    await increment(SEGMENTS_KEY, 'x2', { segments: ['s1'] }).expect(200);
    expect(await scoreOf(SEGMENTS_KEY, 'x2')).toBe(before + 2);
  });

  it("counts a segment's keys on a shard where it is new: 6 new segments weigh 54 entries, not 18", async () => {
    const named = ['n1', 'n2', 'n3', 'n4', 'n5', 'n6'];
    const refused = await increment(SEGMENT_KEYS_KEY, 'x1', { segments: named });
    expectRefused(refused, 'new segment entries');
    expect(refused.body.message).toContain(String(named.length * (WINDOWS.length + SEGMENT_KEYS)));
    await increment(SEGMENT_KEYS_KEY, 'x1', { segments: ['n1'] }).expect(200);
  });

  it('counts the bytes item data grows by: past the quota nothing is stored; a replacement no longer is free', async () => {
    const data = { note: 'n'.repeat(50) }; // 61 bytes of JSON
    const put = (item: string, body: object) =>
      http().put(`/boards/g/items/${item}/data`).set('X-Api-Key', DATA_KEY).send(body);
    await put('x1', data).expect(204);
    expectRefused(await put('x2', data), 'bytes of new item data');
    await put('x1', data).expect(204);
    await put('x1', { note: 'short' }).expect(204);
    const lookup = await http()
      .post('/boards/g/lookup?data=true')
      .set('X-Api-Key', DATA_KEY)
      .send({ items: ['x1', 'x2'] })
      .expect(200);
    expect(lookup.body.items.map((row: { data: unknown }) => row.data)).toEqual([{ note: 'short' }, null]);
    // Removing data gives nothing back: the quota counts what was written, as it counts new items.
    await http().delete('/boards/g/items/x1/data').set('X-Api-Key', DATA_KEY).expect(204);
    expectRefused(await put('x1', data), 'bytes of new item data');
  });
});
