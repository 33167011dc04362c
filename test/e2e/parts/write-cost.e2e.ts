import { ADMIN, createBoard } from '../../../harness/app';
import { T0, useApp } from '../../support/e2e';
import { Topology } from '../../../harness/redis';

const T0_SEC = T0 / 1000;
const THREE_WINDOWS = [
  { name: 'hour', period: '1h', interval: '1m' },
  { name: 'day', period: '24h', interval: '1h' },
  { name: 'week', period: '7d', interval: '1d' },
];
/** A `last` board of 8 windows of 1 000 one-second slots (issue #45 row 1). */
const LAST_BOARD = {
  aggregate: 'last',
  windows: Array.from({ length: 8 }, (_, w) => ({ name: `w${w}`, period: 1000 - w, interval: 1 })),
};
const SEGMENTS = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];

/**
 * Issue #45: a batch is weighed before its call (src/ranking/core/write-cost.ts), and one whose call
 * on some shard would weigh more than WRITE_COST_PER_CALL (1 800 units by default, about 5 ms of Redis)
 * is refused whole before anything is applied: 422 REQUEST_TOO_COSTLY naming the bound and how many
 * such entries a batch may carry. A board whose single write would weigh more is refused when declared
 * (400 BOARD_WRITE_TOO_COSTLY), unless it was stored weighing as much (declared under a higher bound);
 * such a board takes the writes within the bound and refuses (422) a write whose own call passes it.
 */
