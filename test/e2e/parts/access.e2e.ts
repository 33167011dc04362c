import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { ModulesContainer } from '@nestjs/core';
import request from 'supertest';
import { ACCESS_RULE } from '../../../src/access/access.decorators';
import { ApiKeysRefresher } from '../../../src/access/api-keys.refresher';
import { ADMIN, createBoard } from '../../../harness/app';
import { useSingleNodeApp } from '../../support/e2e';

const WRITER = 'writer-secret-0123456789';
const READER = 'reader-secret-0123456789';
const EU = 'eu-only-secret-0123456789';
const OPS = 'ops-admin-secret-0123456789';
const CONFIGURED = `${WRITER}:write,${READER}:read,${EU}:read+write:eu.,${OPS}:admin`;

/** API keys with scopes, from API_KEYS and made over HTTP, on a Redis of the file's own. */
describe('access: API keys and scopes', () => {
  const e2e = useSingleNodeApp({ noApp: true });
  const { clock } = e2e;
  const start = e2e.startApp;
  const client = (app: NestFastifyApplication) => () => request(app.getHttpServer());
  const increment = (http: () => request.Agent, board: string, key?: string) => {
    const call = http().post(`/boards/${board}/items/x/increment`).send({ amount: 1 });
    return key === undefined ? call : call.set('Authorization', `Bearer ${key}`);
  };
  const answerOf = (response: request.Response) => [response.status, response.body.code];

  afterEach(() => e2e.redis().clear());

  it('every route declares what it needs (no route is open by omission)', async () => {
    const app = await start();
    const undeclared: string[] = [];
    for (const module of app.get(ModulesContainer).values()) {
      for (const wrapper of module.controllers.values()) {
        const type = wrapper.metatype as (new () => object) | null;
        if (!type) continue;
        for (const method of Object.getOwnPropertyNames(type.prototype)) {
          const handler = (type.prototype as Record<string, unknown>)[method];
          if (method === 'constructor' || typeof handler !== 'function') continue;
          if (!Reflect.hasMetadata('path', handler)) continue;
          if (!Reflect.getMetadata(ACCESS_RULE, handler) && !Reflect.getMetadata(ACCESS_RULE, type))
            undeclared.push(`${type.name}.${method}`);
        }
      }
    }
    expect(undeclared).toEqual([]);
  });

  it('with no key anywhere, reads and writes are open as before, and a sent key is ignored', async () => {
    const http = client(await start());
    await createBoard(e2e.started()[0], 'open');
    expect((await increment(http, 'open')).status).toBe(200);
    expect((await increment(http, 'open', 'anything-at-all-0123456789')).status).toBe(200);
    expect((await http().get('/boards/open/items/x')).body.score).toBe(2);
  });

  describe('keys from API_KEYS', () => {
    it('a write needs a key with the write scope: missing 401, unknown 401, read-only 403', async () => {
      const http = client(await start({ API_KEYS: CONFIGURED }));
      await createBoard(e2e.started()[0], 'b');
      expect(answerOf(await increment(http, 'b'))).toEqual([401, 'API_KEY_MISSING']);
      expect(answerOf(await increment(http, 'b', 'random-guess-0123456789'))).toEqual([401, 'API_KEY_INVALID']);
      expect(answerOf(await increment(http, 'b', READER))).toEqual([403, 'API_KEY_SCOPE']);
      expect(answerOf(await increment(http, 'b', OPS))).toEqual([403, 'API_KEY_SCOPE']); // admin is not write
      expect((await increment(http, 'b', ADMIN_TOKEN_VALUE())).body.code).toBe('API_KEY_INVALID');
      expect((await increment(http, 'b', WRITER)).status).toBe(200);
      const viaHeader = await http().post('/boards/b/items/x/increment').set('X-Api-Key', WRITER).send({});
      expect(viaHeader.status).toBe(200);
      expect((await http().get('/boards/b/items/x').set('X-Api-Key', READER)).body.score).toBe(2);
    });

    it('every write route and every read route is guarded', async () => {
      const http = client(await start({ API_KEYS: CONFIGURED }));
      await createBoard(e2e.started()[0], 'b');
      const writes = [
        http()
          .post('/boards/b/increments')
          .send({ items: [{ item: 'x' }] }),
        http().post('/boards/b/items/x/likes').send({ userId: 'u' }),
        http().delete('/boards/b/items/x/likes/u'),
        http().post('/counters/c/increment').send({}),
        http().post('/stats/ctx/T').send({ value: 1 }),
      ];
      for (const write of writes)
        expect(answerOf(await write.set('X-Api-Key', READER))).toEqual([403, 'API_KEY_SCOPE']);
      const reads = [
        '/boards',
        '/boards/b',
        '/boards/b/top',
        '/boards/b/items/x',
        '/boards/b/items/x/around',
        '/counters',
        '/counters/c?precision=1',
        '/stats/ctx/T',
      ];
      for (const path of reads) expect(answerOf(await http().get(path))).toEqual([401, 'API_KEY_MISSING']);
      for (const path of reads)
        expect((await http().get(path).set('X-Api-Key', WRITER)).body.code).toBe('API_KEY_SCOPE');
      expect((await http().get('/health/live')).status).toBe(200);
      expect((await http().get('/metrics')).status).toBe(200);
    });

    it('PUBLIC_READS=true opens reads, not writes', async () => {
      const http = client(await start({ API_KEYS: CONFIGURED, PUBLIC_READS: 'true' }));
      await createBoard(e2e.started()[0], 'b');
      expect((await http().get('/boards/b/top')).status).toBe(200);
      expect(answerOf(await increment(http, 'b'))).toEqual([401, 'API_KEY_MISSING']);
      expect(answerOf(await http().get('/boards/b/top').set('X-Api-Key', 'not-a-key-0123456789'))).toEqual([
        401,
        'API_KEY_INVALID',
      ]);
    });

    it('a key limited to name prefixes touches only those names, and cannot list every name', async () => {
      const http = client(await start({ API_KEYS: CONFIGURED }));
      await createBoard(e2e.started()[0], 'eu.posts');
      await createBoard(e2e.started()[0], 'us.posts');
      expect((await increment(http, 'eu.posts', EU)).status).toBe(200);
      const outside = await increment(http, 'us.posts', EU);
      expect(answerOf(outside)).toEqual([403, 'API_KEY_SCOPE']);
      expect(outside.body.message).toMatch(/"eu\."/);
      expect((await http().get('/boards/eu.posts/top').set('X-Api-Key', EU)).status).toBe(200);
      expect((await http().get('/boards').set('X-Api-Key', EU)).body.code).toBe('API_KEY_SCOPE');
      expect((await http().post('/counters/eu.hits/increment').set('X-Api-Key', EU).send({})).status).toBe(200);
      expect((await http().post('/counters/us.hits/increment').set('X-Api-Key', EU).send({})).status).toBe(403);
    });

    it('admin routes take ADMIN_TOKEN or a key with the admin scope', async () => {
      const http = client(await start({ API_KEYS: CONFIGURED }));
      const body = { windows: [{ period: '1h', interval: '1m' }] };
      expect((await http().put('/admin/boards/a').set('X-Api-Key', OPS).send(body)).status).toBe(201);
      expect((await http().put('/admin/boards/a').set('Authorization', `Bearer ${OPS}`).send(body)).status).toBe(200);
      expect((await http().put('/admin/boards/a').set(ADMIN).send(body)).status).toBe(200);
      expect(answerOf(await http().put('/admin/boards/a').set('X-Api-Key', WRITER).send(body))).toEqual([
        403,
        'API_KEY_SCOPE',
      ]);
      expect(answerOf(await http().put('/admin/boards/a').send(body))).toEqual([401, 'ADMIN_TOKEN_MISSING']);
      expect(answerOf(await http().put('/admin/boards/a').set('Authorization', 'Bearer nope').send(body))).toEqual([
        403,
        'ADMIN_TOKEN_INVALID',
      ]);
    });

    it('without ADMIN_TOKEN, an admin key still opens the admin routes; with neither they are 503', async () => {
      const body = { windows: [{ period: '1h', interval: '1m' }] };
      const keyed = client(await start({ API_KEYS: CONFIGURED, ADMIN_TOKEN: undefined }));
      expect((await keyed().put('/admin/boards/n').set('X-Api-Key', OPS).send(body)).status).toBe(201);
      const none = client(await start({ ADMIN_TOKEN: undefined }));
      expect(answerOf(await none().put('/admin/boards/n').send(body))).toEqual([503, 'ADMIN_DISABLED']);
    });

    it('limits reads per key when READ_RATE_LIMIT_PER_SEC is set, apart from writes and from other keys', async () => {
      const http = client(
        await start({
          API_KEYS: `${READER}:read,${WRITER}:read+write`,
          READ_RATE_LIMIT_PER_SEC: '1',
          READ_RATE_LIMIT_BURST: '2',
        }),
      );
      await createBoard(e2e.started()[0], 'r');
      clock.setMs(1_800_000_000_000);
      const read = (key: string) => http().get('/boards/r/top').set('X-Api-Key', key);
      expect([(await read(READER)).status, (await read(READER)).status]).toEqual([200, 200]);
      const limited = await read(READER);
      expect([limited.status, limited.body.code, limited.headers['retry-after']]).toEqual([429, 'RATE_LIMITED', '1']);
      expect(limited.body.message).toMatch(/1 reads per second \(burst 2\)/);
      expect((await read(WRITER)).status).toBe(200);
      expect((await increment(http, 'r', WRITER)).status).toBe(200);
      clock.advanceMs(1100);
      expect((await read(READER)).status).toBe(200);
    });
  });

  describe('keys made over HTTP (stored in Redis)', () => {
    const make = (http: () => request.Agent, body: object) => http().post('/admin/keys').set(ADMIN).send(body);

    it('makes a key whose secret is shown once, lists keys without secrets, and revokes', async () => {
      const http = client(await start());
      const nowSec = Math.floor(clock.nowMs() / 1000);
      await createBoard(e2e.started()[0], 'b');
      const made = await make(http, { name: 'ingest', scopes: ['write'] });
      expect(made.status).toBe(201);
      expect(made.body).toEqual({
        name: 'ingest',
        key: expect.stringMatching(/^tb_[A-Za-z0-9_-]{43}$/),
        scopes: ['write'],
        prefixes: [],
        source: 'redis',
        createdAt: nowSec,
      });
      // From the first key on, writes need one: the service is no longer open.
      expect(answerOf(await increment(http, 'b'))).toEqual([401, 'API_KEY_MISSING']);
      expect((await increment(http, 'b', made.body.key)).status).toBe(200);
      const listed = await http().get('/admin/keys').set(ADMIN);
      expect(listed.body).toEqual({
        keys: [{ name: 'ingest', scopes: ['write'], prefixes: [], source: 'redis', createdAt: nowSec }],
      });
      expect(JSON.stringify(await e2e.redis().client.hgetall(`${e2e.redis().prefix}apikeys`))).not.toContain(
        made.body.key,
      );
      expect((await http().delete('/admin/keys/ingest').set(ADMIN)).status).toBe(204);
      // No key left, yet the deployment had keys: it stays closed (fail closed, issue #22).
      expect(answerOf(await increment(http, 'b', made.body.key))).toEqual([401, 'API_KEY_INVALID']);
      expect(answerOf(await http().delete('/admin/keys/ingest').set(ADMIN))).toEqual([404, 'API_KEY_NOT_FOUND']);
    });

    it('another instance accepts and refuses keys within API_KEYS_REFRESH_MS (its refresh job)', async () => {
      const first = client(await start({ API_KEYS: `${OPS}:admin` }));
      const second = await start({ API_KEYS: `${OPS}:admin` });
      await createBoard(e2e.started()[0], 'b');
      const made = await make(first, { name: 'late', scopes: ['write'] });
      const other = client(second);
      expect(answerOf(await increment(other, 'b', made.body.key))).toEqual([401, 'API_KEY_INVALID']);
      await second.get(ApiKeysRefresher).tick();
      expect((await increment(other, 'b', made.body.key)).status).toBe(200);
      await first().delete('/admin/keys/late').set(ADMIN).expect(204);
      expect(answerOf(await increment(first, 'b', made.body.key))).toEqual([401, 'API_KEY_INVALID']); // at once here
      await second.get(ApiKeysRefresher).tick();
      expect(answerOf(await increment(other, 'b', made.body.key))).toEqual([401, 'API_KEY_INVALID']);
    });

    it('refuses a taken name (409), a config: name, bad scopes and prefixes (400 naming them)', async () => {
      const http = client(await start());
      expect((await make(http, { name: 'k', scopes: ['read'] })).status).toBe(201);
      expect(answerOf(await make(http, { name: 'k', scopes: ['read'] }))).toEqual([409, 'API_KEY_EXISTS']);
      const refused: Array<[object, RegExp]> = [
        [{ name: 'config:x', scopes: ['read'] }, /config:/],
        [{ name: 'k2', scopes: [] }, /scopes/],
        [{ name: 'k2', scopes: ['root'] }, /scopes/],
        [{ name: 'k2', scopes: ['read', 'read'] }, /scopes/],
        [{ name: 'k2', scopes: 'read' }, /scopes/],
        [{ name: 'k2', scopes: ['read'], prefixes: null }, /prefixes/],
        [{ name: 'k2', scopes: ['read'], prefixes: ['a|b'] }, /prefixes/],
        [{ name: 'k2', scopes: ['read'], prefixes: [''] }, /prefixes/],
        [{ name: 'k 2', scopes: ['read'] }, /name/],
        [{ scopes: ['read'] }, /name/],
      ];
      for (const [body, message] of refused) {
        const answer = await make(http, body);
        expect([answer.status, answer.body.code, body]).toEqual([400, 'INVALID_INPUT', body]);
        expect(answer.body.message).toMatch(message);
      }
    });

    it('a key made with the admin scope manages keys itself', async () => {
      const http = client(await start());
      const ops = await make(http, { name: 'ops', scopes: ['admin'] });
      const made = await http()
        .post('/admin/keys')
        .set('X-Api-Key', ops.body.key)
        .send({ name: 'r', scopes: ['read'] });
      expect(made.status).toBe(201);
      const reader = await http()
        .post('/admin/keys')
        .set('X-Api-Key', made.body.key)
        .send({ name: 'x', scopes: ['read'] });
      expect(answerOf(reader)).toEqual([403, 'API_KEY_SCOPE']);
    });
  });
});

function ADMIN_TOKEN_VALUE(): string {
  return ADMIN.Authorization.slice('Bearer '.length);
}
