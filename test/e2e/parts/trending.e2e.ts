import { ADMIN } from '../../../harness/app';
import { useApp } from '../../support/e2e';
import { TOPOLOGIES } from '../../../harness/redis';

const T0 = 1_700_002_800_000; // an hour boundary (unix ms)
const T0_SEC = T0 / 1000;
const BOARD = {
  windows: [
    { name: 'hour', period: '1h', interval: '5m' },
    { name: 'day', period: '24h', interval: '1h' },
  ],
  views: [
    { name: 'fading', mode: 'decay', window: 'hour', halfLife: '10m' },
    { name: 'hot', mode: 'hot', window: 'day', tau: '12h' },
    { name: 'trending', mode: 'rising', window: 'hour', baseline: 'day' },
  ],
};

/** Trending views over HTTP: config, validation, and reads (top, item, around) on plain and sharded boards. */
describe.each(TOPOLOGIES)('trending views over HTTP (%s)', (topology) => {
  const e2e = useApp(topology, { startMs: T0, fresh: true });
  const { clock, http } = e2e;
  const put = (body: object, name = 'b') => http().put(`/admin/boards/${name}`).set(ADMIN).send(body);

  it('creates a board with views, answers them, keeps them on a PUT without views, removes them with []', async () => {
    const created = await put(BOARD).expect(201);
    const views = [
      { name: 'fading', mode: 'decay', window: 'hour', halfLife: 600 },
      { name: 'hot', mode: 'hot', window: 'day', tau: 43200 },
      { name: 'trending', mode: 'rising', window: 'hour', baseline: 'day', minCount: 5 },
    ];
    expect(created.body.views).toEqual(views);
    expect((await http().get('/boards/b').expect(200)).body.views).toEqual(views);
    expect((await put({ windows: BOARD.windows }).expect(200)).body.views).toEqual(views);
    expect((await put({ ...BOARD, views: [] }).expect(200)).body.views).toBeUndefined();
  });

  it.each([
    [
      { views: [{ name: 'x', mode: 'decay', window: 'hour', halfLife: 'soon' }] },
      /views\.0\.halfLife must be a duration/,
    ],
    [{ views: [{ name: 'x', mode: 'rising', window: 'day', baseline: 'hour' }] }, /must be longer than window "day"/],
    [{ views: [{ name: 'day', mode: 'hot', window: 'day' }] }, /views\.0\.name "day" is already a window or view name/],
    [{ views: [{ name: 'x', mode: 'hot' }] }, /window/],
    [{ views: [{ name: 'x', mode: 'hot', window: 'day', extra: 1 }] }, /extra/],
    [{ views: null }, /views must not be null/],
    [{ views: ['hot'] }, /views must hold objects/],
    [{ views: [{ name: 'x', mode: 'hot', window: 'day', minCount: 0 }] }, /minCount/],
  ])('refuses a bad views config with a 400 naming it (%#)', async (change, message) => {
    const refused = await put({ windows: BOARD.windows, ...change }).expect(400);
    expect(refused.body.code).toBe('INVALID_INPUT');
    expect(refused.body.message).toMatch(message);
  });

  describe.each([1, 3])('reads (shards: %i)', (shards) => {
    beforeEach(async () => {
      await put({ ...BOARD, shards }).expect(201);
      // 'steady' every hour of the day; 'burst' once a day, then 40 in the last 15 minutes.
      const items = [];
      for (let h = 1; h < 24; h++) items.push({ item: 'steady', amount: 20, at: T0_SEC - h * 3600 });
      items.push({ item: 'burst', amount: 1, at: T0_SEC - 20 * 3600 });
      await http().post('/boards/b/increments').send({ items }).expect(200);
      clock.setMs(T0 + 1800_000);
      await http()
        .post('/boards/b/increments')
        .send({
          items: [
            { item: 'steady', amount: 10, at: T0_SEC + 1200 },
            { item: 'burst', amount: 15, at: T0_SEC + 900 },
            { item: 'burst', amount: 25 },
            { item: 'other', amount: 7 },
          ],
        })
        .expect(200);
    });

    it('top on a rising view names its mode and answers observed, expected, phase and since', async () => {
      const top = await http().get('/boards/b/top?window=trending').expect(200);
      expect(top.body).toMatchObject({
        board: 'b',
        window: 'trending',
        mode: 'rising',
        from: T0_SEC - 3300 + 1800,
        to: T0_SEC + 2100,
      });
      expect(top.body.items.map((row: { item: string }) => row.item)).toEqual(['burst', 'other']);
      expect(top.body.items[0]).toMatchObject({
        rank: 1,
        item: 'burst',
        observed: 40,
        phase: 'rising',
        since: T0_SEC + 1800,
      });
      expect(top.body.items[0].expected).toBeCloseTo(41 / 24, 12);
      expect(top.body.items[1]).toMatchObject({
        rank: 2,
        item: 'other',
        observed: 7,
        expected: 1,
        score: 36,
        phase: 'new',
      });
      // A plain sum over the same short window also lists the item at its usual level.
      const sum = await http().get('/boards/b/top?window=hour').expect(200);
      expect(sum.body.items[0].item).toBe('burst');
      expect(sum.body.items.map((row: { item: string }) => row.item)).toContain('steady');
    });

    it('items/:item and around read a view like a window', async () => {
      const item = await http().get('/boards/b/items/other?window=trending').expect(200);
      expect(item.body).toMatchObject({ mode: 'rising', item: 'other', rank: 2, percentile: 0, phase: 'new' });
      const none = await http().get('/boards/b/items/steady?window=trending').expect(200);
      expect(none.body).toMatchObject({ mode: 'rising', item: 'steady', score: 0, rank: null, percentile: null });
      const around = await http().get('/boards/b/items/other/around?window=hot&radius=1').expect(200);
      expect(around.body.mode).toBe('hot');
      expect(around.body.items.map((row: { item: string }) => row.item)).toContain('other');
      const decay = await http().get('/boards/b/items/burst?window=fading').expect(200);
      // 15 in the slot of T0 + 900 (age 900 s), 25 in the current one (T0 + 1800: age 0).
      expect(decay.body.mode).toBe('decay');
      expect(decay.body.score).toBeCloseTo(15 * 2 ** -1.5 + 25, 10);
    });

    it('an unknown window or view is a 404 naming both', async () => {
      const missing = await http().get('/boards/b/top?window=nope').expect(404);
      expect(missing.body.message).toMatch(/windows: hour, day, fading, hot, trending/);
    });
  });
});
