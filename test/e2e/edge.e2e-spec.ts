import { NestFastifyApplication } from '@nestjs/platform-fastify';
import request from 'supertest';
import { JSON_LIMITS } from '../../src/common/json-body';
import { FakeClock } from '../support/clock';
import { ADMIN, createBoard, startTestApp } from '../support/app';
import { startTestRedis, TestRedis } from '../support/redis';

/** Bodies built to stall the process or walk the validators: refused before anything walks them. */
describe('the HTTP edge bounds every body', () => {
  let redis: TestRedis;
  let app: NestFastifyApplication;
  const clock = new FakeClock(1_700_000_000_000);
  const http = () => request(app.getHttpServer());
  const BODY_ROUTES: Array<[string, string]> = [
    ['PUT', '/admin/boards/b'],
    ['POST', '/boards/b/items/x/increment'],
    ['POST', '/boards/b/increments'],
    ['POST', '/boards/b/items/x/likes'],
    ['POST', '/counters/c/increment'],
    ['POST', '/stats/ctx/T'],
  ];
  const send = (method: string, path: string, body: string, type = 'application/json') =>
    (method === 'PUT' ? http().put(path) : http().post(path)).set(ADMIN).set('Content-Type', type).send(body);

  beforeAll(async () => {
    redis = await startTestRedis();
    app = await startTestApp(redis, clock);
    await createBoard(app, 'b');
  });
  afterAll(async () => {
    await app.close();
    await redis.stop();
  });

  it.each(BODY_ROUTES)('%s %s: a body nested 2000 levels deep is a 400 naming the limit', async (method, path) => {
    const deep = `{"a":${'['.repeat(2000)}${']'.repeat(2000)}}`;
    const answer = await send(method, path, deep);
    expect(answer.body).toEqual({
      statusCode: 400,
      error: 'Bad Request',
      code: 'INVALID_INPUT',
      message: `body is nested deeper than ${JSON_LIMITS.maxDepth} levels`,
    });
  });

  it.each(BODY_ROUTES)(
    '%s %s: an object with 90 000 keys is refused before any validator walks it (413 over the route size, else 400)',
    async (method, path) => {
      const wide = `{${Array.from({ length: 90_000 }, (_, i) => `"k${i}":1`).join(',')}}`;
      const answer = await send(method, path, wide);
      expect([answer.status, answer.body.code]).toEqual(
        path.endsWith('/increments') ? [400, 'INVALID_INPUT'] : [413, 'BODY_TOO_LARGE'],
      );
    },
  );

  it.each(BODY_ROUTES)('%s %s: a form-encoded body is a 415 (JSON is the one body type)', async (method, path) => {
    const answer = await send(method, path, 'amount=1', 'application/x-www-form-urlencoded');
    expect([answer.status, answer.body.code]).toEqual([415, 'UNSUPPORTED_MEDIA_TYPE']);
  });

  it('sizes bodies by route: the largest legitimate batch passes, a big body elsewhere is a 413', async () => {
    const id = (i: number) => `${i}-${'\u00e9'.repeat(120)}`;
    const batch = { items: Array.from({ length: 1000 }, (_, i) => ({ item: id(i), amount: 1_000_000 })) };
    const escaped = JSON.stringify(batch).replace(/\u00e9/g, '\\u00e9');
    expect(Buffer.byteLength(escaped)).toBeGreaterThan(JSON_LIMITS.maxBodyBytes);
    expect((await send('POST', '/boards/b/increments', escaped)).status).toBe(200);
    const padded = JSON.stringify({ amount: 1, pad: 'x'.repeat(JSON_LIMITS.maxBodyBytes) });
    const answer = await send('POST', '/boards/b/items/x/increment', padded);
    expect([answer.status, answer.body.code]).toEqual([413, 'BODY_TOO_LARGE']);
  });

  it('keeps Fastify’s prototype-poisoning refusal', async () => {
    const answer = await send('POST', '/boards/b/items/x/increment', '{"__proto__":{"amount":5}}');
    expect([answer.status, answer.body.code]).toEqual([400, 'INVALID_INPUT']);
  });

  it.each([
    ['an unpaired surrogate', '\ud800'],
    ['another unpaired surrogate', 'x\udc00'],
    ['a zero-width space', 'adm\u200bin'],
    ['a bidi override', 'a\u202egnp.exe'],
    ['a byte order mark', '\ufeffuser'],
    ['a C1 control', 'a\u0085b'],
    ['a line separator', 'a\u2028b'],
    ['whitespace only', '   '],
  ])('refuses an id with %s (400), in a body and in a batch', async (_, id) => {
    const like = await http().post('/boards/b/items/x/likes').send({ userId: id });
    expect([like.status, like.body.code, like.body.message]).toEqual([
      400,
      'INVALID_INPUT',
      'userId must be 1-128 printable characters',
    ]);
    const batch = await http()
      .post('/boards/b/increments')
      .send({ items: [{ item: id }] });
    expect([batch.status, batch.body.message]).toEqual([400, 'items.0.item must be 1-128 printable characters']);
  });

  it('keeps two users apart whose ids differ only in what used to become U+FFFD', async () => {
    expect((await http().post('/boards/b/items/surrogates/likes').send({ userId: '\ud800' })).status).toBe(400);
    expect((await http().post('/boards/b/items/surrogates/likes').send({ userId: '\ud801' })).status).toBe(400);
    expect((await http().get('/boards/b/items/surrogates')).body.score).toBe(0);
    const emoji = await http().post('/boards/b/items/surrogates/likes').send({ userId: '\ud83d\ude00' });
    expect(emoji.status).toBe(200); // a well-formed pair is one character
  });

  it.each([
    ['an empty array', [[]]],
    ['an array holding an entry', [[{ item: 'q', amount: 3 }]]],
    ['null', [null]],
    ['a string', ['q']],
  ])('refuses a batch entry that is %s instead of an object, and writes nothing', async (_, items) => {
    const answer = await http().post('/boards/b/increments').send({ items });
    expect([answer.status, answer.body.code]).toEqual([400, 'INVALID_INPUT']);
    expect(
      (await http().get('/boards/b/top?limit=1000')).body.items.map((row: { item: string }) => row.item),
    ).not.toContain('');
  });
});
