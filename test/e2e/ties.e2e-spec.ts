import { ADMIN, createBoard } from '../support/app';
import { useSingleNodeApp } from '../support/e2e';

const T0 = 1_700_002_800_000;

describe('ties: first over HTTP', () => {
  const { app, clock, http, redis } = useSingleNodeApp({ startMs: T0, fresh: true });
  const increment = (item: string, amount: number) =>
    http().post(`/boards/t/items/${item}/increment`).send({ amount }).expect(200);
  const rows = async (path: string) =>
    (await http().get(path).expect(200)).body.items.map((row: { item: string; rank: number; score: number }) => [
      row.item,
      row.rank,
      row.score,
    ]);

  it('ranks strictly, the item that reached its score first higher, on every read', async () => {
    await createBoard(app(), 't', { windows: [{ name: 'h', period: '1h', interval: '1m' }], ties: 'first' });
    expect((await http().get('/boards/t').expect(200)).body.ties).toBe('first');
    await increment('a', 5);
    await increment('c', 2);
    const b = await increment('b', 5);
    expect(b.body.windows.h).toMatchObject({ score: 5, rank: 2 });
    await increment('c', 3); // c reaches 5 last
    await increment('z', 9);
    expect(await rows('/boards/t/top')).toEqual([
      ['z', 1, 9],
      ['a', 2, 5],
      ['b', 3, 5],
      ['c', 4, 5],
    ]);
    expect(await rows('/boards/t/top?offset=3&limit=1')).toEqual([['c', 4, 5]]);
    expect((await http().get('/boards/t/items/b')).body).toMatchObject({ score: 5, rank: 3, percentile: 33.33 });
    expect(await rows('/boards/t/items/b/around?radius=1')).toEqual([
      ['a', 2, 5],
      ['b', 3, 5],
      ['c', 4, 5],
    ]);
    const lookup = await http()
      .post('/boards/t/lookup')
      .send({ items: ['c', 'a', 'b'] })
      .expect(200);
    expect(lookup.body.items.map((row: { rank: number }) => row.rank)).toEqual([4, 2, 3]);
    const relative = await http()
      .post('/boards/t/lookup')
      .send({ items: ['c', 'b', 'q'], relative: true });
    expect(relative.body.items.map((row: { rank: number | null }) => row.rank)).toEqual([2, 1, null]);
    // a leaves 5 and comes back: now it reached 5 after b and c.
    await increment('a', 1);
    await increment('a', -1);
    expect(await rows('/boards/t/top')).toEqual([
      ['z', 1, 9],
      ['b', 2, 5],
      ['c', 3, 5],
      ['a', 4, 5],
    ]);
  });

  it('orders by the expiry that gave an item its score', async () => {
    await createBoard(app(), 't', { windows: [{ name: 'm', period: '3m', interval: '1m' }], ties: 'first' });
    await increment('a', 1); // slot 0: a 1
    clock.advanceSec(60);
    await increment('b', 2); // slot 1: b reaches 2
    await increment('a', 2); // a reaches 3
    clock.advanceSec(2 * 60); // slot 0 expires: a falls to 2, after b
    expect(await rows('/boards/t/top')).toEqual([
      ['b', 1, 2],
      ['a', 2, 2],
    ]);
  });

  it('refuses ties: first on a sharded board, and a change of ties without reset', async () => {
    const put = (body: object, query = '') => http().put(`/admin/boards/s${query}`).set(ADMIN).send(body);
    const windows = [{ name: 'h', period: '1h', interval: '1m' }];
    const sharded = await put({ windows, shards: 2, ties: 'first' }).expect(400);
    expect(sharded.body).toMatchObject({ code: 'INVALID_INPUT', message: expect.stringMatching(/1 shard/) });
    expect((await put({ windows, ties: 'best' }).expect(400)).body.message).toMatch(/ties must be one of/);
    expect((await put({ windows, ties: null }).expect(400)).body.message).toMatch(/ties/);
    await put({ windows, shards: 2 }).expect(201);
    const later = await put({ windows, ties: 'first' }).expect(409);
    expect(later.body).toMatchObject({ code: 'BOARD_CONFIG_CONFLICT', message: expect.stringMatching(/1 shard/) });
    await put({ windows, shards: 1 }, '?reset=true').expect(200);
    await http().post('/boards/s/items/a/increment').send({ amount: 3 }).expect(200);
    const change = await put({ windows, ties: 'first' }).expect(409);
    expect(change.body.message).toMatch(/ties would change from shared to first/);
    expect((await put({ windows, ties: 'first' }, '?reset=true').expect(200)).body.ties).toBe('first');
    expect((await http().get('/boards/s/items/a')).body.score).toBe(0);
    await http().post('/boards/s/items/a/increment').send({ amount: 3 }).expect(200);
    await put({ windows, ties: 'shared' }, '?reset=true').expect(200);
    expect(await redis().dataKeys('board:s}:h:order')).toEqual([]);
    await http().delete('/admin/boards/s').set(ADMIN).expect(204);
    expect(await redis().dataKeys('board:s*')).toEqual([]);
  });

  it('keeps shared ranks on a board without ties', async () => {
    await createBoard(app(), 't');
    await increment('a', 5);
    await increment('b', 5);
    expect((await rows('/boards/t/top')).map((row: unknown[]) => row[1])).toEqual([1, 1]);
  });
});
