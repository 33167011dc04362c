import { createBoard } from '../../../harness/app';
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
 * Issue #45: a batch is weighed before its call (src/ranking/writes/write-cost.ts), and one whose call
 * on some shard would weigh more than WRITE_COST_PER_CALL (8 000 units by default, about 24 ms of Redis)
 * is refused whole before anything is applied: 422 REQUEST_TOO_COSTLY naming the bound and how many
 * such entries a batch may carry.
 */
describe.each<[Topology, number]>([
  ['single', 1],
  ['cluster', 3],
])('batches weighed by their cost (%s, shards: %i)', (topology, shards) => {
  const e2e = useApp(topology, { fresh: true, env: { QUOTA_NEW_ITEMS: '100000' } });
  const { http } = e2e;
  const batch = (board: string, items: object[]) => http().post(`/boards/${board}/increments`).send({ items });

  it('takes the documented batch: 1 000 entries on a 3-window board', async () => {
    await createBoard(e2e.app(), 'b', { windows: THREE_WINDOWS, shards });
    const items = Array.from({ length: 1000 }, (_, i) => ({ item: `i${i}`, amount: 1 }));
    await batch('b', items).expect(200, { board: 'b', count: 1000, draining: false });
  });

  it('row 3: refuses 900 items × 8 segments on 3 windows whole, naming the bound; a smaller one passes', async () => {
    await createBoard(e2e.app(), 'b', { windows: THREE_WINDOWS, shards, segments: { max: 100 } });
    await batch('b', [{ item: 'i0', amount: 5 }]).expect(200);
    const heavy = (count: number) =>
      // No amount (1 by default): the body stays within its 10 000 values, as the client sent it.
      Array.from({ length: count }, (_, i) => ({ item: `i${i}`, segments: SEGMENTS }));
    const refused = await batch('b', heavy(900)).expect(422);
    expect(refused.body.code).toBe('REQUEST_TOO_COSTLY');
    // 3 windows × (1 + 3 × 8 segments) = 75 units an entry: 106 fit in 8 000.
    expect(refused.body.message).toMatch(/more than the 8000 one write call may \(WRITE_COST_PER_CALL/);
    expect(refused.body.message).toMatch(/send at most 106 such entries per batch/);
    // Nothing applied: no segment holds anything, i0 holds what it held.
    const segments = await http().get('/boards/b/segments').expect(200);
    expect(segments.body.segments).toEqual([]);
    const i0 = await http().get('/boards/b/items/i0?window=hour').expect(200);
    expect(i0.body.score).toBe(5);
    await batch('b', heavy(106)).expect(200);
  });

  it('row 1: refuses 1 000 late scores on a last board of 8 windows; as many as the message says pass', async () => {
    await createBoard(e2e.app(), 'last', { ...LAST_BOARD, shards });
    const late = (count: number) =>
      Array.from({ length: count }, (_, i) => ({ item: `late${i}`, score: i, at: T0_SEC - 990 }));
    const refused = await batch('last', late(1000)).expect(422);
    expect(refused.body.code).toBe('REQUEST_TOO_COSTLY');
    // 8 windows × 3.5 = 28 units a score: 285 fit (on a sharded board each shard's call carries fewer).
    expect(refused.body.message).toMatch(/send at most 285 such entries per batch/);
    await batch('last', late(285)).expect(200);
    const item = await http().get('/boards/last/items/late7?window=w0').expect(200);
    expect(item.body.score).toBe(7);
  });

  it('an item write is never refused for its cost, on the costliest board', async () => {
    const views = [0, 1, 2, 3, 4, 5, 6, 7].map((v) => ({ name: `v${v}`, mode: 'hot', window: 'w0' }));
    const windows = Array.from({ length: 8 }, (_, w) => ({ name: `w${w}`, period: 3600 * (w + 1), interval: 60 }));
    await createBoard(e2e.app(), 'full', {
      windows,
      views,
      ties: 'first',
      segments: { max: 10 },
      actors: true,
      shards,
    });
    await http()
      .post('/boards/full/items/x/increment')
      .send({ amount: 1, segments: SEGMENTS, actor: 'someone' })
      .expect(200);
  });
});
