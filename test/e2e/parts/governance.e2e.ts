import request from 'supertest';
import { ADMIN } from '../../../harness/app';
import { TestHttp } from '../../../harness/test-http';
import { useSingleNodeApp } from '../../support/e2e';

describe('governance over HTTP', () => {
  const e2e = useSingleNodeApp({ noApp: true });
  const { clock } = e2e;

  describe('local metrics and Prometheus', () => {
    const { http } = e2e.describeApp();

    it('reports per-route requests, errors and latency of the last N seconds', async () => {
      clock.setMs(1_700_000_000_000);
      await http()
        .put('/admin/boards/m')
        .set(ADMIN)
        .send({ windows: [{ period: '1h', interval: '1m' }] })
        .expect(201);
      for (let i = 0; i < 3; i++)
        await http().post('/boards/m/items/x/increment').set('Content-Type', 'application/json').expect(200);
      await http().post('/boards/m/items/x/increment').send({ amount: 0 }).expect(400);
      const unmatched = await http().get('/no/such/route').set('X-Request-Id', 'trace-42').expect(404);
      expect(unmatched.headers['x-request-id']).toBe('trace-42');
      expect((await http().get('/health/live')).headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
      clock.advanceMs(1000); // the second just written is now complete
      const local = await http().get('/admin/metrics/local?seconds=1').set(ADMIN).expect(200);
      expect(local.body.seconds).toBe(1);
      const increment = local.body.routes.find(
        (r: { route: string }) => r.route === 'POST /boards/:board/items/:item/increment',
      );
      expect(increment).toMatchObject({ requests: 4, errors: 0, clientErrors: 1 });
      expect(increment.maxMs).toBeGreaterThan(0);
      expect(increment.avgMs).toBeLessThanOrEqual(increment.maxMs);
      expect(local.body.routes.map((r: { route: string }) => r.route)).toContain('GET {unmatched}');
      clock.advanceMs(5000);
      expect((await http().get('/admin/metrics/local?seconds=1').set(ADMIN)).body.routes).toEqual([]);
      expect((await http().get('/admin/metrics/local?seconds=61').set(ADMIN)).status).toBe(400);
      expect((await http().get('/admin/metrics/local')).status).toBe(401);
    });

    it('serves Prometheus text with request, Redis, job and process metrics', async () => {
      const metrics = await http().get('/metrics').expect(200);
      expect(metrics.headers['content-type']).toMatch(/text\/plain/);
      expect(metrics.text).toMatch(
        /trendboard_http_requests_total\{method="POST",route="\/boards\/:board\/items\/:item\/increment",status="200"\} 3/,
      );
      expect(metrics.text).toMatch(/trendboard_http_request_duration_seconds_bucket\{/);
      expect(metrics.text).toMatch(/trendboard_redis_errors_total 0/);
      expect(metrics.text).toMatch(/trendboard_job_runs_total\{job="ranking-expiry"\} 0/);
      expect(metrics.text).toMatch(/process_cpu_user_seconds_total/);
    });

    it('limits nobody when RATE_LIMIT_PER_SEC is 0 (the default)', async () => {
      await http()
        .put('/admin/boards/free')
        .set(ADMIN)
        .send({ windows: [{ period: '1h', interval: '1m' }] })
        .expect(201);
      const statuses = await Promise.all(
        Array.from({ length: 30 }, () =>
          http().post('/boards/free/items/x/increment').set('Content-Type', 'application/json'),
        ),
      );
      expect(statuses.map((answer) => answer.status)).toEqual(Array(30).fill(200));
    });
  });

  describe('/metrics with METRICS_TOKEN', () => {
    const METRICS_TOKEN = 'scrape-token-0123456789abcdef';
    const { http } = e2e.describeApp({ METRICS_TOKEN });

    it('answers Prometheus text to the token only: 401 without it, 403 with another', async () => {
      const served = await http().get('/metrics').set('Authorization', `Bearer ${METRICS_TOKEN}`).expect(200);
      expect(served.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
      expect(served.text).toMatch(/trendboard_http_requests_total/);
      for (const [authorization, status, code] of [
        [undefined, 401, 'METRICS_TOKEN_MISSING'],
        [`Basic ${Buffer.from(`x:${METRICS_TOKEN}`).toString('base64')}`, 401, 'METRICS_TOKEN_MISSING'],
        ['Bearer ', 401, 'METRICS_TOKEN_MISSING'],
        [`Bearer ${METRICS_TOKEN}x`, 403, 'METRICS_TOKEN_INVALID'],
        [`Bearer ${METRICS_TOKEN.slice(0, -1)}`, 403, 'METRICS_TOKEN_INVALID'],
        [`Bearer ${'x'.repeat(10_000)}`, 403, 'METRICS_TOKEN_INVALID'],
      ] as const) {
        const refused = await (authorization
          ? http().get('/metrics').set('Authorization', authorization)
          : http().get('/metrics'));
        expect([authorization, refused.status, refused.body.code]).toEqual([authorization, status, code]);
        expect(refused.body.message).toMatch(/METRICS_TOKEN|metrics token/);
        expect(refused.text).not.toMatch(/trendboard_/);
      }
    });

    it('is not the admin token, and the admin token is not it', async () => {
      expect((await http().get('/metrics').set(ADMIN)).status).toBe(403);
      const local = await http().get('/admin/metrics/local').set('Authorization', `Bearer ${METRICS_TOKEN}`);
      expect([local.status, local.body.code]).toEqual([403, 'ADMIN_TOKEN_INVALID']);
    });
  });

  describe('rate limiting', () => {
    const KEY1 = 'key-one-0123456789abcdef';
    const KEY2 = 'key-two-0123456789abcdef';
    const RATE = { RATE_LIMIT_PER_SEC: '2', RATE_LIMIT_BURST: '3' };
    const { http } = e2e.describeApp({ ...RATE, API_KEYS: `${KEY1},${KEY2}`, PUBLIC_READS: 'true' });
    beforeAll(async () => {
      await http()
        .put('/admin/boards/r')
        .set(ADMIN)
        .send({ windows: [{ period: '1h', interval: '1m' }] })
        .expect(201);
    });

    /** A second app on the same Redis with its own settings, closed after `use`. */
    async function withApp(
      env: Record<string, string>,
      use: (http: () => ReturnType<typeof request>) => Promise<void>,
    ) {
      const other = await e2e.startApp(env);
      await use(() => request(other.getHttpServer()));
    }

    it('answers 429 with Retry-After over the limit, applies nothing, and leaves reads and other clients alone', async () => {
      clock.setMs(1_800_000_000_000);
      for (let i = 0; i < 3; i++)
        await http()
          .post('/boards/r/items/x/increment')
          .set('Content-Type', 'application/json')
          .set('X-Api-Key', KEY1)
          .expect(200);
      const limited = await http()
        .post('/boards/r/items/x/increment')
        .set('Content-Type', 'application/json')
        .set('X-Api-Key', KEY1);
      expect(limited.status).toBe(429);
      expect(limited.headers['retry-after']).toBe('1');
      expect(limited.body).toMatchObject({ statusCode: 429, error: 'Too Many Requests', code: 'RATE_LIMITED' });
      expect(limited.body.message).toMatch(/2 writes per second \(burst 3\)/);
      expect((await http().get('/boards/r/items/x')).body.score).toBe(3);
      await http()
        .post('/boards/r/items/x/increment')
        .set('Content-Type', 'application/json')
        .set('X-Api-Key', KEY2)
        .expect(200);
      clock.advanceMs(1100);
      await http()
        .post('/boards/r/items/x/increment')
        .set('Content-Type', 'application/json')
        .set('X-Api-Key', KEY1)
        .expect(200);
    });

    it('counts a batch by its entries: within the burst it spends them, above it only an empty budget takes it', async () => {
      clock.advanceMs(20_000);
      const batch = (items: number) =>
        http()
          .post('/boards/r/increments')
          .set('X-Api-Key', KEY1)
          .send({ items: Array.from({ length: items }, (_, i) => ({ item: `b${i}` })) });
      // Three entries spend the whole burst of 3: the next single write waits.
      await batch(3).expect(200);
      const single = await http()
        .post('/boards/r/items/x/increment')
        .set('Content-Type', 'application/json')
        .set('X-Api-Key', KEY1);
      expect([single.status, single.body.code]).toEqual([429, 'RATE_LIMITED']);
      // Twenty entries (above the 20 a 10 s budget of 2/s holds) pass on an empty budget and spend it all.
      clock.advanceMs(20_000);
      await batch(20).expect(200);
      clock.advanceMs(5_000);
      const after = await batch(1);
      expect([after.status, after.body.code]).toEqual([429, 'RATE_LIMITED']);
      clock.advanceMs(10_000);
      await batch(1).expect(200);
    });

    it('refuses a key that is not configured (401), so inventing keys never makes a new client', async () => {
      clock.advanceMs(20_000);
      const before = (await http().get('/boards/r/items/y')).body.score;
      for (let i = 0; i < 10; i++) {
        const answer = await http()
          .post('/boards/r/items/y/increment')
          .set('Content-Type', 'application/json')
          .set('X-Api-Key', `random-${i}-0123456789abcdef`);
        expect([answer.status, answer.body.code]).toEqual([401, 'API_KEY_INVALID']);
      }
      expect((await http().get('/boards/r/items/y')).body.score).toBe(before);
    });

    it('without API_KEYS, a fresh random X-Api-Key per request is limited like one client (by address)', async () => {
      clock.advanceMs(20_000);
      await withApp(RATE, async (other) => {
        const statuses = [];
        for (let i = 0; i < 6; i++)
          statuses.push(
            (
              await other()
                .post('/boards/r/items/z/increment')
                .set('Content-Type', 'application/json')
                .set('X-Api-Key', `fresh-${i}`)
            ).status,
          );
        expect(statuses).toEqual([200, 200, 200, 429, 429, 429]);
      });
    });

    it('without TRUST_PROXY a forged X-Forwarded-For changes nothing; with it, clients behind the proxy count apart', async () => {
      clock.advanceMs(20_000);
      const burst = async (http: () => TestHttp, forwardedFor: string) => {
        const statuses = [];
        for (let i = 0; i < 4; i++)
          statuses.push(
            (
              await http()
                .post('/boards/r/items/p/increment')
                .set('Content-Type', 'application/json')
                .set('X-Forwarded-For', forwardedFor)
            ).status,
          );
        return statuses;
      };
      await withApp(RATE, async (direct) => {
        expect(await burst(direct, '203.0.113.1')).toEqual([200, 200, 200, 429]);
        expect(await burst(direct, '203.0.113.2')).toEqual([429, 429, 429, 429]);
      });
      clock.advanceMs(20_000);
      await withApp({ ...RATE, TRUST_PROXY: '127.0.0.1,::1' }, async (proxied) => {
        expect(await burst(proxied, '203.0.113.1')).toEqual([200, 200, 200, 429]);
        expect(await burst(proxied, '203.0.113.2')).toEqual([200, 200, 200, 429]);
      });
    });
  });
});
