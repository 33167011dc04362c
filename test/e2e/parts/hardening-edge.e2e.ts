import { AddressInfo, connect } from 'node:net';
import { Logger } from '@nestjs/common';
import request from 'supertest';
import { ApiKeysService } from '../../../src/access/api-keys.service';
import { ADMIN, ADMIN_TOKEN, createBoard } from '../../../harness/app';
import { useSingleNodeApp } from '../../support/e2e';

const WRITER = 'writer-secret-0123456789';
const READER = 'reader-secret-0123456789';
const JSON_TYPE = { 'Content-Type': 'application/json' };

/**
 * What hostile clients did at the HTTP edge, the key store and the scopes (issue #22, rows 6, 8, 10,
 * 12, 13, 14, 15): each case failed on the code before the fix.
 */
describe('hardening: edge, key store, scopes (issue #22)', () => {
  const e2e = useSingleNodeApp({ noApp: true });
  const { clock } = e2e;
  const start = async (env: Record<string, string | undefined> = {}) => {
    const app = await e2e.startApp(env);
    return () => request(app.getHttpServer());
  };
  const answerOf = (response: request.Response) => [response.status, response.body.code];
  const increment = (http: () => request.Agent, board: string, item = 'x') =>
    http().post(`/boards/${board}/items/${item}/increment`).send({});

  afterEach(async () => {
    await e2e.redis().clear();
    clock.advanceMs(60_000);
  });

  describe('row 6: bodies bounded before work', () => {
    it('refuses an array longer than 1 000 elements in the parser, before any DTO is built', async () => {
      const http = await start();
      await createBoard(e2e.started()[0], 'b');
      const body = `{"items":[${'{},'.repeat(330_000)}{}]}`;
      const answer = await http().post('/boards/b/increments').set(JSON_TYPE).send(body);
      expect(answerOf(answer)).toEqual([400, 'INVALID_INPUT']);
      expect(answer.body.message).toBe('body has an array with more than 1000 elements');
    });

    it('on a keyed deployment refuses a write without a known key before reading its body', async () => {
      const http = await start({ API_KEYS: `${WRITER}:write` });
      await createBoard(e2e.started()[0], 'b');
      // Not JSON at all: had it been parsed first, the answer would be a 400.
      const anonymous = await http().post('/boards/b/increments').set(JSON_TYPE).send('{"items": [nope');
      expect(answerOf(anonymous)).toEqual([401, 'API_KEY_MISSING']);
      const unknown = await http()
        .post('/boards/b/increments')
        .set(JSON_TYPE)
        .set('X-Api-Key', 'not-a-key-0123456789')
        .send('{"items": [nope');
      expect(answerOf(unknown)).toEqual([401, 'API_KEY_INVALID']);
      const keyed = await http()
        .post('/boards/b/increments')
        .set(JSON_TYPE)
        .set('X-Api-Key', WRITER)
        .send('{"items": [');
      expect(answerOf(keyed)).toEqual([400, 'INVALID_INPUT']);
    });

    it('answers 401 to an anonymous 1 MB write whose body has not even been sent, and waits for a keyed one', async () => {
      await start({ API_KEYS: `${WRITER}:write` });
      await createBoard(e2e.started()[0], 'b');
      await e2e.started()[0].listen(0, '127.0.0.1');
      const port = (e2e.started()[0].getHttpServer().address() as AddressInfo).port;
      // Only the headers go out: a service that read (let alone parsed) the body first could not answer yet.
      const headersOnly = (key?: string) =>
        firstAnswer(
          port,
          'POST /boards/b/increments HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n' +
            `Content-Length: ${1024 * 1024}\r\n${key ? `X-Api-Key: ${key}\r\n` : ''}\r\n`,
          1000,
        );
      const anonymous = await headersOnly();
      expect(anonymous).toMatch(/^HTTP\/1\.1 401 /);
      expect(JSON.parse(anonymous.slice(anonymous.indexOf('\r\n\r\n') + 4)).code).toBe('API_KEY_MISSING');
      expect(await headersOnly('not-a-key-0123456789')).toMatch(/^HTTP\/1\.1 401 /);
      // The control: an admitted write waits for its body (nothing answered within the second).
      expect(await headersOnly(WRITER)).toBe('');
    });
  });

  describe('row 8: the key store fails closed', () => {
    it('stays closed when Redis loses the stored keys (hash deleted, then everything flushed), and says so once', async () => {
      const errors = jest.spyOn(Logger.prototype, 'error');
      try {
        const http = await start();
        await createBoard(e2e.started()[0], 'b');
        const made = await http()
          .post('/admin/keys')
          .set(ADMIN)
          .send({ name: 'ingest', scopes: ['write'] });
        expect(made.status).toBe(201);
        expect(answerOf(await increment(http, 'b'))).toEqual([401, 'API_KEY_MISSING']);
        await e2e.redis().client.del(`${e2e.redis().prefix}apikeys`);
        await e2e.started()[0].get(ApiKeysService).reload();
        expect(answerOf(await increment(http, 'b'))).toEqual([401, 'API_KEY_MISSING']);
        // Flushing every key takes the marker too: this process remembers, and puts the marker back.
        await e2e.redis().clear();
        await createBoard(e2e.started()[0], 'b');
        await e2e.started()[0].get(ApiKeysService).reload();
        await e2e.started()[0].get(ApiKeysService).reload();
        expect(answerOf(await increment(http, 'b'))).toEqual([401, 'API_KEY_MISSING']);
        const lost = errors.mock.calls.filter(([message]) => String(message).includes('The API key store is empty'));
        expect(lost).toHaveLength(1);
        // Another instance starting on this Redis now finds the marker: closed from its first request.
        const other = await start();
        expect(answerOf(await increment(other, 'b'))).toEqual([401, 'API_KEY_MISSING']);
      } finally {
        errors.mockRestore();
      }
    });

    it('with ACCESS_MODE=keyed needs a key even when no key exists anywhere', async () => {
      const http = await start({ ACCESS_MODE: 'keyed' });
      await createBoard(e2e.started()[0], 'b');
      expect(answerOf(await increment(http, 'b'))).toEqual([401, 'API_KEY_MISSING']);
      expect(answerOf(await http().get('/boards/b/top?window=1h'))).toEqual([401, 'API_KEY_MISSING']);
    });
  });

  describe('row 10: admin keys cannot be limited to prefixes', () => {
    it('refuses to make one, and refuses every admin route to one stored by an older version', async () => {
      const http = await start();
      await createBoard(e2e.started()[0], 'us.posts');
      const made = await http()
        .post('/admin/keys')
        .set(ADMIN)
        .send({ name: 'eu-admin', scopes: ['admin'], prefixes: ['eu.'] });
      expect(answerOf(made)).toEqual([400, 'INVALID_INPUT']);
      expect(made.body.message).toMatch(/admin key cannot be limited to name prefixes/);
      const secret = 'legacy-eu-admin-0123456789';
      const { createHash } = await import('node:crypto');
      const digest = createHash('sha256').update(secret).digest('hex');
      const legacy = { digest, scopes: ['admin'], prefixes: ['eu.'], createdAtSec: 1 };
      await e2e.redis().client.hset(`${e2e.redis().prefix}apikeys`, 'eu-admin', JSON.stringify(legacy));
      await e2e.started()[0].get(ApiKeysService).reload();
      const bearer = { Authorization: `Bearer ${secret}` };
      expect(answerOf(await http().delete('/admin/boards/us.posts').set(bearer))).toEqual([403, 'API_KEY_SCOPE']);
      expect(answerOf(await http().delete('/admin/boards/eu.posts').set(bearer))).toEqual([403, 'API_KEY_SCOPE']);
      const minted = await http()
        .post('/admin/keys')
        .set(bearer)
        .send({ name: 'root', scopes: ['admin'] });
      expect(answerOf(minted)).toEqual([403, 'API_KEY_SCOPE']);
      expect(await e2e.redis().keys('board:us.posts}*')).not.toEqual([]); // still there
    });
  });

  describe('row 12: quotas group addresses by network and survive eviction', () => {
    let made = 0;
    const counters = async (http: () => request.Agent, addresses: string[], perAddress: number) => {
      let accepted = 0;
      for (const [a, address] of addresses.entries()) {
        for (let i = 0; i < perAddress; i++) {
          const answer = await http()
            .post(`/counters/c-${made++}-${a}-${i}/increment`)
            .send({})
            .set('X-Forwarded-For', address);
          if (answer.status === 200) accepted++;
          else expect(answerOf(answer)).toEqual([429, 'QUOTA_EXCEEDED']);
        }
      }
      return accepted;
    };
    const PROXIED = { TRUST_PROXY: '127.0.0.1,::1', QUOTA_NEW_COUNTERS: '3' };

    it('counts 15 loopback addresses as one client, an IPv6 /64 as one, and apart IPv4 addresses apart', async () => {
      const http = await start(PROXIED);
      const loopback = Array.from({ length: 15 }, (_, i) => `127.0.0.${i + 2}`);
      expect(await counters(http, loopback, 3)).toBe(3);
      const subnet = Array.from({ length: 15 }, (_, i) => `2001:db8:0:1::${(i + 1).toString(16)}`);
      expect(await counters(http, subnet, 3)).toBe(3);
      expect(await counters(http, ['203.0.113.1', '203.0.113.2'], 3)).toBe(6);
    });

    it('groups IPv4 networks by CLIENT_IPV4_PREFIX', async () => {
      const http = await start({ ...PROXIED, CLIENT_IPV4_PREFIX: '24' });
      expect(await counters(http, ['203.0.113.1', '203.0.113.2', '203.0.114.1'], 3)).toBe(6);
    });

    it('a client whose budget is spent gets no fresh one by pushing itself out of a full table', async () => {
      const http = await start({ ...PROXIED, RATE_LIMIT_MAX_CLIENTS: '2' });
      expect(await counters(http, ['198.51.100.1'], 3)).toBe(3);
      const others = Array.from({ length: 5 }, (_, i) => `198.51.${101 + i}.1`);
      await counters(http, others, 1);
      expect(await counters(http, ['198.51.100.1'], 3)).toBe(0);
    });
  });

  describe('row 13: writes must say they are JSON', () => {
    it('refuses a bodyless POST without the JSON content type (what a cross-origin form sends), applies it with', async () => {
      const http = await start();
      await createBoard(e2e.started()[0], 'b');
      const bare = await http().post('/boards/b/items/x/increment');
      expect(answerOf(bare)).toEqual([415, 'UNSUPPORTED_MEDIA_TYPE']);
      expect(bare.body.message).toContain('send Content-Type: application/json');
      const form = await http()
        .post('/boards/b/items/x/increment')
        .set('Content-Type', 'application/x-www-form-urlencoded');
      expect(answerOf(form)).toEqual([415, 'UNSUPPORTED_MEDIA_TYPE']);
      expect(answerOf(await http().post('/counters/c/increment'))).toEqual([415, 'UNSUPPORTED_MEDIA_TYPE']);
      const top = await http().get('/boards/b/top?window=1h');
      expect(top.body.items).toEqual([]);
      const applied = await increment(http, 'b');
      expect(applied.status).toBe(200);
      expect((await http().get('/boards/b/top?window=1h')).body.items).toHaveLength(1);
    });
  });

  describe('row 14: the service owns its stats types', () => {
    it('refuses a client write of AccessTime', async () => {
      const http = await start();
      const route = encodeURIComponent('GET /boards/:board/top');
      const answer = await http().post(`/stats/${route}/AccessTime`).send({ value: 1e100 });
      expect(answerOf(answer)).toEqual([400, 'INVALID_INPUT']);
      expect(answer.body.message).toMatch(/reserved/);
      expect((await http().post(`/stats/${route}/MyTime`).send({ value: 1 })).status).toBe(200);
    });
  });

  describe('row 15: guessing keys is rate-limited per network', () => {
    it('answers 429 with Retry-After past AUTH_FAILURES_PER_SEC failures, to a key not yet used there too, other networks unaffected', async () => {
      const http = await start({ API_KEYS: `${READER}:read`, AUTH_FAILURES_PER_SEC: '5', TRUST_PROXY: '127.0.0.1' });
      await createBoard(e2e.started()[0], 'b');
      const read = (key: string, from = '203.0.113.9') =>
        http().get('/boards/b/top?window=1h').set('X-Api-Key', key).set('X-Forwarded-For', from);
      const statuses: number[] = [];
      for (let i = 0; i < 20; i++) statuses.push((await read(`guess-${i}-0123456789`)).status);
      expect(statuses).toEqual([...Array(10).fill(401), ...Array(10).fill(429)]);
      // Never admitted from this network before its lockout: answered as a guess would be.
      const right = await read(READER);
      expect(answerOf(right)).toEqual([429, 'RATE_LIMITED']);
      expect(Number(right.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect((await read(READER, '198.51.100.7')).status).toBe(200);
      expect((await read('guess-x-0123456789', '198.51.100.7')).status).toBe(401);
      clock.advanceMs(11_000);
      expect((await read(READER)).status).toBe(200);
    });
  });

  describe('issue #45 row 12: bad keys do not lock out good keys of the same network', () => {
    it('keeps admitting a key used from the network while guesses from it are answered 429', async () => {
      const http = await start({
        API_KEYS: `${READER}:read`,
        AUTH_FAILURES_PER_SEC: '5',
        TRUST_PROXY: '127.0.0.1',
      });
      await createBoard(e2e.started()[0], 'b');
      const from = (address: string) => ({ 'X-Forwarded-For': address });
      const read = (key: string) =>
        http().get('/boards/b/top?window=1h').set('X-Api-Key', key).set(from('203.0.113.9'));
      const admin = (token: string) =>
        http().get('/admin/keys').set('Authorization', `Bearer ${token}`).set(from('203.0.113.9'));
      expect((await read(READER)).status).toBe(200);
      expect((await admin(ADMIN_TOKEN)).status).toBe(200);
      // The issue's load: 10 bad keys a second for 10 s, the valid key in between.
      const good: number[] = [];
      const guesses: number[] = [];
      const wrongAdmin: number[] = [];
      for (let second = 0; second < 10; second++) {
        for (let i = 0; i < 10; i++) guesses.push((await read(`guess-${second}-${i}-0123456789`)).status);
        good.push((await read(READER)).status, (await admin(ADMIN_TOKEN)).status);
        wrongAdmin.push((await admin('wrong-token-0123456789')).status);
        clock.advanceMs(1000);
      }
      expect(good).toEqual(Array(20).fill(200));
      // Guessing stays limited: 10 in the first second, then the sustained 5/s over 10 s.
      expect(guesses.filter((status) => status === 401).length).toBeLessThanOrEqual(50);
      expect(guesses.filter((status) => status === 429).length).toBeGreaterThanOrEqual(50);
      expect(wrongAdmin).toEqual(Array(10).fill(429));
    });
  });

  describe('keyed reads are private to their key', () => {
    it('answers Cache-Control: private and Vary: Authorization, X-Api-Key', async () => {
      const http = await start({ API_KEYS: `${READER}:read` });
      await createBoard(e2e.started()[0], 'b');
      const answer = await http().get('/boards/b/top?window=1h').set('Authorization', `Bearer ${READER}`);
      expect(answer.status).toBe(200);
      expect(answer.headers['cache-control']).toBe('private');
      expect(answer.headers.vary).toBe('Authorization, X-Api-Key');
    });
  });
});

/** What the server sends within `waitMs` of `head` (the socket is then closed): '' when it sends nothing. */
function firstAnswer(port: number, head: string, waitMs: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(head));
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (received += chunk));
    socket.on('error', () => undefined);
    const timer = setTimeout(() => socket.destroy(), waitMs);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(received);
    });
  });
}
