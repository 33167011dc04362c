import { ADMIN, createBoard } from '../../../harness/app';
import { T0, useApp } from '../../support/e2e';
import { Topology } from '../../../harness/redis';

const BOARD = {
  windows: [
    { name: 'hour', period: '1h', interval: '5m' },
    { name: 'day', period: '24h', interval: '1h' },
  ],
  views: [{ name: 'people', mode: 'unique', window: 'hour' }],
  actors: true,
};

type Row = { item: string; score: number };
const rowsOf = (body: { items: Row[] }) => body.items.map((r) => [r.item, r.score]);

/** Actors over HTTP: the config and its refusals, actors on events, unique views, retractions and their errors. */
describe.each<[Topology, number]>([
  ['single', 1],
  ['single', 3],
  ['cluster', 3],
])('actors (%s, shards: %i)', (topology, shards) => {
  const e2e = useApp(topology, { fresh: true });
  const { clock, http } = e2e;
  const increment = (item: string, body: object) => http().post(`/boards/b/items/${item}/increment`).send(body);
  const retract = (body: object) => http().post('/admin/boards/b/retractions').set(ADMIN).send(body);

  /** Polls a retraction until done (its steps run in the background; each poll lets them go on). */
  async function finished(id: string): Promise<{ state: string; events: number; amount: number }> {
    for (let i = 0; i < 200; i++) {
      const got = await http().get(`/admin/boards/b/retractions/${id}`).set(ADMIN).expect(200);
      if (got.body.state === 'done') return got.body;
      await new Promise((resolve) => setImmediate(resolve));
    }
    throw new Error(`retraction ${id} did not finish`);
  }

  beforeEach(async () => {
    await createBoard(e2e.app(), 'b', { ...BOARD, shards });
  });

  it('the board answers its actors setting and its unique view', async () => {
    const board = await http().get('/boards/b').expect(200);
    expect(board.body).toMatchObject({ actors: true, views: [{ name: 'people', mode: 'unique', window: 'hour' }] });
  });

  it('a unique view counts distinct actors per item; events without an actor count in windows only', async () => {
    await increment('x', { amount: 5, actor: 'ann' }).expect(200);
    await increment('x', { amount: 1, actor: 'ann' }).expect(200);
    await increment('x', { amount: 1, actor: 'bob' }).expect(200);
    await increment('y', { amount: 2, actor: 'cy' }).expect(200);
    await increment('y', { amount: 9 }).expect(200);
    await http()
      .post('/boards/b/increments')
      .send({
        items: [
          { item: 'y', amount: 1, actor: 'dee' },
          { item: 'z', amount: 1, actor: 'dee' },
        ],
      })
      .expect(200);

    expect(rowsOf((await http().get('/boards/b/top').expect(200)).body)).toEqual([
      ['y', 12],
      ['x', 7],
      ['z', 1],
    ]);
    const people = await http().get('/boards/b/top?window=people').expect(200);
    expect(people.body.mode).toBe('unique');
    expect(rowsOf(people.body)).toEqual([
      ['y', 2],
      ['x', 2],
      ['z', 1],
    ]);
    const item = await http().get('/boards/b/items/z?window=people').expect(200);
    expect(item.body).toMatchObject({ item: 'z', score: 1, rank: 3 });
  });

  it('an actor leaves the unique count when its last slot expires, not before', async () => {
    clock.setMs(T0);
    await increment('x', { actor: 'ann' }).expect(200);
    clock.advanceSec(30 * 60);
    await increment('x', { actor: 'ann' }).expect(200);
    await increment('x', { actor: 'bob' }).expect(200);
    clock.advanceSec(40 * 60);
    expect(rowsOf((await http().get('/boards/b/top?window=people').expect(200)).body)).toEqual([['x', 2]]);
    clock.advanceSec(30 * 60);
    expect(rowsOf((await http().get('/boards/b/top?window=people').expect(200)).body)).toEqual([]);
    expect(rowsOf((await http().get('/boards/b/top?window=day').expect(200)).body)).toEqual([['x', 3]]);
  });

  it("a retraction takes an actor's events out of every window and view, and counts them once", async () => {
    await increment('x', { amount: 5, actor: 'spam' }).expect(200);
    await increment('x', { amount: 2, actor: 'ann' }).expect(200);
    clock.advanceSec(600);
    await increment('y', { amount: 3, actor: 'spam' }).expect(200);
    await increment('y', { amount: 1, actor: 'bob' }).expect(200);

    const started = await retract({ actor: 'spam' }).expect(202);
    expect(started.body).toMatchObject({ id: expect.any(String), actor: 'spam' });
    expect(await finished(started.body.id)).toMatchObject({ state: 'done', events: 2, amount: 8 });
    for (const window of ['hour', 'day']) {
      const top = await http().get(`/boards/b/top?window=${window}`).expect(200);
      expect(rowsOf(top.body)).toEqual([
        ['x', 2],
        ['y', 1],
      ]);
    }
    expect(rowsOf((await http().get('/boards/b/top?window=people').expect(200)).body)).toEqual([
      ['y', 1],
      ['x', 1],
    ]);
    // Not blocked: the actor's later events count again.
    await increment('x', { amount: 1, actor: 'spam' }).expect(200);
  });

  it("a retraction with block refuses the actor's events (403 RETRACTED) until the block ends", async () => {
    await increment('x', { actor: 'spam' }).expect(200);
    const started = await retract({ actor: 'spam', block: '1h' }).expect(202);
    await finished(started.body.id);
    const refused = await increment('x', { actor: 'spam' }).expect(403);
    expect(refused.body.code).toBe('RETRACTED');
    const scoreOfX = async () => (await http().get('/boards/b/items/x').expect(200)).body.score as number;
    const before = await scoreOfX();
    const batch = await http()
      .post('/boards/b/increments')
      .send({
        items: [
          { item: 'x', actor: 'ann' },
          { item: 'y', actor: 'spam' },
        ],
      })
      .expect(shards === 1 ? 403 : 409);
    // One shard refuses the batch whole; on three, x's shard applies its part and the answer says so.
    expect(batch.body.code).toBe(shards === 1 ? 'RETRACTED' : 'BATCH_PARTIAL');
    expect(await scoreOfX()).toBe(shards === 1 ? before : before + 1);
    await increment('x', { actor: 'ann' }).expect(200);
    clock.advanceSec(3601);
    await increment('x', { actor: 'spam' }).expect(200);
  });

  it("a like's user is its actor: it counts in unique views, an unlike takes it back, a retraction takes it once", async () => {
    const like = (item: string, userId: string) => http().post(`/boards/b/items/${item}/likes`).send({ userId });
    const unlike = (item: string, userId: string) => http().delete(`/boards/b/items/${item}/likes/${userId}`);
    await like('x', 'ann').expect(200);
    await like('x', 'bob').expect(200);
    await increment('x', { amount: 3, actor: 'ann' }).expect(200);
    expect(rowsOf((await http().get('/boards/b/top?window=people').expect(200)).body)).toEqual([['x', 2]]);
    await unlike('x', 'bob').expect(200);
    expect(rowsOf((await http().get('/boards/b/top?window=people').expect(200)).body)).toEqual([['x', 1]]);

    const started = await retract({ actor: 'ann', block: '1h' }).expect(202);
    expect(await finished(started.body.id)).toMatchObject({ events: 2, amount: 4 });
    expect(rowsOf((await http().get('/boards/b/top').expect(200)).body)).toEqual([]);
    // The retracted like is gone with its counts: taking it back changes nothing, liking again is blocked.
    expect((await unlike('x', 'ann').expect(200)).body.counted).toBe(false);
    expect((await like('x', 'ann').expect(403)).body.code).toBe('RETRACTED');
    await like('x', 'cy').expect(200);
    expect(rowsOf((await http().get('/boards/b/top').expect(200)).body)).toEqual([['x', 1]]);

    // An item's retraction takes its likes too: taking one back afterwards subtracts nothing.
    const item = await retract({ item: 'x' }).expect(202);
    await finished(item.body.id);
    expect((await unlike('x', 'cy').expect(200)).body.counted).toBe(false);
    await increment('x', { amount: 1 }).expect(200);
    expect(rowsOf((await http().get('/boards/b/top').expect(200)).body)).toEqual([['x', 1]]);
  });

  it('a retraction with an Idempotency-Key is started once; the key for another actor is a 422', async () => {
    await increment('x', { amount: 4, actor: 'spam' }).expect(200);
    const first = await retract({ actor: 'spam' }).set('Idempotency-Key', 'retract-spam-1').expect(202);
    await finished(first.body.id);
    await increment('y', { amount: 1, actor: 'spam' }).expect(200);
    const again = await retract({ actor: 'spam' }).set('Idempotency-Key', 'retract-spam-1').expect(202);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toMatchObject({ id: first.body.id, state: 'done', events: 1, amount: 4 });
    // Replayed, not run again: the later event stays.
    expect(rowsOf((await http().get('/boards/b/top').expect(200)).body)).toEqual([['y', 1]]);
    const reused = await retract({ actor: 'ann' }).set('Idempotency-Key', 'retract-spam-1').expect(422);
    expect(reused.body.code).toBe('IDEMPOTENCY_KEY_REUSED');
  });

  it('refuses what a retraction cannot take, and unknown ids', async () => {
    expect((await retract({ item: 'x', actor: 'a' }).expect(400)).body.message).toMatch(/one of actor, item/);
    expect((await retract({}).expect(400)).body.message).toMatch(/actor/);
    expect((await retract({ actor: 'a', block: 'soon' }).expect(400)).body.message).toMatch(/block/);
    await http().post('/admin/boards/b/retractions').send({ actor: 'a' }).expect(401);
    await http().post('/admin/boards/nope/retractions').set(ADMIN).send({ actor: 'a' }).expect(404);
    const unknown = await http()
      .get('/admin/boards/b/retractions/0b7e9a8e-7c1f-4bb0-9d1c-2f5b1d3c9e10')
      .set(ADMIN)
      .expect(404);
    expect(unknown.body.code).toBe('RETRACTION_NOT_FOUND');
    await http().get('/admin/boards/b/retractions/not-an-id').set(ADMIN).expect(400);
  });
});

