import request from 'supertest';
import { CountersScheduler } from '../../../src/counters/counters.scheduler';
import { ADMIN } from '../../../harness/app';
import { useApp } from '../../support/e2e';
import { TOPOLOGIES } from '../../../harness/redis';

const T0 = 1_700_002_800_000; // an hour boundary (unix ms)
const T0_SEC = T0 / 1000;
const ALL = [1, 5, 60, 300, 3600, 18000, 86400];

describe.each(TOPOLOGIES)('counters over HTTP (%s)', (topology) => {
  // Default precisions, 120 samples.
  const e2e = useApp(topology, { startMs: T0, fresh: true });
  const { clock, http } = e2e;
  const inc = (name: string, body?: object) =>
    http().post(`/counters/${name}/increment`).set('Content-Type', 'application/json').send(body);

  it('increments (default 1, a count, a late `at`), reads every precision, lists and deletes', async () => {
    const first = await inc('hits:home');
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ name: 'hits:home', count: 1, at: T0_SEC, precisions: ALL });
    clock.advanceSec(7);
    expect((await inc('hits:home', { count: 4 })).body).toMatchObject({ count: 4, at: T0_SEC + 7 });
    // 200 s ago: too old for 1 s (120 s kept), fine for 5 s and up
    expect((await inc('hits:home', { count: 2, at: T0_SEC - 200 })).body).toEqual({
      name: 'hits:home',
      count: 2,
      at: T0_SEC - 200,
      precisions: ALL.slice(1),
    });

    const per5 = await http().get('/counters/hits:home?precision=5');
    expect(per5.status).toBe(200);
    expect(per5.body).toEqual({
      name: 'hits:home',
      precision: 5,
      samples: [
        { t: T0_SEC - 200, count: 2 },
        { t: T0_SEC, count: 1 },
        { t: T0_SEC + 5, count: 4 },
      ],
    });
    expect((await http().get('/counters/hits:home?precision=1')).body.samples).toEqual([
      { t: T0_SEC, count: 1 },
      { t: T0_SEC + 7, count: 4 },
    ]);
    expect((await http().get('/counters/hits:home?precision=1m')).body).toEqual({
      name: 'hits:home',
      precision: 60,
      samples: [
        { t: T0_SEC - 240, count: 2 },
        { t: T0_SEC, count: 5 },
      ],
    });
    expect((await http().get('/counters/hits:home?precision=1d')).body.samples).toEqual([
      { t: T0_SEC - (T0_SEC % 86400), count: 7 },
    ]);
    // from/to and fill
    expect(
      (await http().get(`/counters/hits:home?precision=5&from=${T0_SEC + 1}&to=${T0_SEC + 100}`)).body.samples,
    ).toEqual([
      { t: T0_SEC, count: 1 },
      { t: T0_SEC + 5, count: 4 },
    ]);
    const filled = await http().get(`/counters/hits:home?precision=1&fill=true&from=${T0_SEC - 2}`);
    expect(filled.body.samples.map((s: { t: number }) => s.t)).toEqual(
      [-2, -1, 0, 1, 2, 3, 4, 5, 6, 7].map((d) => T0_SEC + d),
    );
    expect(filled.body.samples.filter((s: { count: number }) => s.count > 0)).toHaveLength(2);
    const fullFill = await http().get('/counters/hits:home?precision=5&fill=1');
    expect(fullFill.body.samples).toHaveLength(120);
    expect(fullFill.body.samples[119]).toEqual({ t: T0_SEC + 5, count: 4 });

    await inc('db.queries', { count: -3 });
    const list = await http().get('/counters');
    expect(list.status).toBe(200);
    expect(list.body).toEqual({
      counters: [
        { name: 'db.queries', precisions: ALL },
        { name: 'hits:home', precisions: ALL },
      ],
      total: 2,
      nextCursor: null,
    });
    expect((await http().get('/counters?limit=1&offset=1')).body.counters.map((c: { name: string }) => c.name)).toEqual(
      ['hits:home'],
    );
    const firstPage = await http().get('/counters?limit=1');
    expect([firstPage.body.counters.length, firstPage.body.nextCursor]).toEqual([1, 'db.queries']);
    expect((await http().get('/counters?limit=1&cursor=db.queries')).body).toEqual({
      counters: [{ name: 'hits:home', precisions: ALL }],
      total: 2,
      nextCursor: 'hits:home',
    });
    for (const query of ['?offset=0&cursor=a', '?cursor=a%7Bb', '?limit=0'])
      expect([query, (await http().get(`/counters${query}`)).status]).toEqual([query, 400]);

    expect((await http().delete('/admin/counters/hits:home')).status).toBe(401);
    expect(
      (await http().delete('/admin/counters/hits:home').set({ Authorization: 'Bearer wrong-token-0123456789' })).status,
    ).toBe(403);
    expect((await http().delete('/admin/counters/hits:home').set(ADMIN)).status).toBe(204);
    expect(await e2e.redis().keys('*hits:home*')).toEqual([]);
    const gone = await http().get('/counters/hits:home?precision=5');
    expect(gone.status).toBe(404);
    expect(gone.body).toEqual({
      statusCode: 404,
      message: 'counter "hits:home" does not exist',
      error: 'Not Found',
      code: 'COUNTER_NOT_FOUND',
    });
    expect((await http().delete('/admin/counters/hits:home').set(ADMIN)).status).toBe(404);
    expect((await http().get('/counters')).body.counters.map((c: { name: string }) => c.name)).toEqual(['db.queries']);
  });

  it('the cleaner (scheduler tick) trims old slices and drops counters with no data left', async () => {
    await inc('old');
    clock.advanceSec(200); // 1 s retention (120 s) passed
    await inc('fresh');
    const scheduler = e2e.app().get(CountersScheduler);
    const result = await scheduler.tick(); // pass 0: every precision due
    expect(result).toMatchObject({ pass: 0, failures: 0, slicesRemoved: 1, entriesRemoved: 1 });
    expect((await http().get('/counters')).body.counters).toEqual([
      { name: 'fresh', precisions: ALL },
      { name: 'old', precisions: ALL.slice(1) },
    ]);
    expect(scheduler.stats).toMatchObject({ runs: 1, failures: 0, passes: 1, slicesRemoved: 1, entriesRemoved: 1 });
  });

  describe('bad input answers 400 naming the field', () => {
    it.each([
      ['a bad name', '/counters/bad%20name/increment', {}, /name must be 1-64 characters/],
      ['a too long name', `/counters/${'x'.repeat(65)}/increment`, {}, /name must be 1-64 characters/],
      ['a brace in the name', '/counters/a%7Bb%7D/increment', {}, /name must be/],
      ['a zero count', '/counters/c/increment', { count: 0 }, /count must not be zero/],
      ['a fractional count', '/counters/c/increment', { count: 1.5 }, /count must be an integer/],
      ['a string count', '/counters/c/increment', { count: 'x' }, /count must be an integer/],
      ['a too large count', '/counters/c/increment', { count: 1_000_001 }, /count must not be greater than 1000000/],
      ['a too small count', '/counters/c/increment', { count: -1_000_001 }, /count must not be less than -1000000/],
      ['a null count (not taken for absent)', '/counters/c/increment', { count: null }, /count must not be null/],
      ['a null `at` (not taken for now)', '/counters/c/increment', { at: null }, /at must not be null/],
      [
        'an `at` in the future',
        '/counters/c/increment',
        { at: T0_SEC + 6 },
        /at must not be more than 5 s in the future/,
      ],
      [
        'an `at` older than every retention',
        '/counters/c/increment',
        { at: T0_SEC - 121 * 86400 },
        /at is older than the longest retention \(120 samples x 86400 s\)/,
      ],
      ['a negative `at`', '/counters/c/increment', { at: -1 }, /at must not be less than 0/],
      ['a string `at`', '/counters/c/increment', { at: 'yesterday' }, /at must be an integer/],
      ['an unknown field', '/counters/c/increment', { amount: 1 }, /property amount should not exist/],
    ])('increment with %s', async (_, path, body, message) => {
      const response = await http().post(path).send(body);
      expect(response.status).toBe(400);
      expect(response.body.error).toBe('Bad Request');
      expect([response.body.message].flat().join('; ')).toMatch(message);
      expect(await e2e.redis().keys('cnt:*')).toEqual([]);
    });

    it.each([
      ['no precision', '', /precision is required: precision must be one of 1, 5, 60, 300, 3600, 18000, 86400/],
      [
        'an unconfigured precision',
        'precision=7',
        /precision "7" is not configured: precision must be one of 1, 5, 60, 300, 3600, 18000, 86400/,
      ],
      ['a precision that is no duration', 'precision=abc', /precision "abc" is not configured/],
      ['a bad from', 'precision=5&from=abc', /from must be an integer/],
      ['a bad to', 'precision=5&to=-5', /to must not be less than 0/],
      ['from after to', 'precision=5&from=10&to=5', /from \(10\) must not be after to \(5\)/],
      ['a bad fill', 'precision=5&fill=maybe', /fill must be a boolean/],
    ])('read with %s', async (_, query, message) => {
      await inc('c');
      const response = await http().get(`/counters/c?${query}`);
      expect(response.status).toBe(400);
      expect([response.body.message].flat().join('; ')).toMatch(message);
    });

    it.each([
      ['limit=0', /limit must not be less than 1/],
      ['limit=1001', /limit must not be greater than 1000/],
      ['offset=-1', /offset must not be less than 0/],
      ['limit=x', /limit must be an integer/],
    ])('list with %s', async (query, message) => {
      const response = await http().get(`/counters?${query}`);
      expect(response.status).toBe(400);
      expect([response.body.message].flat().join('; ')).toMatch(message);
    });

    it('a bad name on read and delete', async () => {
      expect((await http().get('/counters/bad%20name?precision=5')).status).toBe(400);
      expect((await http().delete('/admin/counters/bad%20name').set(ADMIN)).status).toBe(400);
    });
  });

  it('answers 404 for an unknown counter', async () => {
    const response = await http().get('/counters/nope?precision=60');
    expect(response.status).toBe(404);
    expect(response.body.message).toBe('counter "nope" does not exist');
  });

  it('documents every counter route in the OpenAPI document', async () => {
    const docs = await http().get('/docs-json');
    expect(Object.keys(docs.body.paths)).toEqual(
      expect.arrayContaining(['/counters/{name}/increment', '/counters/{name}', '/counters', '/admin/counters/{name}']),
    );
    expect(docs.body.components.schemas.IncrementCounterDto.properties.count).toBeDefined();
    expect(docs.body.paths['/counters/{name}'].get.summary).toBeDefined();
  });

  it('a keyed sample that aged out since its first request replays that answer; a new one is refused, storing nothing', async () => {
    const short = await e2e.startApp({ COUNTER_PRECISIONS: '1,5' }); // longest retention 600 s
    const keyed = (key: string, at: number) =>
      request(short.getHttpServer()).post('/counters/late/increment').set('Idempotency-Key', key).send({ at });
    const first = await keyed('late-1', T0_SEC - 500);
    expect(first.body).toEqual({ name: 'late', count: 1, at: T0_SEC - 500, precisions: [5] });
    clock.advanceSec(200); // T0 - 500 is now past every retention
    const retried = await keyed('late-1', T0_SEC - 500);
    expect(retried.status).toBe(200);
    expect(retried.headers['idempotent-replayed']).toBe('true');
    expect(retried.text).toBe(first.text);
    const fresh = await keyed('late-2', T0_SEC - 500);
    expect([fresh.status, fresh.body.message]).toEqual([
      400,
      expect.stringMatching(/older than the longest retention/),
    ]);
    expect((await keyed('late-2', T0_SEC - 500)).headers['idempotent-replayed']).toBeUndefined(); // refused again
    const plain = await request(short.getHttpServer())
      .post('/counters/late/increment')
      .send({ at: T0_SEC - 500 });
    expect(plain.status).toBe(400);
  });
});
