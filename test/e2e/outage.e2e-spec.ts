import request from 'supertest';
import { RedisFunctions } from '../../src/redis/redis-functions';
import { ADMIN, startTestApp } from '../../harness/app';
import { RANKING } from '../../src/ranking/ranking.functions';
import { useSingleNodeApp } from '../support/e2e';

describe('when Redis goes away and comes back', () => {
  const e2e = useSingleNodeApp({ ownRedis: true });
  const { clock, http } = e2e;

  it('answers 503 fast (never 500, never hangs), reports not ready, and recovers by itself', async () => {
    if (!e2e.redis().pause || !e2e.redis().resume) return; // a shared REDIS_URL cannot be stopped from here
    await http()
      .put('/admin/boards/b')
      .set(ADMIN)
      .send({ windows: [{ period: '1h', interval: '1m' }] })
      .expect(201);
    await http().post('/boards/b/items/x/increment').set('Content-Type', 'application/json').expect(200);

    await e2e.redis().pause!();
    for (const call of [
      () => http().post('/boards/b/items/x/increment').set('Content-Type', 'application/json'),
      () => http().get('/boards/b/top'),
      // A batch call is written to the connection at once, not through the auto-pipeline (sendAlone).
      () =>
        http()
          .post('/boards/b/increments')
          .send({ items: [{ item: 'x', amount: 1 }] }),
      () => http().get('/boards'),
      () =>
        http()
          .put('/admin/boards/c')
          .set(ADMIN)
          .send({ windows: [{ period: '1h', interval: '1m' }] }),
    ]) {
      const startedMs = performance.now();
      const response = await call();
      expect(performance.now() - startedMs).toBeLessThan(1000);
      expect(response.status).toBe(503);
      expect(response.body).toEqual({
        statusCode: 503,
        message: 'Redis is unreachable; try again shortly',
        error: 'Service Unavailable',
        code: 'REDIS_UNAVAILABLE',
      });
    }
    const notReady = await http().get('/health/ready');
    expect(notReady.status).toBe(503);
    expect(notReady.body).toMatchObject({
      statusCode: 503,
      error: 'Service Unavailable',
      code: 'NOT_READY',
      message: expect.stringMatching(/^Not ready: redis is down \(.+\)$/),
      details: { redis: { status: 'down' } },
    });
    expect((await http().get('/health/live')).status).toBe(200);

    await e2e.redis().resume!(); // a fresh, empty server: scripts must be loaded again by the app
    let ready = 0;
    for (let attempt = 0; attempt < 100 && ready !== 200; attempt++) {
      ready = (await http().get('/health/ready')).status;
      if (ready !== 200) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(ready).toBe(200);
    await http()
      .put('/admin/boards/b')
      .set(ADMIN)
      .send({ windows: [{ period: '1h', interval: '1m' }] })
      .expect(201);
    const after = await http().post('/boards/b/items/x/increment').set('Content-Type', 'application/json');
    expect(after.status).toBe(200);
    expect(after.body.windows['1h']).toEqual({ score: 1, rank: 1, previousRank: null });
  });

  it('boots while Redis is away (every start-up step that needs it waits for it), and is ready once it is back', async () => {
    if (!e2e.redis().pause || !e2e.redis().resume) return; // a shared REDIS_URL cannot be stopped from here
    await e2e.redis().pause!();
    let resumed = false;
    let late: Awaited<ReturnType<typeof startTestApp>> | undefined;
    try {
      late = await startTestApp(e2e.redis(), clock);
      const call = () => request(late!.getHttpServer());
      expect((await call().get('/health/ready')).status).toBe(503);
      expect((await call().get('/boards/b/top')).body.code).toBe('REDIS_UNAVAILABLE');
      await e2e.redis().resume!();
      resumed = true;
      let ready = 0;
      for (let attempt = 0; attempt < 100 && ready !== 200; attempt++) {
        ready = (await call().get('/health/ready')).status;
        if (ready !== 200) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(ready).toBe(200);
    } finally {
      if (!resumed) await e2e.redis().resume!();
      await late?.close();
    }
  });

  it('answers 503 within the command timeout when Redis stops answering (auto-pipelined commands too), then recovers', async () => {
    if (!e2e.redis().freeze || !e2e.redis().thaw) return; // a shared REDIS_URL cannot be frozen from here
    const timeoutMs = 400;
    const impatient = await startTestApp(e2e.redis(), clock, {
      REDIS_COMMAND_TIMEOUT_MS: String(timeoutMs),
      REDIS_AUTO_PIPELINING: 'true',
    });
    const call = () => request(impatient.getHttpServer());
    const timed = async (send: () => PromiseLike<request.Response>) => {
      const startedMs = performance.now();
      const answer = await send();
      return { answer, tookMs: performance.now() - startedMs };
    };
    try {
      await call()
        .put('/admin/boards/f')
        .set(ADMIN)
        .send({ windows: [{ period: '1h', interval: '1m' }] })
        .expect(201);
      e2e.redis().freeze!();
      // The later requests queue behind the first one's pipeline, still in flight: they too must stay within the timeout.
      const later = (delayMs: number, send: () => PromiseLike<request.Response>) =>
        new Promise((resolve) => setTimeout(resolve, delayMs)).then(() => timed(send));
      const results = await Promise.all([
        timed(() =>
          call()
            .post('/boards/f/items/x/increment')
            .set('Content-Type', 'application/json')
            .set('Idempotency-Key', 'frozen-x'),
        ),
        later(100, () => call().get('/boards/f/top')),
        later(150, () => call().post('/boards/f/items/y/increment').set('Content-Type', 'application/json')),
        later(120, () =>
          call()
            .post('/boards/f/increments')
            .send({ items: [{ item: 'z', amount: 1 }] }),
        ),
      ]);
      for (const { answer, tookMs } of results) {
        expect(answer.body).toEqual({
          statusCode: 503,
          message:
            'Redis did not answer in time; a write may have been applied: retry it with the same Idempotency-Key',
          error: 'Service Unavailable',
          code: 'REDIS_UNAVAILABLE',
        });
        // A missed timeout hangs till the thaw and a retried command takes two timeouts; a loaded host adds
        // less than one to the answer (CI: 577 ms seen for a request the server logged at 420 ms).
        expect(tookMs).toBeLessThan(2 * timeoutMs);
      }
      e2e.redis().thaw!();
      let status = 0;
      for (let attempt = 0; attempt < 100 && status !== 200; attempt++) {
        status = (await call().get('/boards/f/top')).status;
        if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(status).toBe(200);
      // The answer was a 503, yet Redis ran the queued write once it woke: a retry with the key says so
      // and applies nothing more.
      const retried = await call()
        .post('/boards/f/items/x/increment')
        .set('Content-Type', 'application/json')
        .set('Idempotency-Key', 'frozen-x');
      expect([retried.status, retried.headers['idempotent-replayed']]).toEqual([200, 'true']);
      expect((await call().get('/boards/f/items/x')).body.score).toBe(1);
    } finally {
      e2e.redis().thaw!();
      await impatient.close();
    }
  });

  it.each(['true', 'false'])(
    'a stalled event loop is not taken for a silent Redis: writes answered during the stall are 200 (auto-pipelining %s)',
    async (autoPipelining) => {
      const timeoutMs = 200;
      const stalled = await startTestApp(e2e.redis(), clock, {
        REDIS_COMMAND_TIMEOUT_MS: String(timeoutMs),
        REDIS_AUTO_PIPELINING: autoPipelining,
      });
      const board = `stall-${autoPipelining}`;
      const call = () => request(stalled.getHttpServer());
      try {
        await call()
          .put(`/admin/boards/${board}`)
          .set(ADMIN)
          .send({ windows: [{ period: '1h', interval: '1m' }] })
          .expect(201);
        // The 8th increment blocks the event loop for 3 timeouts right after it was sent, with 7 more in
        // flight: every reply reaches the socket during the stall, and timers run before sockets are read.
        const functions = stalled.get(RedisFunctions);
        const call$ = functions.call.bind(functions);
        let increments = 0;
        jest.spyOn(functions, 'call').mockImplementation((fn, input) => {
          const pending = call$(fn, input);
          if (fn === RANKING.functions.increment && ++increments === 8) {
            const untilMs = performance.now() + 3 * timeoutMs;
            while (performance.now() < untilMs);
          }
          return pending;
        });
        const answers = await Promise.all(
          Array.from({ length: 8 }, (_, i) =>
            call()
              .post(`/boards/${board}/items/x/increment`)
              .send({ amount: i + 1 }),
          ),
        );
        expect(answers.map((answer) => answer.status)).toEqual(Array(8).fill(200));
        expect((await call().get(`/boards/${board}/items/x`)).body.score).toBe(36);
      } finally {
        await stalled.close();
      }
    },
  );
});
