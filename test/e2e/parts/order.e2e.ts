import { ADMIN, createBoard } from '../../../harness/app';
import { LiveHub } from '../../../src/live/live-hub';
import { boardPut, listedRows, T0, useSingleNodeApp } from '../../support/e2e';
import { listen, SseReader, waitUntil } from '../../support/sse';

const WINDOWS = [{ name: 'h', period: '1h', interval: '1m' }];

describe('order: asc over HTTP', () => {
  const { app, http } = useSingleNodeApp({ startMs: T0, fresh: true });
  const put = boardPut(http, WINDOWS);
  const score = (board: string, item: string, value: number) =>
    http()
      .post(`/boards/${board}/items/${encodeURIComponent(item)}/score`)
      .send({ score: value })
      .expect(200);
  const rows = listedRows(http);

  it.each([
    [{ order: 'sideways', aggregate: 'max' }, /order must be one of desc, asc/],
    [{ order: null, aggregate: 'max' }, /order/],
    [{ order: 'asc' }, /order asc ranks recorded scores: board "bad" aggregates by sum/],
    [{ order: 'asc', aggregate: 'sum' }, /aggregates by sum/],
    [
      { order: 'asc', aggregate: 'min', ties: 'first' },
      /order asc goes with ties first only on a board with a tiebreak/,
    ],
    [
      { order: 'asc', views: [{ name: 'hot', mode: 'hot', window: 'h' }] },
      /views \(decay, hot, rising\)|order asc ranks recorded scores/,
    ],
  ])('refuses %j with 400 INVALID_INPUT', async (body, message) => {
    const answer = await put('bad', body).expect(400);
    expect(answer.body.code).toBe('INVALID_INPUT');
    expect(answer.body.message).toMatch(message);
    await http().get('/boards/bad').expect(404);
  });

  it('checks the order a PUT keeps: an asc board stays refused as a sum board or with ties first', async () => {
    await put('kept', { aggregate: 'max', order: 'asc' }).expect(201);
    expect((await http().get('/boards/kept').expect(200)).body).toMatchObject({ order: 'asc', aggregate: 'max' });
    for (const body of [{ aggregate: 'sum' }, { ties: 'first' }]) {
      const answer = await put('kept', body, '?reset=true').expect(400);
      expect(answer.body.code).toBe('INVALID_INPUT');
    }
    // desc is the default and is not shown.
    await put('kept', { order: 'desc' }).expect(200);
    expect((await http().get('/boards/kept').expect(200)).body).not.toHaveProperty('order');
  });

  it.each([1, 3])(
    '%i shard(s): lower scores rank higher on every read, zero and negative scores listed; a change of order keeps the data',
    async (shards) => {
      await createBoard(app(), 'race', { windows: WINDOWS, aggregate: 'min', order: 'asc', shards });
      await score('race', 'slow', 12);
      await score('race', 'zero', 0);
      const fast = await score('race', 'fast', -3);
      expect(fast.body.windows.h).toMatchObject({ score: -3, rank: 1 });
      await score('race', 'tie', 12);
      await score('race', 'slow', 15); // min keeps 12
      expect(await rows('/boards/race/top')).toEqual([
        ['fast', 1, -3],
        ['zero', 2, 0],
        ['slow', 3, 12],
        ['tie', 3, 12],
      ]);
      expect(await rows('/boards/race/top?offset=2&limit=1')).toEqual([['slow', 3, 12]]);
      expect((await http().get('/boards/race/items/zero').expect(200)).body).toMatchObject({
        score: 0,
        rank: 2,
        percentile: 66.67,
      });
      expect((await http().get('/boards/race/items/nobody').expect(200)).body).toMatchObject({ rank: null });
      expect(await rows('/boards/race/items/zero/around?radius=1')).toEqual([
        ['fast', 1, -3],
        ['zero', 2, 0],
        ['slow', 3, 12],
      ]);
      const lookup = await http()
        .post('/boards/race/lookup')
        .send({ items: ['tie', 'fast', 'zero', 'nobody'] })
        .expect(200);
      expect(lookup.body.items.map((row: { rank: number | null }) => row.rank)).toEqual([3, 1, 2, null]);
      const relative = await http()
        .post('/boards/race/lookup')
        .send({ items: ['tie', 'zero', 'nobody'], relative: true })
        .expect(200);
      expect(relative.body.items.map((row: { rank: number | null }) => row.rank)).toEqual([2, 1, null]);

      await put('race', { aggregate: 'min', order: 'desc', shards }).expect(200);
      expect((await rows('/boards/race/top')).map((row: unknown[]) => row[0])).toEqual(['tie', 'slow', 'zero', 'fast']);
      await http().delete('/admin/boards/race').set(ADMIN).expect(204);
    },
  );

  it('streams the listing lowest first', async () => {
    const base = await listen(app());
    await createBoard(app(), 'golf', { windows: WINDOWS, aggregate: 'last', order: 'asc' });
    await score('golf', 'par', 0);
    await score('golf', 'birdie', -1);
    await score('golf', 'bogey', 1);
    const reader = await SseReader.open(`${base}/boards/golf/stream`);
    try {
      await reader.waitFor(1);
      const [first] = reader.named<{ items: Array<{ item: string; rank: number }> }>('snapshot');
      expect(first.items.map((row) => [row.item, row.rank])).toEqual([
        ['birdie', 1],
        ['par', 2],
        ['bogey', 3],
      ]);
    } finally {
      reader.close();
      await waitUntil(() => app().get(LiveHub).clients === 0);
    }
  });
});