describe.each<[Topology, number]>([
  ['single', 1],
  ['cluster', 3],
])('batches weighed by their cost (%s, shards: %i)', (topology, shards) => {
  const e2e = useApp(topology, {
    fresh: true,
    env: { QUOTA_NEW_ITEMS: '100000' },
    // An instance of a higher bound: a board it stores stands for one declared before the bound.
    others: { lenient: { WRITE_COST_PER_CALL: '8000' } },
  });
  const { http } = e2e;
  const batch = (board: string, items: object[]) => http().post(`/boards/${board}/increments`).send({ items });

  it('takes the documented batch of 1 000 entries on one window, and 600 on 3 windows', async () => {
    await createBoard(e2e.app(), 'one', { windows: THREE_WINDOWS.slice(0, 1), shards });
    const items = (count: number) => Array.from({ length: count }, (_, i) => ({ item: `i${i}`, amount: 1 }));
    await batch('one', items(1000)).expect(200, { board: 'one', count: 1000, draining: false });
    await createBoard(e2e.app(), 'b', { windows: THREE_WINDOWS, shards });
    await batch('b', items(600)).expect(200, { board: 'b', count: 600, draining: false });
  });

  it('row 3: refuses 900 items × 8 segments on 3 windows whole, naming the bound; a smaller one passes', async () => {
    await createBoard(e2e.app(), 'b', { windows: THREE_WINDOWS, shards, segments: { max: 100 } });
    await batch('b', [{ item: 'i0', amount: 5 }]).expect(200);
    const heavy = (count: number) =>
      // No amount (1 by default): the body stays within its 10 000 values, as the client sent it.
      Array.from({ length: count }, (_, i) => ({ item: `i${i}`, segments: SEGMENTS }));
    const refused = await batch('b', heavy(900)).expect(422);
    expect(refused.body.code).toBe('REQUEST_TOO_COSTLY');
    // 3 windows + 8 segments at their floor (3 × 5.5 + 10 = 26.5 each) = 215 units an entry: 8 fit in 1 800.
    expect(refused.body.message).toMatch(/more than the 1800 one write call may \(WRITE_COST_PER_CALL/);
    expect(refused.body.message).toMatch(/send at most 8 such entries per batch/);
    // Nothing applied: no segment holds anything, i0 holds what it held.
    const segments = await http().get('/boards/b/segments').expect(200);
    expect(segments.body.segments).toEqual([]);
    const i0 = await http().get('/boards/b/items/i0?window=hour').expect(200);
    expect(i0.body.score).toBe(5);
    await batch('b', heavy(8)).expect(200);
  });

  it('row 1: refuses 1 000 late scores on a last board of 8 windows; as many as the message says pass', async () => {
    await createBoard(e2e.app(), 'last', { ...LAST_BOARD, shards });
    const late = (count: number) =>
      Array.from({ length: count }, (_, i) => ({ item: `late${i}`, score: i, at: T0_SEC - 990 }));
    const refused = await batch('last', late(1000)).expect(422);
    expect(refused.body.code).toBe('REQUEST_TOO_COSTLY');
    // 8 windows × 11 = 88 units a score: 20 fit (on a sharded board each shard's call carries fewer).
    expect(refused.body.message).toMatch(/send at most 20 such entries per batch/);
    await batch('last', late(20)).expect(200);
    const item = await http().get('/boards/last/items/late7?window=w0').expect(200);
    expect(item.body.score).toBe(7);
  });

  it('refuses a board whose single write passes the bound when declared; one stored so keeps the writes within it', async () => {
    const views = [0, 1, 2, 3, 4, 5, 6, 7].map((v) => ({ name: `v${v}`, mode: 'hot', window: 'w0' }));
    const windows = Array.from({ length: 8 }, (_, w) => ({ name: `w${w}`, period: 3600 * (w + 1), interval: 60 }));
    const full = { windows, views, ties: 'first', segments: { max: 10 }, actors: true, shards };
    // 28 results × 25 places (8 segments) × 10 (ties first, an actor): 7 000 units.
    const refused = await http().put('/admin/boards/full').set(ADMIN).send(full).expect(400);
    expect(refused.body.code).toBe('BOARD_WRITE_TOO_COSTLY');
    expect(refused.body.message).toMatch(/would weigh up to 7000 cost units in one call.*more than the 1800/);
    // Without segments a write weighs 280 units: taken.
    await http()
      .put('/admin/boards/plain')
      .set(ADMIN)
      .send({ ...full, segments: undefined })
      .expect(201);
    // Stored under a higher bound, the board keeps its config (the same PUT again).
    await createBoard(e2e.other('lenient'), 'full', full);
    await http().put('/admin/boards/full').set(ADMIN).send(full).expect(200);
    // A write whose own call passes the bound is one atomic call: refused whole, before any call, naming
    // the segments a write may name (280 × (1 + 3 × 1) = 1 120 units; 2 segments weigh 1 960).
    const heavy = { amount: 1, segments: SEGMENTS, actor: 'someone' };
    const refusals = [
      await http().post('/boards/full/items/x/increment').send(heavy).expect(422),
      await batch('full', [{ item: 'x', ...heavy }]).expect(422),
      await http().post('/boards/full/items/x/likes').send({ userId: 'someone', segments: SEGMENTS }).expect(422),
      await http()
        .post('/boards/full/items/x/likes')
        .send({ userId: 'someone', segments: SEGMENTS.slice(0, 2) })
        .expect(422),
    ];
    for (const { body } of refusals) {
      expect(body.code).toBe('REQUEST_TOO_COSTLY');
      expect(body.message).toMatch(/more than the 1800 one write call may.*name at most 1 segment\(s\) per write/);
    }
    expect((await http().get('/boards/full/segments').expect(200)).body.segments).toEqual([]);
    expect((await http().get('/boards/full/items/x?window=w0').expect(200)).body).toMatchObject({
      score: 0,
      rank: null,
    });
    // Within it, the board takes its writes: one segment with an actor, or three without.
    await http()
      .post('/boards/full/items/x/increment')
      .send({ ...heavy, segments: ['a'] })
      .expect(200);
    await batch('full', [{ item: 'y', segments: ['a', 'b', 'c'] }]).expect(200);
    await http()
      .post('/boards/full/items/x/likes')
      .send({ userId: 'someone', segments: ['b'] })
      .expect(200);
    const item = await http().get('/boards/full/items/x?window=w0&segment=a').expect(200);
    expect(item.body.score).toBe(1);
  });
});
