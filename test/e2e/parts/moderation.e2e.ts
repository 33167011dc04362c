import { ADMIN, createBoard } from '../../../harness/app';
import { useSingleNodeApp } from '../../support/e2e';

const T0 = 1_700_002_800_000;

describe('moderation over HTTP: states, guards, error codes, the review queue', () => {
  const { app, http } = useSingleNodeApp({ startMs: T0, fresh: true });
  const windows = [{ name: 'h', period: '1h', interval: '1m' }];
  const state = (board: string, item: string) => http().put(`/admin/boards/${board}/moderation/items/${item}`);
  const clear = (board: string, item: string) => http().delete(`/admin/boards/${board}/moderation/items/${item}`);
  const top = async (board: string) =>
    ((await http().get(`/boards/${board}/top?window=h`).expect(200)).body.items as Array<{ item: string }>).map(
      (row) => [row.item, (row as { rank?: number }).rank],
    );

  beforeEach(async () => {
    await createBoard(app(), 'mod', { windows, shards: 3 });
    await createBoard(app(), 'rev', { windows, moderation: { review: true } });
    for (const board of ['mod', 'rev'])
      await http()
        .post(`/boards/${board}/increments`)
        .send({
          items: [
            { item: 'a', amount: 9 },
            { item: 'b', amount: 5 },
            { item: 'c', amount: 2 },
          ],
        })
        .expect(200);
  });

  it('hides an item from every read, keeps counting it, and lists it again exactly', async () => {
    await state('mod', 'a').set(ADMIN).send({ state: 'hidden' }).expect(204);
    expect(await top('mod')).toEqual([
      ['b', 1],
      ['c', 2],
    ]);
    const item = (await http().get('/boards/mod/items/a?window=h').expect(200)).body;
    expect(item).toMatchObject({ score: 9, rank: null, percentile: null, hidden: true });
    const b = (await http().get('/boards/mod/items/b?window=h').expect(200)).body;
    expect(b).toMatchObject({ rank: 1, percentile: 100 });
    const written = await http().post('/boards/mod/items/a/increment').send({ amount: 1 }).expect(200);
    expect(written.body.windows.h).toMatchObject({ score: 10, rank: null });
    const lookup = await http()
      .post('/boards/mod/lookup')
      .send({ window: 'h', items: ['a', 'c'] })
      .expect(200);
    expect(lookup.body.items).toMatchObject([
      { item: 'a', score: 10, rank: null, hidden: true },
      { item: 'c', rank: 2 },
    ]);
    const liked = await http().post('/boards/mod/items/a/likes').send({ userId: 'u1' });
    expect([liked.status, liked.body.windows?.h?.rank]).toEqual([200, null]);
    const likedB = await http().post('/boards/mod/items/b/likes').send({ userId: 'u1' });
    expect([likedB.status, likedB.body.windows?.h?.rank]).toEqual([200, 1]);
    const around = await http().get('/boards/mod/items/b/around?window=h&radius=2').expect(200);
    expect(around.body.items.map((row: { item: string }) => row.item)).toEqual(['b', 'c']);
    await clear('mod', 'a').set(ADMIN).expect(204);
    expect(await top('mod')).toEqual([
      ['a', 1],
      ['b', 2],
      ['c', 3],
    ]);
    const back = (await http().get('/boards/mod/items/a?window=h').expect(200)).body;
    expect(back).toMatchObject({ score: 11, rank: 1 });
    expect(back.hidden).toBeUndefined();
  });

  it('lists only allowed items on a review board; the queue pages the others best first', async () => {
    expect(await top('rev')).toEqual([]);
    const board = (await http().get('/boards/rev').expect(200)).body;
    expect(board.moderation).toEqual({ review: true });
    await state('rev', 'b').set(ADMIN).send({ state: 'allowed' }).expect(204);
    expect(await top('rev')).toEqual([['b', 1]]);
    const first = await http().get('/admin/boards/rev/moderation/queue?window=h&limit=1').set(ADMIN).expect(200);
    expect(first.body).toEqual({ board: 'rev', window: 'h', items: [{ item: 'a', score: 9 }], nextCursor: '1' });
    const next = await http().get('/admin/boards/rev/moderation/queue?limit=1&cursor=1').set(ADMIN).expect(200);
    expect(next.body).toMatchObject({ items: [{ item: 'c', score: 2 }], nextCursor: null });
    await state('rev', 'c').set(ADMIN).send({ state: 'hidden' }).expect(204);
    const after = await http().get('/admin/boards/rev/moderation/queue').set(ADMIN).expect(200);
    expect(after.body.items).toEqual([{ item: 'a', score: 9 }]);
  });

  it('guards the routes and answers each error with its code', async () => {
    await state('mod', 'a').send({ state: 'hidden' }).expect(401);
    await state('mod', 'a')
      .set({ Authorization: 'Bearer wrong-token-0123456789abcdef' })
      .send({ state: 'hidden' })
      .expect(403);
    await clear('mod', 'a').expect(401);
    await http().get('/admin/boards/rev/moderation/queue').expect(401);
    const bad = await state('mod', 'a').set(ADMIN).send({ state: 'gone' }).expect(400);
    expect(bad.body.code).toBe('INVALID_INPUT');
    expect((await state('nope', 'a').set(ADMIN).send({ state: 'hidden' }).expect(404)).body.code).toBe(
      'BOARD_NOT_FOUND',
    );
    const plain = await http().get('/admin/boards/mod/moderation/queue').set(ADMIN).expect(400);
    expect(plain.body.code).toBe('INVALID_INPUT');
    const deep = await http().get('/admin/boards/rev/moderation/queue?limit=100&cursor=950').set(ADMIN).expect(422);
    expect(deep.body.code).toBe('REQUEST_TOO_COSTLY');
    await http().get('/admin/boards/rev/moderation/queue?cursor=x').set(ADMIN).expect(400);
    await http().get('/admin/boards/rev/moderation/queue?window=zz').set(ADMIN).expect(404);
  });

  it('answers a repeat of an Idempotency-Key with the first answer, applied once', async () => {
    const key = { ...ADMIN, 'Idempotency-Key': 'hide-a-1' };
    await state('mod', 'a').set(key).send({ state: 'hidden' }).expect(204);
    await clear('mod', 'a').set(ADMIN).expect(204);
    const repeat = await state('mod', 'a').set(key).send({ state: 'hidden' }).expect(204);
    expect(repeat.headers['idempotent-replayed']).toBe('true');
    expect((await http().get('/boards/mod/items/a?window=h').expect(200)).body.rank).toBe(1);
    const reused = await state('mod', 'a').set(key).send({ state: 'allowed' }).expect(422);
    expect(reused.body.code).toBe('IDEMPOTENCY_KEY_REUSED');
  });
});
