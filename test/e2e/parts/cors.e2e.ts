import { validateEdgeSettings } from '../../../src/edge/edge.settings';
import { ADMIN } from '../../../harness/app';
import { TestHttp } from '../../../harness/test-http';
import { useSingleNodeApp } from '../../support/e2e';

type Http = () => TestHttp;
const PAGE = 'https://app.example.com';
const LOCAL_PAGE = 'http://localhost:5173';
const OTHER = 'https://evil.example.net';
const KEY = 'cors-test-key-0123456789abcdef';

/** CORS for browser pages on other origins: off by default, an allow-list (CORS_ORIGINS) when set. */
describe('CORS', () => {
  const e2e = useSingleNodeApp({ boards: ['b'] });
  const preflight = (http: Http, path: string, origin: string, method = 'POST') =>
    http()
      .options(path)
      .set('Origin', origin)
      .set('Access-Control-Request-Method', method)
      .set('Access-Control-Request-Headers', 'content-type,idempotency-key,x-api-key');

  it('is off by default: no CORS header on any answer, and a preflight is a 405', async () => {
    const http = e2e.http;
    const read = await http().get('/boards/b/top').set('Origin', PAGE);
    expect(read.status).toBe(200);
    expect(Object.keys(read.headers).filter((name) => name.startsWith('access-control-'))).toEqual([]);
    const answer = await preflight(http, '/boards/b/items/x/increment', PAGE);
    expect([answer.status, answer.headers['access-control-allow-origin'], answer.body.code]).toEqual([
      405,
      undefined,
      'METHOD_NOT_ALLOWED',
    ]);
  });

  describe('with CORS_ORIGINS set (a keyed service)', () => {
    const { http } = e2e.describeApp({ CORS_ORIGINS: `${PAGE}, ${LOCAL_PAGE}`, API_KEYS: KEY, ACCESS_MODE: 'keyed' });
    beforeAll(async () => {
      await http()
        .put('/admin/boards/c')
        .set(ADMIN)
        .send({ windows: [{ period: '1h', interval: '1m' }] })
        .expect(201);
    });

    it.each([PAGE, LOCAL_PAGE])('answers the preflight of %s (no key needed for it)', async (origin) => {
      const answer = await preflight(http, '/boards/c/items/x/increment', origin);
      expect(answer.status).toBe(204);
      expect(answer.headers).toMatchObject({
        'access-control-allow-origin': origin,
        'access-control-allow-methods': 'GET, HEAD, POST, PUT, DELETE',
        'access-control-allow-headers':
          'Content-Type, Authorization, X-Api-Key, Idempotency-Key, Idempotency-Retention, X-Request-Id',
        'access-control-max-age': '600',
      });
      expect(answer.headers.vary).toMatch(/Origin/);
      expect(answer.headers['access-control-allow-credentials']).toBeUndefined();
    });

    it('lets an allowed page read answers and the headers it acts on (Retry-After, Idempotent-Replayed, X-Request-Id)', async () => {
      const write = () =>
        http()
          .post('/boards/c/items/x/increment')
          .set('Origin', PAGE)
          .set('X-Api-Key', KEY)
          .set('Idempotency-Key', 'cors-1')
          .send({ amount: 1 });
      await write().expect(200);
      const replay = await write().expect(200);
      expect(replay.headers).toMatchObject({
        'access-control-allow-origin': PAGE,
        'access-control-expose-headers': 'Retry-After, Idempotent-Replayed, X-Request-Id',
        'idempotent-replayed': 'true',
      });
      expect(replay.headers.vary).toMatch(/Origin/);
    });

    it('a refusal made before any handler (401 without a key) carries the headers too', async () => {
      const answer = await http().get('/boards/c/top').set('Origin', PAGE);
      expect([answer.status, answer.headers['access-control-allow-origin']]).toEqual([401, PAGE]);
    });

    it('gives an origin off the list nothing (the browser then refuses the page)', async () => {
      const answer = await preflight(http, '/boards/c/items/x/increment', OTHER);
      expect(answer.headers['access-control-allow-origin']).toBeUndefined();
      const read = await http().get('/boards/c/top').set('Origin', OTHER).set('X-Api-Key', KEY);
      expect([read.status, read.headers['access-control-allow-origin']]).toEqual([200, undefined]);
      expect(read.headers.vary).toBe('Origin, Authorization, X-Api-Key');
    });

    it('still answers a known path with a wrong method 405 and an unknown path 404', async () => {
      const wrong = await http().patch('/boards/c/top').set('Origin', PAGE);
      expect([wrong.status, wrong.headers.allow]).toEqual([405, 'GET, HEAD']);
      const unknown = await http().get('/nowhere').set('Origin', PAGE);
      expect(unknown.status).toBe(404);
    });
  });

  it.each(['*', 'app.example.com', 'https://app.example.com/', 'https://app.example.com/path', 'ftp://x.example'])(
    'refuses CORS_ORIGINS=%s at boot, naming the setting',
    (value) => {
      expect(() => validateEdgeSettings({ CORS_ORIGINS: value })).toThrow(
        /CORS_ORIGINS must be comma-separated origins/,
      );
    },
  );
});
