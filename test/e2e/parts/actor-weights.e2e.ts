import { ADMIN, createBoard } from '../../../harness/app';
import { useApp } from '../../support/e2e';
import { Topology } from '../../../harness/redis';

const WINDOWS = [
  { name: 'hour', period: '1h', interval: '5m' },
  { name: 'day', period: '24h', interval: '1h' },
];
const BOARD = {
  windows: WINDOWS,
  views: [{ name: 'people', mode: 'unique', window: 'hour' }],
  segments: { max: 4 },
  actors: { capPerItem: 5 },
};

type Row = { item: string; score: number };
const rowsOf = (body: { items: Row[] }) => body.items.map((r) => [r.item, r.score]);

/** Actor caps and weights over HTTP: the board setting, the cap on writes, the weight routes, their guards and errors. */
describe.each<[Topology, number]>([
  ['single', 1],
  ['cluster', 3],
])('actor weights and caps (%s, shards: %i)', (topology, shards) => {
  const e2e = useApp(topology, { fresh: true });
  const { http } = e2e;
  const increment = (item: string, body: object) => http().post(`/boards/b/items/${item}/increment`).send(body);
  const weigh = (actor: string, body: object) => http().put(`/admin/boards/b/actors/${actor}`).set(ADMIN).send(body);
  const top = async (query = '') => rowsOf((await http().get(`/boards/b/top?window=hour${query}`).expect(200)).body);

  /** Polls a re-weighting until done (its steps run in the background; each poll lets them go on). */
  async function finished(actor: string): Promise<{ state: string; events: number; weight: number }> {
    for (let i = 0; i < 200; i++) {
      const got = await http().get(`/admin/boards/b/actors/${actor}`).set(ADMIN).expect(200);
      if (got.body.state === 'done') return got.body;
      await new Promise((resolve) => setImmediate(resolve));
    }
    throw new Error(`re-weighting of ${actor} did not finish`);
  }

  beforeEach(async () => {
    await createBoard(e2e.app(), 'b', { ...BOARD, shards });
  });

  it('the board answers its cap; actors: true takes it off, which needs reset', async () => {
    expect((await http().get('/boards/b').expect(200)).body).toMatchObject({ actors: true, capPerItem: 5 });
    const put = (query: string) =>
      http().put(`/admin/boards/b${query}`).set(ADMIN).send({ windows: WINDOWS, shards, actors: true });
    expect((await put('').expect(409)).body.message).toMatch(/actors\.capPerItem would change from 5 to none/);
    expect((await put('?reset=true').expect(200)).body).not.toHaveProperty('capPerItem');
  });

  it.each([
    [{ capPerItem: 0 }, 'actors must be true, false or an object'],
    [{ capPerItem: 1.5 }, 'actors must be true, false or an object'],
    [{ cap: 3 }, 'actors must be true, false or an object'],
    ['yes', 'actors must be true, false or an object'],
  ])('refuses actors %j with 400 naming the field', async (actors, message) => {
    const { body } = await http().put('/admin/boards/c').set(ADMIN).send({ windows: WINDOWS, actors }).expect(400);
    expect(body).toMatchObject({ code: 'INVALID_INPUT' });
    expect(JSON.stringify(body.message)).toContain(message);
  });

  it("caps one actor's events per item and window, in segments too; a retry counts once", async () => {
    await increment('x', { amount: 4, actor: 'bot', segments: ['en'] }).expect(200);
    const keyed = () => increment('x', { amount: 4, actor: 'bot', segments: ['en'] }).set('Idempotency-Key', 'k-1');
    const first = await keyed().expect(200);
    expect(first.body.windows.hour).toMatchObject({ score: 5 });
    expect((await keyed().expect(200)).headers['idempotent-replayed']).toBe('true');
    await http()
      .post('/boards/b/increments')
      .send({
        items: [
          { item: 'x', amount: 9, actor: 'bot' },
          { item: 'x', amount: 2, actor: 'ann' },
          { item: 'x', amount: 1 },
        ],
      })
      .expect(200);
    expect(await top()).toEqual([['x', 8]]);
    expect(await top('&segment=en')).toEqual([['x', 5]]);
  });

  it("re-weights an actor's live events in every window and view; new events count at the weight", async () => {
    await increment('x', { amount: 2, actor: 'ann' }).expect(200);
    await increment('y', { amount: 1, actor: 'ann', segments: ['en'] }).expect(200);
    await increment('y', { amount: 3, actor: 'bob' }).expect(200);
    const put = await weigh('ann', { weight: 2 }).expect(202);
    expect(put.body).toMatchObject({ actor: 'ann', weight: 2 });
    expect(await finished('ann')).toEqual({ actor: 'ann', weight: 2, state: 'done', events: 2 });
    expect(await top()).toEqual([
      ['y', 5],
      ['x', 4],
    ]);
    expect(await top('&segment=en')).toEqual([['y', 2]]);
    await increment('x', { amount: 2, actor: 'ann' }).expect(200);
    expect(await top()).toEqual([
      ['y', 5],
      ['x', 5],
    ]);
    // Weight 0: the actor's events add nothing, but it still counts as one of an item's actors.
    await weigh('ann', {}).expect(202);
    await weigh('bob', { weight: 0 }).expect(202);
    await finished('ann');
    await finished('bob');
    expect(await top()).toEqual([
      ['x', 4],
      ['y', 1],
    ]);
    expect(rowsOf((await http().get('/boards/b/top?window=people').expect(200)).body)).toEqual([
      ['y', 2],
      ['x', 1],
    ]);
  });

  it('answers the default weight of an actor never weighed, and a repeat PUT changes nothing', async () => {
    expect((await http().get('/admin/boards/b/actors/zed').set(ADMIN).expect(200)).body).toEqual({
      actor: 'zed',
      weight: 1,
      state: 'done',
      events: 0,
    });
    await weigh('zed', { weight: 7 }).expect(202);
    await finished('zed');
    expect((await weigh('zed', { weight: 7 }).expect(202)).body).toMatchObject({ weight: 7, state: 'done' });
  });

  it.each([
    [{ weight: 101 }, 400, 'INVALID_INPUT'],
    [{ weight: -1 }, 400, 'INVALID_INPUT'],
    [{ weight: 1.5 }, 400, 'INVALID_INPUT'],
    [{ weight: 2, extra: 1 }, 400, 'INVALID_INPUT'],
  ])('refuses %j with %i %s', async (body, status, code) => {
    expect((await weigh('ann', body).expect(status)).body).toMatchObject({ code });
  });

  it('needs the admin token, a known board and a board with actors', async () => {
    await http().put('/admin/boards/b/actors/ann').send({ weight: 2 }).expect(401);
    await http().put('/admin/boards/b/actors/ann').set('Authorization', 'Bearer wrong').send({ weight: 2 }).expect(403);
    await http().get('/admin/boards/b/actors/ann').expect(401);
    const missing = await http().put('/admin/boards/nope/actors/ann').set(ADMIN).send({ weight: 2 }).expect(404);
    expect(missing.body).toMatchObject({ code: 'BOARD_NOT_FOUND' });
    await createBoard(e2e.app(), 'plain', { windows: WINDOWS });
    const plain = await http().put('/admin/boards/plain/actors/ann').set(ADMIN).send({ weight: 2 }).expect(400);
    expect(plain.body).toMatchObject({ code: 'INVALID_INPUT' });
    await http().get('/admin/boards/plain/actors/ann').set(ADMIN).expect(400);
  });
});
