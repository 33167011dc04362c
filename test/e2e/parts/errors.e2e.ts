import request from 'supertest';
import { ERROR_CODES } from '../../../src/common/errors';
import { ADMIN } from '../../../harness/app';
import { useSingleNodeApp } from '../../support/e2e';

/** Every error a client can cause over HTTP answers { statusCode, message (one string), error, code }. */
describe('error bodies carry a stable code', () => {
  const e2e = useSingleNodeApp({ boards: ['b'] });
  const { http } = e2e;

  const cases: Array<[string, () => request.Test, keyof typeof ERROR_CODES]> = [
    ['a bad name', () => http().get('/boards/a%20b'), 'INVALID_INPUT'],
    ['a bad query', () => http().get('/boards/b/top?limit=0'), 'INVALID_INPUT'],
    [
      'malformed JSON',
      () => http().post('/boards/b/items/x/increment').set('Content-Type', 'application/json').send('{'),
      'INVALID_INPUT',
    ],
    ['an admin route without a token', () => http().delete('/admin/boards/b'), 'ADMIN_TOKEN_MISSING'],
    [
      'an admin route with a wrong token',
      () => http().delete('/admin/boards/b').set('Authorization', 'Bearer x'),
      'ADMIN_TOKEN_INVALID',
    ],
    ['an unknown board', () => http().get('/boards/nope/top'), 'BOARD_NOT_FOUND'],
    ['an unknown window', () => http().get('/boards/b/top?window=week'), 'WINDOW_NOT_FOUND'],
    ['an unknown counter', () => http().get('/counters/nope?precision=1'), 'COUNTER_NOT_FOUND'],
    ['stats never recorded', () => http().get('/stats/ctx/T'), 'STATS_NOT_FOUND'],
    ['an unknown route', () => http().get('/nowhere'), 'ROUTE_NOT_FOUND'],
    [
      'a window change without reset',
      () =>
        http()
          .put('/admin/boards/b')
          .set(ADMIN)
          .send({ windows: [{ period: '2h', interval: '1m' }] }),
      'BOARD_CONFIG_CONFLICT',
    ],
    [
      'a body over the limit',
      () =>
        http()
          .post('/boards/b/increments')
          .send({ items: 'x'.repeat(2_000_000) }),
      'BODY_TOO_LARGE',
    ],
    [
      'a body that is not JSON',
      () => http().post('/boards/b/items/x/increment').set('Content-Type', 'application/x-foo').send('amount=1'),
      'UNSUPPORTED_MEDIA_TYPE',
    ],
  ];

  it.each(cases)('%s', async (_, send, code) => {
    const response = await send();
    expect(response.status).toBe(ERROR_CODES[code].status);
    expect(response.body).toEqual({
      statusCode: ERROR_CODES[code].status,
      message: expect.any(String),
      error: expect.any(String),
      code,
    });
  });

  it.each([
    ['PATCH', '/boards/b/top', 'GET, HEAD'],
    ['OPTIONS', '/boards/b/items/x/increment', 'POST'],
    ['DELETE', '/counters/c/increment', 'POST'],
    ['POST', '/admin/boards/b', 'PUT, DELETE'],
  ])('%s %s, a known path with a wrong method: 405 METHOD_NOT_ALLOWED with Allow: %s', async (method, path, allow) => {
    const response = await http()[method.toLowerCase() as 'patch'](path);
    expect([response.status, response.headers.allow, response.body]).toEqual([
      405,
      allow,
      {
        statusCode: 405,
        error: 'Method Not Allowed',
        code: 'METHOD_NOT_ALLOWED',
        message: `${method} is not allowed on this path; it answers ${allow} (see the Allow header)`,
      },
    ]);
    expect(response.headers['x-request-id']).toBeDefined();
  });

  it('an unknown path stays a 404 ROUTE_NOT_FOUND whatever the method', async () => {
    for (const method of ['get', 'patch', 'options'] as const) {
      const response = await http()[method]('/nowhere/at/all');
      expect([method, response.status, response.body.code]).toEqual([method, 404, 'ROUTE_NOT_FOUND']);
    }
  });

  it('a client over the write rate answers RATE_LIMITED with Retry-After', async () => {
    const strict = await e2e.startApp({ RATE_LIMIT_PER_SEC: '1', RATE_LIMIT_BURST: '1' });
    const answers = [];
    for (let i = 0; i < 3; i++)
      answers.push(
        await request(strict.getHttpServer())
          .post('/boards/b/items/x/increment')
          .set('Content-Type', 'application/json'),
      );
    const limited = answers.find((answer) => answer.status === 429);
    expect(limited?.body).toMatchObject({ statusCode: 429, code: 'RATE_LIMITED', message: expect.any(String) });
    expect(limited?.headers['retry-after']).toMatch(/^\d+$/);
  });
});