describe('actors config (single)', () => {
  const e2e = useApp('single', { fresh: true });
  const { http } = e2e;
  const put = (name: string, body: object) => http().put(`/admin/boards/${name}`).set(ADMIN).send(body);
  const windows = [{ name: 'hour', period: '1h', interval: '5m' }];

  it('refuses actors where they make no sense, and an actor on a board without them', async () => {
    const max = await put('m', { windows, actors: true, aggregate: 'max' }).expect(400);
    expect(max.body).toMatchObject({ code: 'INVALID_INPUT', message: expect.stringMatching(/^actors: .*max/) });
    const unique = [{ name: 'people', mode: 'unique', window: 'hour' }];
    expect((await put('u', { windows, views: unique }).expect(400)).body.message).toMatch(/actors/);
    expect((await put('u', { windows, actors: 'yes' }).expect(400)).body.message).toMatch(/actors/);
    await createBoard(e2e.app(), 'plain', { windows });
    await createBoard(e2e.app(), 'best', { windows, aggregate: 'max' });
    const best = await http().post('/admin/boards/best/retractions').set(ADMIN).send({ item: 'x' }).expect(400);
    expect(best.body.message).toMatch(/^item: .*max/);
    const refused = await http().post('/boards/plain/items/x/increment').send({ actor: 'ann' }).expect(400);
    expect(refused.body.message).toMatch(/^actor: /);
    const batch = await http()
      .post('/boards/plain/increments')
      .send({ items: [{ item: 'x', actor: 'ann' }] })
      .expect(400);
    expect(batch.body.message).toMatch(/^items\.0\.actor: /);
    expect(
      (await http().post('/admin/boards/plain/retractions').set(ADMIN).send({ actor: 'a' }).expect(400)).body.message,
    ).toMatch(/actors/);
  });

  it("a board with segments keeps each segment's contributions: retractions reach them", async () => {
    await put('seg', { windows, actors: true, segments: { max: 4 } }).expect(201);
    const increment = (item: string, body: object) => http().post(`/boards/seg/items/${item}/increment`).send(body);
    await increment('x', { amount: 5, actor: 'spam', segments: ['en'] }).expect(200);
    await increment('x', { amount: 2, actor: 'ann', segments: ['en'] }).expect(200);
    await http()
      .post('/boards/seg/increments')
      .send({ items: [{ item: 'y', amount: 3, actor: 'spam', segments: ['en', 'fr'] }] })
      .expect(200);
    await http()
      .post('/boards/seg/items/z/likes')
      .send({ userId: 'spam', segments: ['fr'] })
      .expect(200);
    await http()
      .post('/boards/seg/items/z/likes')
      .send({ userId: 'ann', segments: ['fr'] })
      .expect(200);
    await http().delete('/boards/seg/items/z/likes/ann').expect(200);

    const retract = (body: object) => http().post('/admin/boards/seg/retractions').set(ADMIN).send(body).expect(202);
    const done = async (id: string) => {
      for (let i = 0; i < 100; i++) {
        const got = await http().get(`/admin/boards/seg/retractions/${id}`).set(ADMIN).expect(200);
        if (got.body.state === 'done') return got.body;
      }
      throw new Error('not done');
    };
    expect(await done((await retract({ actor: 'spam' })).body.id)).toMatchObject({ events: 3, amount: 9 });
    expect(rowsOf((await http().get('/boards/seg/top?segment=en').expect(200)).body)).toEqual([['x', 2]]);
    expect(rowsOf((await http().get('/boards/seg/top?segment=fr').expect(200)).body)).toEqual([]);
    expect(rowsOf((await http().get('/boards/seg/top').expect(200)).body)).toEqual([['x', 2]]);
    await done((await retract({ item: 'x' })).body.id);
    expect(rowsOf((await http().get('/boards/seg/top?segment=en').expect(200)).body)).toEqual([]);
    expect(rowsOf((await http().get('/boards/seg/top').expect(200)).body)).toEqual([]);
  });

  it("a unique view a PUT adds is built for each segment from the segment's own actors", async () => {
    const segments = { max: 4 };
    await put('segv', { windows, actors: true, segments }).expect(201);
    const increment = (item: string, body: object) => http().post(`/boards/segv/items/${item}/increment`).send(body);
    await increment('x', { actor: 'ann', segments: ['en'] }).expect(200);
    await increment('x', { actor: 'ann', segments: ['en'] }).expect(200);
    await increment('x', { actor: 'bob', segments: ['fr'] }).expect(200);
    await increment('y', { actor: 'cy', segments: ['en', 'fr'] }).expect(200);
    await increment('y', { actor: 'dee', segments: ['fr'] }).expect(200);
    const views = [{ name: 'people', mode: 'unique', window: 'hour' }];
    await put('segv', { windows, actors: true, segments, views }).expect(200);
    const people = async (segment: string) =>
      rowsOf((await http().get(`/boards/segv/top?window=people&segment=${segment}`).expect(200)).body);
    expect(await people('en')).toEqual([
      ['y', 1],
      ['x', 1],
    ]);
    expect(await people('fr')).toEqual([
      ['y', 2],
      ['x', 1],
    ]);
    // Kept from then on as the segment's windows change.
    await increment('x', { actor: 'eve', segments: ['en'] }).expect(200);
    expect(await people('en')).toEqual([
      ['x', 2],
      ['y', 1],
    ]);
  });

  it('turning actors on later keeps the data and builds a unique view from what it holds', async () => {
    await put('late', { windows }).expect(201);
    await http().post('/boards/late/items/x/increment').send({}).expect(200);
    await put('late', { windows, actors: true, views: [{ name: 'people', mode: 'unique', window: 'hour' }] }).expect(
      200,
    );
    await http().post('/boards/late/items/x/increment').send({ actor: 'ann' }).expect(200);
    const people = await http().get('/boards/late/top?window=people').expect(200);
    expect(rowsOf(people.body)).toEqual([['x', 1]]);
    expect(rowsOf((await http().get('/boards/late/top').expect(200)).body)).toEqual([['x', 2]]);
  });
});

