import request from 'supertest';
import { ADMIN, createBoard } from '../../../harness/app';
import { useApp } from '../../support/e2e';
import { TOPOLOGIES } from '../../../harness/redis';

const API_KEY = 'growth-test-key-0123456789';

describe.each(TOPOLOGIES)('quotas on growth over HTTP (%s)', (topology) => {
  const quotas = {
    QUOTA_NEW_ITEMS: '2',
    QUOTA_NEW_COUNTERS: '1',
    QUOTA_NEW_STATS_PAIRS: '1',
    QUOTA_NEW_LIKE_USERS: '1',
  };
  /** `keyed`: the same service with an API key configured: a key is a client of its own. */
  const e2e = useApp(topology, { startMs: 1_700_002_800_000, env: quotas, others: { keyed: { API_KEYS: API_KEY } } });
  const { http } = e2e;
  const increment = (board: string, item: string) =>
    http().post(`/boards/${board}/items/${item}/increment`).set('Content-Type', 'application/json');
  const incrementWithKey = (board: string, item: string) =>
    request(e2e.other('keyed').getHttpServer())
      .post(`/boards/${board}/items/${item}/increment`)
      .set('Content-Type', 'application/json')
      .set('X-Api-Key', API_KEY);

  beforeAll(async () => {
    await createBoard(e2e.app(), 'q');
  });

  it('an anonymous creator gets 429 QUOTA_EXCEEDED with Retry-After for a new item; its items keep counting', async () => {
    await increment('q', 'a').expect(200);
    await increment('q', 'b').expect(200);
    const refused = await increment('q', 'c').expect(429);
    expect(refused.body).toMatchObject({ statusCode: 429, code: 'QUOTA_EXCEEDED' });
    expect(refused.body.message).toContain('2 new items per 3600 s');
    expect(refused.headers['retry-after']).toBe('1800');
    const batch = await http()
      .post('/boards/q/increments')
      .send({ items: [{ item: 'a' }, { item: 'c' }] })
      .expect(429);
    expect(batch.body.code).toBe('QUOTA_EXCEEDED');
    expect((await increment('q', 'a').expect(200)).body.windows['1h'].score).toBe(2);
    await http().post('/boards/q/items/c/likes').send({ userId: 'u' }).expect(429);
    // A configured API key is a client of its own.
    await incrementWithKey('q', 'c').expect(200);
    const top = await http().get('/boards/q/top').expect(200);
    expect(top.body.items.map((row: { item: string }) => row.item).sort()).toEqual(['a', 'b', 'c']);
  });

  it('new counters and stats pairs have their quotas too', async () => {
    await http().post('/counters/c1/increment').set('Content-Type', 'application/json').expect(200);
    const counter = await http().post('/counters/c2/increment').set('Content-Type', 'application/json').expect(429);
    expect(counter.body.code).toBe('QUOTA_EXCEEDED');
    expect(counter.headers['retry-after']).toBe('3600');
    await http().post('/counters/c1/increment').set('Content-Type', 'application/json').expect(200);
    await http().post('/stats/ctx/A').send({ value: 1 }).expect(200);
    expect((await http().post('/stats/ctx/B').send({ value: 1 }).expect(429)).body.code).toBe('QUOTA_EXCEEDED');
    expect((await http().post('/stats/ctx/A').send({ value: 2 }).expect(200)).body.count).toBe(2);
  });

  it('a board with maxItems answers 409 BOARD_FULL for a new item beyond it and keeps counting the others', async () => {
    const put = await http()
      .put('/admin/boards/full')
      .set(ADMIN)
      .send({ windows: [{ period: '1h', interval: '1m' }], maxItems: 1 })
      .expect(201);
    expect(put.body).toMatchObject({ name: 'full', maxItems: 1 });
    expect((await http().get('/boards/full').expect(200)).body.maxItems).toBe(1);
    await incrementWithKey('full', 'x').expect(200);
    const full = await incrementWithKey('full', 'y').expect(409);
    expect(full.body).toMatchObject({ code: 'BOARD_FULL' });
    expect(full.body.message).toBe(
      'board "full" is full: it holds 1 of its maxItems 1 items and the write would add 1 new; existing items keep counting',
    );
    expect((await incrementWithKey('full', 'x').expect(200)).body.windows['1h'].score).toBe(2);
    // A board without maxItems shows none.
    expect((await http().get('/boards/q').expect(200)).body).not.toHaveProperty('maxItems');
  });

  it.each([
    [null, 'maxItems must not be null'],
    [0, 'maxItems must not be less than 1'],
    [100_000_001, 'maxItems must not be greater than 100000000'],
    [1.5, 'maxItems must be an integer number'],
    ['3', 'maxItems must be an integer number'],
  ])('maxItems %p is a 400 naming it', async (maxItems, message) => {
    const answer = await http()
      .put('/admin/boards/bad')
      .set(ADMIN)
      .send({ windows: [{ period: '1h', interval: '1m' }], maxItems })
      .expect(400);
    expect(answer.body).toMatchObject({ code: 'INVALID_INPUT' });
    expect(answer.body.message).toContain(message);
  });
});
