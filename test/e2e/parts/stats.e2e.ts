import request from 'supertest';
import { FakeClock } from '../../../harness/clock';
import { AccessTimeRecorder } from '../../../src/stats/access-time.recorder';
import { ADMIN, startTestApp } from '../../../harness/app';
import { startTestRedis } from '../../../harness/redis';
import { useApp } from '../../support/e2e';
import { TOPOLOGIES } from '../../../harness/redis';

const T0 = 1_700_002_800_000; // an hour boundary
const H0 = T0 / 1000;
const enc = encodeURIComponent;
/** The timer never fires during a test: flushes are called directly. */
const ENV = { STATS_FLUSH_INTERVAL_MS: '60000' };

describe.each(TOPOLOGIES)('stats over HTTP (%s)', (topology) => {
  const e2e = useApp(topology, { startMs: T0, env: ENV });
  const { clock, http } = e2e;
  const recorder = () => e2e.app().get(AccessTimeRecorder);
  const record = (context: string, type: string, body: unknown) =>
    http()
      .post(`/stats/${enc(context)}/${enc(type)}`)
      .send(body as object);

  beforeEach(async () => {
    await recorder().flush();
    await e2e.redis().clear();
    clock.setMs(T0 + 60_000);
  });

  it('records values and reads the hour back with average, stddev and quantiles', async () => {
    const first = await record('ProfilePage', 'Load', { value: 0.5 });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({
      context: 'ProfilePage',
      type: 'Load',
      hourStart: H0,
      recorded: true,
      count: 1,
      sum: 0.5,
      sumsq: 0.25,
    });
    for (const value of [1.5, -2, 0, 1e-3]) expect((await record('ProfilePage', 'Load', { value })).status).toBe(200);
    const read = await http().get('/stats/ProfilePage/Load');
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({
      context: 'ProfilePage',
      type: 'Load',
      hourStart: H0,
      count: 5,
      min: -2,
      max: 1.5,
    });
    expect(read.body.sum).toBeCloseTo(0.001, 12);
    expect(read.body.average).toBeCloseTo(0.0002, 12);
    expect(read.body.stddev).toBeCloseTo(Math.sqrt((0.25 + 2.25 + 4 + 0 + 1e-6 - 5 * 0.0002 ** 2) / 4), 9);
    expect(Math.abs(read.body.p50 - 0.001)).toBeLessThanOrEqual(0.00001);
    // p99 is the sample at rank floor(0.99 (n - 1)): the 4th of 5 here, within 1 %.
    expect(Math.abs(read.body.p99 - 0.5)).toBeLessThanOrEqual(0.005);
    expect((await http().get('/stats/ProfilePage/Load?hour=previous')).status).toBe(404);
    expect((await http().get('/stats/Nobody/Load')).body).toMatchObject({
      statusCode: 404,
      message: expect.stringMatching(/nothing recorded/),
    });
    // The next hour: the figures move to "previous".
    clock.advanceSec(3600);
    expect((await http().get('/stats/ProfilePage/Load')).status).toBe(404);
    expect((await http().get('/stats/ProfilePage/Load?hour=previous')).body).toMatchObject({ hourStart: H0, count: 5 });
  });

  it('takes URL-encoded contexts with slashes, spaces, braces and colons', async () => {
    for (const context of ['GET /boards/{board}/top', 'GET /boards/:board/top']) {
      expect((await record(context, 'Latency', { value: 2 })).body).toMatchObject({ context, count: 1 });
      expect((await http().get(`/stats/${enc(context)}/Latency`)).body).toMatchObject({ context, count: 1, sum: 2 });
    }
    const list = await http().get('/admin/stats').set(ADMIN);
    expect(list.body).toEqual({
      total: 2,
      items: [
        { context: 'GET /boards/:board/top', type: 'Latency', hourStart: H0 },
        { context: 'GET /boards/{board}/top', type: 'Latency', hourStart: H0 },
      ],
    });
  });

  it("records every route's access time, flushed from the process, with unmatched routes under one context", async () => {
    expect((await http().get('/boards')).status).toBe(200);
    expect((await http().get('/boards/nope')).status).toBe(404);
    expect((await http().get('/boards/nope')).status).toBe(404);
    expect((await http().get('/no/such/route/1')).status).toBe(404);
    expect((await http().get('/no/such/route/2')).status).toBe(404);
    expect(await e2e.redis().keys(`stats:GET /boards*`)).toEqual([]); // nothing written on the request path
    await recorder().flush();
    const boards = await http().get(`/stats/${enc('GET /boards')}/AccessTime`);
    expect(boards.status).toBe(200);
    expect(boards.body).toMatchObject({ context: 'GET /boards', type: 'AccessTime', count: 1, hourStart: H0 });
    expect(boards.body.max).toBeGreaterThan(0);
    expect(boards.body.max).toBeLessThan(5);
    expect((await http().get(`/stats/${enc('GET /boards/:board')}/AccessTime`)).body).toMatchObject({ count: 2 });
    expect((await http().get(`/stats/${enc('GET {unmatched}')}/AccessTime`)).body).toMatchObject({ count: 2 });
    const slowest = await http().get('/admin/stats/slowest?limit=100').set(ADMIN);
    expect(slowest.status).toBe(200);
    const contexts = slowest.body.items.map((i: { context: string }) => i.context);
    expect(contexts).toEqual(expect.arrayContaining(['GET /boards', 'GET /boards/:board', 'GET {unmatched}']));
    const averages = slowest.body.items.map((i: { average: number }) => i.average);
    expect(averages).toEqual([...averages].sort((a, b) => b - a));
  });

  it('orders the slowest list by the average of the current hour, slowest first', async () => {
    const rec = recorder();
    rec.observe('GET /fast', 0.001);
    rec.observe('GET /slow', 2);
    rec.observe('GET /slow', 4);
    rec.observe('GET /medium', 0.5);
    await rec.flush();
    const response = await http().get('/admin/stats/slowest?limit=3').set(ADMIN);
    expect(response.body).toEqual({
      items: [
        { context: 'GET /slow', average: 3 },
        { context: 'GET /medium', average: 0.5 },
        { context: 'GET /fast', average: 0.001 },
      ],
    });
    rec.observe('GET /fast', 20); // its average of the hour becomes (0.001 + 20) / 2
    await rec.flush();
    expect((await http().get('/admin/stats/slowest?limit=1').set(ADMIN)).body.items).toEqual([
      { context: 'GET /fast', average: 10.0005 },
    ]);
    expect((await http().get('/admin/stats/slowest').set(ADMIN)).body.items.length).toBeGreaterThanOrEqual(3);
  });

  it.each([
    [{ value: '1' }, /value must be a finite number/],
    [{ value: 'NaN' }, /value must be a finite number/],
    [{ value: null }, /value must be a finite number/],
    [{}, /value must be a finite number/],
    [{ value: 1e101 }, /value must not be greater than 1e\+100/],
    [{ value: -1e101 }, /value must not be less than -1e\+100/],
    [{ value: 1, extra: 2 }, /property extra should not exist/],
    [{ value: [1] }, /value must be a finite number/],
  ])('refuses body %j with 400', async (body, message) => {
    const response = await record('ctx', 'T', body);
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ statusCode: 400, error: 'Bad Request' });
    expect(JSON.stringify(response.body.message)).toMatch(message);
  });

  it.each([
    ['{"value": 1e400}', /value must be a finite number/],
    ['{"value": -1e999}', /value must be a finite number/],
    ['{"value": NaN}', /JSON|Unexpected|token/i],
    ['{"value": Infinity}', /JSON|Unexpected|token/i],
  ])('refuses raw JSON %s with 400', async (raw, message) => {
    const response = await http().post('/stats/ctx/T').set('content-type', 'application/json').send(raw);
    expect(response.status).toBe(400);
    expect(JSON.stringify(response.body.message)).toMatch(message);
  });

  it.each([
    ['x'.repeat(201), 'T', /context must be/],
    ['tab\there', 'T', /context must be/],
    ['what?', 'T', /context must be/],
    ['100%', 'T', /context must be/],
    ['ctx', 'A{b}', /type must be/],
    ['ctx', 'has space', /type must be/],
    ['ctx', 'x'.repeat(65), /type must be/],
  ])('refuses context %j / type %j with 400', async (context, type, message) => {
    for (const response of [
      await record(context, type, { value: 1 }),
      await http().get(`/stats/${enc(context)}/${enc(type)}`),
    ]) {
      expect(response.status).toBe(400);
      expect(JSON.stringify(response.body.message)).toMatch(message);
    }
  });

  it('refuses bad queries and guards the admin routes', async () => {
    expect((await http().get('/stats/ctx/T?hour=yesterday')).body.message).toMatch(/hour must be current or previous/);
    expect((await http().get('/admin/stats/slowest?limit=0').set(ADMIN)).status).toBe(400);
    expect((await http().get('/admin/stats/slowest?limit=101').set(ADMIN)).status).toBe(400);
    expect((await http().get('/admin/stats?offset=-1').set(ADMIN)).status).toBe(400);
    expect((await http().get('/admin/stats/slowest')).status).toBe(401);
    expect((await http().get('/admin/stats').set({ Authorization: 'Bearer wrong-token-0123456789' })).status).toBe(403);
  });

  it('documents the stats routes in the OpenAPI document', async () => {
    const doc = (await http().get('/docs-json')).body;
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining(['/stats/{context}/{type}', '/admin/stats/slowest', '/admin/stats']),
    );
  });
});

describe('access times at shutdown', () => {
  it('flushes what is still buffered when the app closes', async () => {
    const redis = await startTestRedis();
    try {
      const app = await startTestApp(redis, new FakeClock(T0), ENV);
      expect((await request(app.getHttpServer()).get('/health/live')).status).toBe(200);
      await app.close();
      const keys = await redis.keys(`stats:GET /health/live:AccessTime}:cur`);
      expect(keys).toHaveLength(1);
      expect(await redis.client.hget(keys[0], 'count')).toBe('1');
    } finally {
      await redis.stop();
    }
  });
});