describe.each<[Topology, number]>([
  ['single', 1],
  ['cluster', 3],
])('item retraction (%s, shards: %i)', (topology, shards) => {
  const e2e = useApp(topology, { fresh: true });
  const { clock, http } = e2e;
  const DAY_MS = 86_400_000;
  const rows = async (path: string) => rowsOf((await http().get(path).expect(200)).body);

  it('takes the item out of every window, view, unique count, snapshot and archive, removes its data, and blocks it', async () => {
    clock.setMs(Math.floor(T0 / DAY_MS) * DAY_MS + DAY_MS - 30 * 60_000);
    await createBoard(e2e.app(), 'h', {
      windows: [
        { name: 'hour', period: '1h', interval: '5m', snapshots: { keep: 10, top: 10 } },
        { name: 'day', calendar: 'day', archive: { keep: 3, top: 10 } },
      ],
      views: [
        { name: 'people', mode: 'unique', window: 'hour' },
        { name: 'fresh', mode: 'hot', window: 'hour' },
      ],
      actors: true,
      shards,
    });
    const increment = (item: string, body: object) => http().post(`/boards/h/items/${item}/increment`).send(body);
    await increment('x', { amount: 9, actor: 'ann' }).expect(200);
    await increment('x', { amount: 1 }).expect(200);
    await increment('y', { amount: 5, actor: 'bob' }).expect(200);
    await increment('z', { amount: 2, actor: 'ann' }).expect(200);
    await http().put('/boards/h/items/x/data').send({ title: 'spam' }).expect(204);
    clock.advanceSec(300);
    await increment('y', { amount: 1, actor: 'cy' }).expect(200);
    // Past midnight: the day's archive is taken; the hour keeps its snapshots.
    clock.advanceSec(30 * 60);
    await increment('z', { amount: 1 }).expect(200);
    expect((await rows('/boards/h/history?window=hour'))[0]).toEqual(['x', 10]);
    expect((await rows('/boards/h/archive?window=day'))[0]).toEqual(['x', 10]);

    const started = await http()
      .post('/admin/boards/h/retractions')
      .set(ADMIN)
      .send({ item: 'x', block: '1h' })
      .expect(202);
    expect(started.body).toMatchObject({ item: 'x' });
    let done = started.body;
    for (let i = 0; done.state !== 'done' && i < 100; i++)
      done = (await http().get(`/admin/boards/h/retractions/${started.body.id}`).set(ADMIN).expect(200)).body;
    expect(done).toMatchObject({ state: 'done', item: 'x', events: 1, amount: 10 });

    expect(await rows('/boards/h/top?window=hour')).toEqual([
      ['y', 6],
      ['z', 3],
    ]);
    expect(await rows('/boards/h/top?window=people')).toEqual([
      ['y', 2],
      ['z', 1],
    ]);
    expect((await rows('/boards/h/top?window=fresh')).map(([item]) => item).sort()).toEqual(['y', 'z']);
    const history = await http().get('/boards/h/history?window=hour').expect(200);
    expect(history.body.items).toEqual([
      { rank: 1, item: 'y', score: 6 },
      { rank: 2, item: 'z', score: 2 },
    ]);
    const archive = await http().get('/boards/h/archive?window=day').expect(200);
    expect(rowsOf(archive.body)).toEqual([
      ['y', 6],
      ['z', 2],
    ]);
    const points = await http().get('/boards/h/items/x/history?window=hour').expect(200);
    expect(points.body.points.filter((p: { rank: number | null }) => p.rank !== null)).toEqual([]);
    const top = await http().get('/boards/h/top?window=hour').expect(200);
    expect(top.body.items[0]).toMatchObject({ item: 'y', previousRank: 1 });
    await http().get('/boards/h/items/x?window=hour&data=true').expect(200);
    const data = await http()
      .post('/boards/h/lookup?data=true')
      .send({ items: ['x'] })
      .expect(200);
    expect(data.body.items[0]).toMatchObject({ item: 'x', score: 0, data: null });

    const refused = await increment('x', { amount: 1 }).expect(403);
    expect(refused.body).toMatchObject({ code: 'RETRACTED', message: expect.stringMatching(/^item: /) });
    clock.advanceSec(3601);
    await increment('x', { amount: 1 }).expect(200);
  });
});
