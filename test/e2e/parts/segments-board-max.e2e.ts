import { createBoard } from '../../../harness/app';
import { T0, useApp } from '../../support/e2e';
import { Topology } from '../../../harness/redis';

const ITEMS = Array.from({ length: 16 }, (_, i) => `item-${i}`);
const MAX = 3;

/** segments.max bounds the board's live segments over all its shards, not each shard's. */
describe.each<[Topology, number]>([
  ['single', 4],
  ['single', 8],
  ['cluster', 4],
])('segments.max per board (%s, shards: %i)', (topology, shards) => {
  const e2e = useApp(topology, { fresh: true });
  const { clock, http } = e2e;
  const increment = (item: string, body: object) => http().post(`/boards/b/items/${item}/increment`).send(body);
  const listed = async () =>
    ((await http().get('/boards/b/segments').expect(200)).body.segments as Array<{ name: string }>).map(
      (row) => row.name,
    );

  beforeEach(async () => {
    const windows = [{ name: 'hour', period: '1h', interval: '5m' }];
    await createBoard(e2e.app(), 'b', { windows, segments: { max: MAX }, shards });
  });

  it('accepts max segments over the shards, then 409 SEGMENT_LIMIT on any shard with nothing applied', async () => {
    const answers: number[] = [];
    // Each item on its own segment: the items land on every shard.
    for (const [i, item] of ITEMS.entries()) answers.push((await increment(item, { segments: [`s${i}`] })).status);
    expect(answers.filter((status) => status === 200)).toHaveLength(MAX);
    expect(answers.filter((status) => status === 409)).toHaveLength(ITEMS.length - MAX);
    const refused = await increment('item-9', { amount: 5, segments: ['late'] }).expect(409);
    expect(refused.body.code).toBe('SEGMENT_LIMIT');
    expect(refused.body.message).toContain(`segments.max ${MAX}`);
    expect((await http().get('/boards/b/items/item-9').expect(200)).body.score).toBe(0);
    const batch = await http()
      .post('/boards/b/increments')
      .send({ items: ITEMS.map((item) => ({ item, segments: ['other'] })) })
      .expect(409);
    expect(batch.body.code).toBe('SEGMENT_LIMIT');
    expect(await listed()).toEqual(['s0', 's1', 's2']);
    // The live ones keep counting from any item, on any shard.
    for (const item of ITEMS) await increment(item, { segments: ['s0', 's1'] }).expect(200);
    const likes = await http()
      .post('/boards/b/items/item-3/likes')
      .send({ userId: 'u', segments: ['new'] });
    expect([likes.status, likes.body.code]).toEqual([409, 'SEGMENT_LIMIT']);
  });

  it('a segment whose slots all expired stops counting: a new one is welcome', async () => {
    for (let i = 0; i < MAX; i++) await increment(ITEMS[i], { segments: [`s${i}`] }).expect(200);
    await increment(ITEMS[MAX], { segments: ['next'] }).expect(409);
    clock.setMs(T0 + 2 * 3600_000);
    await increment(ITEMS[MAX], { segments: ['next'] }).expect(200);
    expect(await listed()).toEqual(['next']);
  });
});
