import request from 'supertest';
import { ADMIN } from '../../../harness/app';
import { useSingleNodeApp } from '../../support/e2e';

const T0 = 1_700_002_800_000; // an hour boundary (unix ms)
const T0_SEC = T0 / 1000;
const WINDOWS = [
  { name: '3m', period: '3m', interval: '1m' },
  { name: '1h', period: '1h', interval: '1m' },
];

/** Max / min / last boards over HTTP: the score route, board config and every refusal. */
describe.each([1, 3])('aggregate boards over HTTP (shards: %i)', (shards) => {
  const e2e = useSingleNodeApp({ startMs: T0 });
  const { clock, http } = e2e;
  const put = (name: string, body: object, query = '') =>
    http()
      .put(`/admin/boards/${name}${query}`)
      .set(ADMIN)
      .send({ windows: WINDOWS, shards, ...body });
  const score = (board: string, item: string, body: object) =>
    http()
      .post(`/boards/${board}/items/${encodeURIComponent(item)}/score`)
      .send(body);

  beforeEach(async () => {
    await e2e.redis().clear();
    clock.setMs(T0);
  });

  it('a max board keeps the best score per window, and the next best once the best expires', async () => {
    await put('best', { aggregate: 'max' })
      .expect(201)
      .expect((res) => expect(res.body.aggregate).toBe('max'));
    await score('best', 'ann', { score: 40 }).expect(200);
    clock.setMs(T0 + 60_000);
    const lower = await score('best', 'ann', { score: 25 }).expect(200);
    expect(lower.body).toEqual({
      board: 'best',
      item: 'ann',
      draining: false,
      windows: { '3m': { score: 40, rank: 1, previousRank: null }, '1h': { score: 40, rank: 1, previousRank: null } },
    });
    await score('best', 'bob', { score: 30 }).expect(200);
    clock.setMs(T0 + 3 * 60_000); // the slot holding 40 leaves the 3-minute window
    const top = await http().get('/boards/best/top?window=3m').expect(200);
    expect(top.body.items).toEqual([
      { rank: 1, item: 'bob', score: 30, previousRank: null },
      { rank: 2, item: 'ann', score: 25, previousRank: null },
    ]);
    const hour = await http().get('/boards/best/items/ann?window=1h').expect(200);
    expect(hour.body).toMatchObject({ score: 40, rank: 1 });
  });

  it('min keeps the lowest, last the latest event (by at; equal times by arrival)', async () => {
    await put('low', { aggregate: 'min' }).expect(201);
    await score('low', 'ann', { score: 50 }).expect(200);
    await score('low', 'ann', { score: 70 }).expect(200);
    expect((await http().get('/boards/low/items/ann').expect(200)).body.score).toBe(50);

    await put('late', { aggregate: 'last' }).expect(201);
    clock.setMs(T0 + 120_000);
    await score('late', 'ann', { score: 7 }).expect(200);
    const older = await score('late', 'ann', { score: 9, at: T0_SEC + 30 }).expect(200);
    expect(older.body.windows['1h'].score).toBe(7); // an earlier event does not replace a later one
    await score('late', 'ann', { score: 8 }).expect(200);
    await score('late', 'ann', { score: 6 }).expect(200);
    expect((await http().get('/boards/late/items/ann?window=1h').expect(200)).body.score).toBe(6);
    expect((await score('late', 'x', { score: 10 ** 15 }).expect(200)).body.windows['3m'].score).toBe(10 ** 15);
  });

  it('a batch on a max board carries scores (one kind per batch)', async () => {
    await put('best', { aggregate: 'max' }).expect(201);
    await put('sums', {}).expect(201);
    const batch = (board: string, items: object[]) => http().post(`/boards/${board}/increments`).send({ items });
    const applied = await batch('best', [
      { item: 'a', score: 3 },
      { item: 'a', score: 9 },
      { item: 'b', score: 4 },
    ]).expect(200);
    expect(applied.body).toMatchObject({ board: 'best', count: 3 });
    const top = await http().get('/boards/best/top').expect(200);
    expect(top.body.items.map((row: { item: string; score: number }) => [row.item, row.score])).toEqual([
      ['a', 9],
      ['b', 4],
    ]);
    const mixed = await batch('best', [{ item: 'a', score: 1 }, { item: 'b' }]).expect(400);
    expect(mixed.body.message).toContain('items.1'); // a batch of scores: every entry carries one
    const both = await batch('best', [{ item: 'a', score: 1, amount: 2 }]).expect(400);
    expect(both.body.message).toContain('items.0');
    expect((await batch('sums', [{ item: 'a', score: 1 }]).expect(409)).body.code).toBe('AGGREGATE_MISMATCH');
    expect((await batch('best', [{ item: 'a', score: 0.5 }]).expect(400)).body.code).toBe('INVALID_INPUT');
  });

  it('with ties: first, equal bests rank by who reached them first; a calendar day keeps the best of the day', async () => {
    await http()
      .put('/admin/boards/tied')
      .set(ADMIN)
      .send({ windows: [{ name: 'm', period: '3m', interval: '1m' }], aggregate: 'max', ties: 'first', shards })
      .expect(201);
    // A millisecond apart: across shards the order of equal scores is known to the millisecond.
    await score('tied', 'early', { score: 5 }).expect(200);
    clock.advanceMs(1);
    const late = await score('tied', 'late', { score: 5 }).expect(200);
    expect(late.body.windows.m).toMatchObject({ score: 5, rank: 2 });
    clock.advanceMs(1);
    await score('tied', 'early', { score: 4 }).expect(200); // not a better score: its place stays
    const ranks = await http().get('/boards/tied/top?window=m').expect(200);
    expect(ranks.body.items.map((row: { item: string; rank: number }) => [row.item, row.rank])).toEqual([
      ['early', 1],
      ['late', 2],
    ]);
    await http()
      .put('/admin/boards/daily')
      .set(ADMIN)
      .send({ windows: [{ calendar: 'day', timeZone: 'Europe/Berlin' }], aggregate: 'max' })
      .expect(201);
    await score('daily', 'ann', { score: 8 }).expect(200);
    await score('daily', 'ann', { score: 3 }).expect(200);
    expect((await http().get('/boards/daily/items/ann').expect(200)).body.score).toBe(8);
    clock.setMs(T0 + 86_400_000); // the next local day starts empty
    expect((await http().get('/boards/daily/items/ann').expect(200)).body.score).toBe(0);
  });

  it('a repeat with the same Idempotency-Key answers the stored body and applies nothing', async () => {
    await put('best', { aggregate: 'max' }).expect(201);
    const first = await score('best', 'ann', { score: 5 }).set('Idempotency-Key', 'k1').expect(200);
    await score('best', 'ann', { score: 9 }).expect(200);
    const again = await score('best', 'ann', { score: 5 }).set('Idempotency-Key', 'k1').expect(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
    await score('best', 'ann', { score: 6 }).set('Idempotency-Key', 'k1').expect(422);
  });

  it('refuses the wrong write for the aggregate, bad scores, old events and growth beyond the quota', async () => {
    await put('best', { aggregate: 'max' }).expect(201);
    await put('sums', {}).expect(201);
    const mismatch = { code: 'AGGREGATE_MISMATCH' };
    expect((await score('sums', 'a', { score: 1 }).expect(409)).body).toMatchObject(mismatch);
    expect((await http().post('/boards/best/items/a/increment').send({}).expect(409)).body).toMatchObject(mismatch);
    await http()
      .post('/boards/best/increments')
      .send({ items: [{ item: 'a' }] })
      .expect(409);
    await http().post('/boards/best/items/a/likes').send({ userId: 'u' }).expect(409);
    for (const body of [
      {},
      { score: 1.5 },
      { score: 10 ** 15 + 1 },
      { score: null },
      { score: '3' },
      { score: 1, at: null },
    ])
      expect((await score('best', 'a', body).expect(400)).body.code).toBe('INVALID_INPUT');
    expect((await score('best', 'a', { score: 1, at: T0_SEC - 7200 }).expect(400)).body.code).toBe('INVALID_INPUT');
    expect((await score('nope', 'a', { score: 1 }).expect(404)).body.code).toBe('BOARD_NOT_FOUND');
    expect((await http().get('/boards/best/top?span=1m').expect(400)).body.code).toBe('INVALID_INPUT');
  });

  it('a new item beyond the growth quota is a 429, an item already held keeps scoring', async () => {
    const quoted = request((await e2e.startApp({ QUOTA_NEW_ITEMS: '2' })).getHttpServer());
    await put('best', { aggregate: 'max' }).expect(201);
    const send = (item: string) => quoted.post(`/boards/best/items/${item}/score`).send({ score: 1 });
    await send('a').expect(200);
    await send('b').expect(200);
    expect((await send('c').expect(429)).body.code).toBe('QUOTA_EXCEEDED');
    await send('a').expect(200);
  });

  it('changing the aggregate needs reset=true and drops the data; views need sum; a bad aggregate is a 400', async () => {
    await put('b', { aggregate: 'max' }).expect(201);
    await score('b', 'a', { score: 3 }).expect(200);
    const refused = await put('b', { aggregate: 'min' }).expect(409);
    expect(refused.body.message).toContain('aggregate would change from max to min');
    await put('b', {}).expect(200); // omitted: kept
    await put('b', { aggregate: 'min' }, '?reset=true').expect(200);
    expect((await http().get('/boards/b/items/a').expect(200)).body.score).toBe(0);
    expect((await http().get('/boards/b').expect(200)).body.aggregate).toBe('min');
    const views = [{ name: 'hot', mode: 'hot', window: '1h' }];
    expect((await put('v', { aggregate: 'max', views }).expect(400)).body.code).toBe('INVALID_INPUT');
    expect((await put('b', { views }).expect(400)).body.code).toBe('INVALID_INPUT');
    expect((await put('w', { aggregate: 'median' }).expect(400)).body.message).toContain('aggregate must be one of');
    await put('s', { aggregate: 'sum' })
      .expect(201)
      .expect((res) => expect(res.body.aggregate).toBeUndefined());
  });

  it('segments are for sum boards only: a max / min / last board with segments is a 400 either way round', async () => {
    const asked = await put('m', { aggregate: 'max', segments: { max: 5 } }).expect(400);
    expect(asked.body.code).toBe('INVALID_INPUT');
    expect(asked.body.message).toContain('segments are kept for sum boards only');
    await put('m', { aggregate: 'max' }).expect(201);
    expect((await put('m', { segments: { max: 5 } }).expect(400)).body.code).toBe('INVALID_INPUT');
    await put('s', { segments: { max: 5 } }).expect(201);
    expect((await put('s', { aggregate: 'last' }, '?reset=true').expect(400)).body.code).toBe('INVALID_INPUT');
    const batch = { items: [{ item: 'a', score: 2, segments: ['en'] }] };
    expect((await http().post('/boards/m/increments').send(batch).expect(400)).body.code).toBe('INVALID_INPUT');
    expect((await http().get('/boards/m').expect(200)).body.segments).toBeUndefined();
  });

  it('a rolling window of a max / min / last board holds at most 1 000 slots (its expiry reads each), either way round', async () => {
    const wide = [{ name: 'week', period: '7d', interval: '5m' }];
    const asked = await put('wide', { aggregate: 'min', windows: wide }).expect(400);
    expect(asked.body.code).toBe('INVALID_INPUT');
    expect(asked.body.message).toContain('windows.week');
    expect(asked.body.message).toContain('at most 1000 slots');
    await put('wide', { aggregate: 'last', windows: [{ name: 'week', period: '7d', interval: '15m' }] }).expect(201);
    expect((await put('wide', { windows: wide }).expect(400)).body.code).toBe('INVALID_INPUT');
    await put('wideSum', { windows: wide }).expect(201);
  });
});
