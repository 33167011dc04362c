import { ADMIN, createBoard } from '../../../harness/app';
import { listedRows, useSingleNodeApp } from '../../support/e2e';

const T0 = 1_700_002_800_000;

describe('ties: first over HTTP', () => {
  const { app, clock, http, redis } = useSingleNodeApp({ startMs: T0, fresh: true });
  const increment = async (item: string, amount: number) => {
    const answer = await http().post(`/boards/t/items/${item}/increment`).send({ amount }).expect(200);
    clock.advanceMs(1);
    return answer;
  };
  const rows = listedRows(http);

  // Sharded (a, b and z on one shard, c on another, q on a third): across shards the order is known
  // to the millisecond, so the writes here are a millisecond apart.
  it.each([1, 3])(
    '%i shard(s): ranks strictly, the item that reached its score first higher, on every read',
    async (shards) => {
      const windows = [{ name: 'h', period: '1h', interval: '1m' }];
      await createBoard(app(), 't', { windows, ties: 'first', shards });
      expect((await http().get('/boards/t').expect(200)).body).toMatchObject({ ties: 'first', shards });
      await increment('a', 5);
      await increment('c', 2);
      const b = await increment('b', 5);
      expect(b.body.windows.h).toMatchObject({ score: 5, rank: 2 });
      const c = await increment('c', 3); // c reaches 5 last
      expect(c.body.windows.h).toMatchObject({ score: 5, rank: 3 });
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
      // q (a shard of its own when sharded) reaches 5 last: after c, whatever the shard.
      expect((await increment('q', 5)).body.windows.h).toMatchObject({ score: 5, rank: 5 });
      expect((await rows('/boards/t/top?offset=3&limit=2')).map((row: unknown[]) => row[0])).toEqual(['c', 'q']);
      await increment('q', -5);
      // a leaves 5 and comes back: now it reached 5 after b and c.
      await increment('a', 1);
      await increment('a', -1);
      expect(await rows('/boards/t/top')).toEqual([
        ['z', 1, 9],
        ['b', 2, 5],
        ['c', 3, 5],
        ['a', 4, 5],
      ]);
    },
  );

  it.each([1, 3])('%i shard(s): orders by the expiry that gave an item its score', async (shards) => {
    const windows = [{ name: 'm', period: '3m', interval: '1m' }];
    await createBoard(app(), 't', { windows, ties: 'first', shards });
    await increment('a', 1); // slot 0: a 1
    clock.advanceSec(60);
    await increment('b', 2); // slot 1: b reaches 2
    await increment('c', 2); // c (another shard when sharded) reaches 2 after b
    await increment('a', 2); // a reaches 3
    clock.advanceSec(2 * 60); // slot 0 expires: a falls to 2, after b
    expect(await rows('/boards/t/top')).toEqual([
      ['b', 1, 2],
      ['c', 2, 2],
      ['a', 3, 2],
    ]);
  });

  it.each([1, 3])('%i shard(s): the window of a segment ranks strictly too', async (shards) => {
    const windows = [{ name: 'h', period: '1h', interval: '1m' }];
    await createBoard(app(), 't', { windows, ties: 'first', shards, segments: { max: 2 } });
    const send = async (item: string, amount: number, segments: string[]) => {
      const body = segments.length > 0 ? { amount, segments } : { amount };
      await http().post(`/boards/t/items/${item}/increment`).send(body).expect(200);
      clock.advanceMs(1);
    };
    await send('c', 4, ['en']);
    await send('a', 4, ['en']);
    await send('b', 4, []);
    await send('q', 4, ['en']);
    expect((await rows('/boards/t/top?segment=en')).map((row: unknown[]) => row.slice(0, 2))).toEqual([
      ['c', 1],
      ['a', 2],
      ['q', 3],
    ]);
    expect((await http().get('/boards/t/items/q?segment=en').expect(200)).body.rank).toBe(3);
    expect((await http().get('/boards/t/items/q').expect(200)).body.rank).toBe(4);
  });

  it('takes ties: first on a sharded board (once a 400), and refuses a change of ties without reset', async () => {
    const put = (body: object, query = '') => http().put(`/admin/boards/s${query}`).set(ADMIN).send(body);
    const windows = [{ name: 'h', period: '1h', interval: '1m' }];
    expect((await put({ windows, shards: 2, ties: 'first' }).expect(201)).body).toMatchObject({
      shards: 2,
      ties: 'first',
    });
    await http().post('/boards/s/items/a/increment').send({ amount: 3 }).expect(200);
    await http().post('/boards/s/items/b/increment').send({ amount: 3 }).expect(200);
    expect(await redis().dataKeys('board:s*:h:order')).toHaveLength(2); // a and b: one on each shard
    const back = await put({ windows, shards: 2, ties: 'shared' }).expect(409);
    expect(back.body).toMatchObject({
      code: 'BOARD_CONFIG_CONFLICT',
      message: expect.stringMatching(/ties would change from first to shared/),
    });
    await put({ windows, shards: 2, ties: 'shared' }, '?reset=true').expect(200);
    // Every shard drops its strict order with the data.
    expect(await redis().dataKeys('board:s*:h:order')).toEqual([]);
    expect((await http().get('/boards/s/items/a')).body.score).toBe(0);
    expect((await put({ windows, ties: 'best' }).expect(400)).body.message).toMatch(/ties must be one of/);
    expect((await put({ windows, ties: null }).expect(400)).body.message).toMatch(/ties/);
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
