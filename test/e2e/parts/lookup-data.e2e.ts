import { ADMIN, createBoard } from '../../../harness/app';
import { useSingleNodeApp } from '../../support/e2e';

const T0 = 1_700_002_800_000;

describe('lookup and item data over HTTP', () => {
  const { app, clock, http, redis } = useSingleNodeApp({ startMs: T0, fresh: true });
  const increment = (board: string, item: string, amount: number) =>
    http().post(`/boards/${board}/items/${item}/increment`).send({ amount }).expect(200);
  const scores = { a: 5, b: 9, c: 5, d: 1, e: 7 };
  const fill = async (board: string) => {
    for (const [item, amount] of Object.entries(scores)) await increment(board, item, amount);
  };

  describe.each([1, 3])('lookup on a board of %i shard(s)', (shards) => {
    beforeEach(async () => {
      await createBoard(app(), 'l', { windows: [{ name: 'h', period: '1h', interval: '1m' }], shards });
      await fill('l');
    });

    it('answers board ranks in the order given, 0 and null for an id the board does not hold', async () => {
      const res = await http()
        .post('/boards/l/lookup')
        .send({ items: ['d', 'zz', 'a', 'b', 'c'] })
        .expect(200);
      expect(res.body).toMatchObject({ board: 'l', window: 'h', draining: false });
      expect(res.body.items).toEqual([
        { item: 'd', score: 1, rank: 5, previousRank: null },
        { item: 'zz', score: 0, rank: null, previousRank: null },
        { item: 'a', score: 5, rank: 3, previousRank: null },
        { item: 'b', score: 9, rank: 1, previousRank: null },
        { item: 'c', score: 5, rank: 3, previousRank: null },
      ]);
    });

    it('counts nothing a shard still holds past its window (expired, not yet drained)', async () => {
      clock.advanceSec(30 * 60);
      await increment('l', 'f', 6);
      clock.advanceSec(31 * 60);
      // Only f is live now. On 3 shards, f is on shard 2 and zz on shard 0: b (9, expired) sits on
      // shard 1, which only the second round reads; it drains before it counts.
      const res = await http()
        .post('/boards/l/lookup')
        .send({ items: ['f', 'zz'] })
        .expect(200);
      expect(res.body.items).toEqual([
        { item: 'f', score: 6, rank: 1, previousRank: null },
        { item: 'zz', score: 0, rank: null, previousRank: null },
      ]);
      expect(
        (
          await http()
            .post('/boards/l/lookup')
            .send({ items: ['b'] })
        ).body.items[0].score,
      ).toBe(0);
    });

    it('answers competition ranks among the ids given with relative: true', async () => {
      const res = await http()
        .post('/boards/l/lookup')
        .send({ items: ['d', 'zz', 'a', 'c'], relative: true, window: 'h' })
        .expect(200);
      expect(res.body.items.map((row: { rank: number | null }) => row.rank)).toEqual([3, null, 1, 1]);
    });
  });

  it('refuses a bad lookup with a 4xx and a code', async () => {
    await createBoard(app(), 'l');
    const refused = async (body: object, status: number, code: string, path = '/boards/l/lookup') => {
      const res = await http().post(path).send(body).expect(status);
      expect(res.body.code).toBe(code);
      return res.body.message as string;
    };
    expect(await refused({ items: [] }, 400, 'INVALID_INPUT')).toMatch(/items/);
    const tooMany = Array.from({ length: 1001 }, (_, i) => `i${i}`);
    expect(await refused({ items: tooMany }, 400, 'INVALID_INPUT')).toMatch(/1000/);
    expect(await refused({ items: ['a', 'a'] }, 400, 'INVALID_INPUT')).toMatch(/twice/);
    expect(await refused({ items: [''] }, 400, 'INVALID_INPUT')).toMatch(/items/);
    expect(await refused({ items: ['a'], relative: 'yes' }, 400, 'INVALID_INPUT')).toMatch(/relative/);
    expect(await refused({ items: ['a'], window: null }, 400, 'INVALID_INPUT')).toMatch(/window/);
    expect(await refused({ items: ['a'], extra: 1 }, 400, 'INVALID_INPUT')).toMatch(/extra/);
    await refused({ items: ['a'], window: 'nope' }, 404, 'WINDOW_NOT_FOUND');
    await refused({ items: ['a'] }, 404, 'BOARD_NOT_FOUND', '/boards/none/lookup');
    const bad = await http()
      .post('/boards/l/lookup?data=maybe')
      .send({ items: ['a'] })
      .expect(400);
    expect(bad.body).toMatchObject({ code: 'INVALID_INPUT', message: expect.stringMatching(/data/) });
  });

  it('a lookup of 1 000 ids with long ids fits the body limit', async () => {
    await createBoard(app(), 'l');
    const items = Array.from({ length: 1000 }, (_, i) => `${'x'.repeat(120)}${i}`);
    const res = await http().post('/boards/l/lookup').send({ items }).expect(200);
    expect(res.body.items).toHaveLength(1000);
  });

  it('refuses a lookup of a view with a 400 naming it', async () => {
    await createBoard(app(), 'v', {
      windows: [{ name: 'h', period: '1h', interval: '1m' }],
      views: [{ name: 'hot', mode: 'hot', window: 'h' }],
    });
    const res = await http()
      .post('/boards/v/lookup')
      .send({ items: ['a'], window: 'hot' })
      .expect(400);
    expect(res.body).toMatchObject({ code: 'INVALID_INPUT', message: expect.stringMatching(/"hot" is a view/) });
  });

  describe('item data', () => {
    const put = (board: string, item: string, data: unknown) =>
      http()
        .put(`/boards/${board}/items/${item}/data`)
        .set('Content-Type', 'application/json')
        .send(JSON.stringify(data));
    const dataKeys = async () => redis().dataKeys('board:*');
    const hasDataKey = async () => (await dataKeys()).some((key) => key.endsWith(':data'));

    it.each([1, 3])(
      'rows carry data with ?data=true on top, items/:item, around and lookup (%i shards)',
      async (shards) => {
        await createBoard(app(), 'd', { windows: [{ name: 'h', period: '1h', interval: '1m' }], shards });
        await fill('d');
        await put('d', 'b', { name: 'Bea', tags: ['x'] }).expect(204);
        await put('d', 'e', { name: 'Eve' }).expect(204);
        const top = await http().get('/boards/d/top?limit=3&data=true').expect(200);
        expect(top.body.items.map((row: { item: string; data: unknown }) => [row.item, row.data])).toEqual([
          ['b', { name: 'Bea', tags: ['x'] }],
          ['e', { name: 'Eve' }],
          ['c', null],
        ]);
        const plain = await http().get('/boards/d/top?limit=1').expect(200);
        expect(plain.body.items[0]).not.toHaveProperty('data');
        const item = await http().get('/boards/d/items/e?data=true').expect(200);
        expect(item.body).toMatchObject({ item: 'e', score: 7, rank: 2, data: { name: 'Eve' } });
        const around = await http().get('/boards/d/items/e/around?radius=1&data=true').expect(200);
        expect(around.body.items.map((row: { data: unknown }) => row.data)).toEqual([
          { name: 'Bea', tags: ['x'] },
          { name: 'Eve' },
          null,
        ]);
        const lookup = await http()
          .post('/boards/d/lookup?data=true')
          .send({ items: ['e', 'zz'] })
          .expect(200);
        expect(lookup.body.items).toEqual([
          { item: 'e', score: 7, rank: 2, previousRank: null, data: { name: 'Eve' } },
          { item: 'zz', score: 0, rank: null, previousRank: null, data: null },
        ]);
        await http().delete('/boards/d/items/e/data').expect(204);
        await http().delete('/boards/d/items/e/data').expect(204);
        expect((await http().get('/boards/d/items/e?data=true').expect(200)).body.data).toBeNull();
      },
    );

    it('refuses bad data with a 4xx and a code, and data for an item the board does not hold', async () => {
      await createBoard(app(), 'd');
      await increment('d', 'a', 1);
      const refused = async (data: unknown, status: number, code: string) => {
        const res = await put('d', 'a', data).expect(status);
        expect(res.body.code).toBe(code);
      };
      await refused([1, 2], 400, 'INVALID_INPUT');
      await refused('text', 400, 'INVALID_INPUT');
      await refused(5, 400, 'INVALID_INPUT');
      await refused(null, 400, 'INVALID_INPUT');
      // {"s":"..."} is 8 bytes around the string: 1 024 in all is the most.
      await refused({ s: 'x'.repeat(1017) }, 413, 'DATA_TOO_LARGE');
      await refused({ s: 'é'.repeat(509) }, 413, 'DATA_TOO_LARGE');
      await put('d', 'a', { s: 'x'.repeat(1016) }).expect(204);
      const none = await http().put('/boards/d/items/a/data').set('Content-Type', 'application/json').expect(400);
      expect(none.body.code).toBe('INVALID_INPUT');
      const unheld = await put('d', 'ghost', { a: 1 }).expect(404);
      expect(unheld.body).toMatchObject({ code: 'ITEM_NOT_FOUND', message: expect.stringMatching(/ghost/) });
      expect((await put('nope', 'a', { a: 1 }).expect(404)).body.code).toBe('BOARD_NOT_FOUND');
      expect((await http().delete('/boards/nope/items/a/data').expect(404)).body.code).toBe('BOARD_NOT_FOUND');
    });

    it('is retry-safe with an Idempotency-Key', async () => {
      await createBoard(app(), 'd');
      await increment('d', 'a', 1);
      const keyed = (data: unknown) => put('d', 'a', data).set('Idempotency-Key', 'k1');
      await keyed({ v: 1 }).expect(204);
      await put('d', 'a', { v: 2 }).expect(204);
      const again = await keyed({ v: 1 }).expect(204);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect((await http().get('/boards/d/items/a?data=true')).body.data).toEqual({ v: 2 });
      expect((await keyed({ v: 3 }).expect(422)).body.code).toBe('IDEMPOTENCY_KEY_REUSED');
    });

    it('goes with the item when its last window lets it go, not before', async () => {
      await createBoard(app(), 'd', {
        windows: [
          { name: 'short', period: '2m', interval: '1m' },
          { name: 'long', period: '5m', interval: '1m' },
        ],
      });
      await increment('d', 'a', 3);
      await put('d', 'a', { keep: true }).expect(204);
      clock.advanceSec(3 * 60);
      // The short window let it go; the long one still holds it: the data stays.
      expect((await http().get('/boards/d/items/a?window=short&data=true')).body).toMatchObject({
        score: 0,
        data: { keep: true },
      });
      clock.advanceSec(3 * 60);
      expect((await http().get('/boards/d/items/a?window=long')).body.score).toBe(0);
      expect(await hasDataKey()).toBe(false);
      await increment('d', 'a', 1);
      expect((await http().get('/boards/d/items/a?data=true')).body.data).toBeNull();
    });

    it('goes when a negative increment takes the item to 0 in every window, and with the board', async () => {
      await createBoard(app(), 'd');
      await increment('d', 'a', 2);
      await increment('d', 'b', 2);
      await put('d', 'a', { x: 1 }).expect(204);
      await put('d', 'b', { x: 2 }).expect(204);
      await increment('d', 'a', -2);
      expect(
        (
          await http()
            .post('/boards/d/lookup?data=true')
            .send({ items: ['a', 'b'] })
        ).body.items,
      ).toMatchObject([
        { item: 'a', data: null },
        { item: 'b', data: { x: 2 } },
      ]);
      await http().delete('/admin/boards/d').set(ADMIN).expect(204);
      expect(await hasDataKey()).toBe(false);
    });
  });
});
