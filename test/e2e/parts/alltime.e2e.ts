import { ADMIN } from '../../../harness/app';
import { T0, useSingleNodeApp } from '../../support/e2e';

const ROLLING = { name: 'h', period: '1h', interval: '1m' };
const EVER = { name: 'ever', allTime: true };
const YEAR_SEC = 365 * 86_400;

describe('all-time windows over HTTP', () => {
  const { http, clock } = useSingleNodeApp({ startMs: T0, fresh: true });
  const put = (name: string, body: object) => http().put(`/admin/boards/${name}`).set(ADMIN).send(body);

  it.each([
    [{ windows: [ROLLING, EVER] }, /the all-time window "ever" keeps its items for good, so the board needs maxItems/],
    [{ windows: [EVER, { ...EVER, name: 'x', period: '1h' }], maxItems: 10 }, /windows\.1\.period: an all-time window/],
    [{ windows: [{ ...EVER, snapshots: { keep: 2, top: 10 } }], maxItems: 10 }, /windows\.0\.snapshots: an all-time/],
    [{ windows: [{ ...EVER, calendar: 'day' }], maxItems: 10 }, /windows\.0\.calendar: an all-time window/],
    [{ windows: [{ allTime: true }], maxItems: 10 }, /windows\.0: an all-time window needs a name/],
    [{ windows: [{ ...EVER, allTime: 'yes' }], maxItems: 10 }, /allTime must be true or false/],
    [{ windows: [EVER], maxItems: 10, segments: { max: 5 } }, /its segments would then grow without end/],
    [{ windows: [EVER], maxItems: 10, actors: true }, /actors' contributions would then grow without end/],
    [
      { windows: [EVER], maxItems: 10, views: [{ name: 'hot', mode: 'hot', window: 'ever' }] },
      /reads rolling windows; "ever" is an all-time window/,
    ],
  ])('refuses %j with 400 INVALID_INPUT', async (body, message) => {
    const answer = await put('bad', body).expect(400);
    expect(answer.body.code).toBe('INVALID_INPUT');
    expect(answer.body.message).toMatch(message);
    await http().get('/boards/bad').expect(404);
  });

  it('keeps every event beside a rolling window: old `at` accepted, from/to null, the board view, span refused', async () => {
    const created = await put('ever', { windows: [ROLLING, EVER], maxItems: 2 }).expect(201);
    expect(created.body.windows).toEqual([{ name: 'h', period: 3600, interval: 60 }, EVER]);
    const nowSec = T0 / 1000;
    const old = await http()
      .post('/boards/ever/items/ann/increment')
      .send({ amount: 5, at: nowSec - 20 * YEAR_SEC })
      .expect(200);
    expect(old.body.windows).toEqual({
      h: { score: 0, rank: null, previousRank: null },
      ever: { score: 5, rank: 1, previousRank: null },
    });
    await http().post('/boards/ever/items/bob/increment').send({ amount: 2 }).expect(200);
    clock.advanceMs(400 * 86_400_000);
    const top = await http().get('/boards/ever/top?window=ever').expect(200);
    expect(top.body).toMatchObject({ from: null, to: null, draining: false });
    expect(top.body.items.map((row: { item: string; score: number }) => [row.item, row.score])).toEqual([
      ['ann', 5],
      ['bob', 2],
    ]);
    expect((await http().get('/boards/ever/top?window=h').expect(200)).body.items).toEqual([]);
    const item = await http().get('/boards/ever/items/bob?window=ever').expect(200);
    expect(item.body).toMatchObject({ from: null, to: null, rank: 2, score: 2 });
    const rank = await http().get('/boards/ever/rank?window=ever&score=3').expect(200);
    expect(rank.body).toMatchObject({ from: null, to: null, rank: 2 });
    const span = await http().get('/boards/ever/top?window=ever&span=1h').expect(400);
    expect(span.body.message).toMatch(/"ever" of board "ever" is an all-time window/);
    const like = await http().post('/boards/ever/items/bob/likes').send({ userId: 'u1' }).expect(400);
    expect([like.body.code, like.body.message]).toEqual(['INVALID_INPUT', expect.stringMatching(/takes no likes/)]);
    // The cap bounds what it holds for good.
    const full = await http().post('/boards/ever/items/cy/increment').send({ amount: 1 }).expect(409);
    expect(full.body.code).toBe('BOARD_FULL');
  });

  it('a PUT without maxItems keeps the stored cap, and the data', async () => {
    await put('kept', { windows: [ROLLING, EVER], maxItems: 5 }).expect(201);
    await http().post('/boards/kept/items/ann/increment').send({ amount: 3 }).expect(200);
    await put('kept', { windows: [ROLLING, EVER] }).expect(200);
    const top = await http().get('/boards/kept/top?window=ever').expect(200);
    expect(top.body.items.map((row: { item: string }) => row.item)).toEqual(['ann']);
  });
});
