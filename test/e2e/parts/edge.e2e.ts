import { connect, Socket } from 'node:net';
import request from 'supertest';
import { JSON_LIMITS } from '../../../src/edge/json-body';
import { ADMIN } from '../../../harness/app';
import { useSingleNodeApp } from '../../support/e2e';

/** Bodies built to stall the process or walk the validators: refused before anything walks them. */
describe('the HTTP edge bounds every body', () => {
  const e2e = useSingleNodeApp({ boards: ['b'] });
  const { http } = e2e;
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

/** What came back on a raw socket, and how long after connecting the server closed it. */
interface Conversation {
  received: string;
  closedAfterMs: number;
}

/** Opens a socket to `port`, lets `drive` write on it, and resolves once the socket is closed. */
function converse(port: number, drive: (socket: Socket) => void = () => undefined): Promise<Conversation> {
  return new Promise((resolve) => {
    const started = Date.now();
    const socket = connect(port, '127.0.0.1');
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (received += chunk));
    socket.on('error', () => undefined); // a reset closes it too: 'close' follows
    socket.on('close', () => resolve({ received, closedAfterMs: Date.now() - started }));
    socket.on('connect', () => drive(socket));
  });
}

/** Writes `chunk` every `everyMs` until the socket closes: a client that trickles. */
function trickle(socket: Socket, chunk: string, everyMs: number): void {
  const timer = setInterval(() => socket.writable && socket.write(chunk), everyMs);
  socket.on('close', () => clearInterval(timer));
}

/** The JSON body of a raw HTTP answer. */
function bodyOf(answer: string): unknown {
  return JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Timeouts shortened so that real sockets can show them; each test stays within about 1.5 s. */
describe('the HTTP edge closes idle and slow connections', () => {
  const TIMEOUTS = { connection: 300, headers: 300, request: 500, keepAlive: 300 };
  const MAX_CONNECTIONS = 8;
  const e2e = useSingleNodeApp({
    env: {
      HTTP_CONNECTION_TIMEOUT_MS: String(TIMEOUTS.connection),
      HTTP_HEADERS_TIMEOUT_MS: String(TIMEOUTS.headers),
      HTTP_REQUEST_TIMEOUT_MS: String(TIMEOUTS.request),
      HTTP_KEEP_ALIVE_TIMEOUT_MS: String(TIMEOUTS.keepAlive),
      HTTP_MAX_CONNECTIONS: String(MAX_CONNECTIONS),
    },
    boards: ['slow'],
  });
  let port: number;
  beforeAll(() => {
    port = e2e.port();
  });

  it('closes a socket that never sends a request after HTTP_CONNECTION_TIMEOUT_MS, answering nothing', async () => {
    const idle = await converse(port);
    expect(idle.received).toBe('');
    expect(idle.closedAfterMs).toBeGreaterThanOrEqual(TIMEOUTS.connection - 20);
    expect(idle.closedAfterMs).toBeLessThan(TIMEOUTS.connection + 700);
  });

  it('cuts a trickled header at HTTP_HEADERS_TIMEOUT_MS: 408 REQUEST_TIMEOUT, then the socket closes', async () => {
    // A header line every 100 ms keeps the socket busy, so only the header deadline can end it.
    const slow = await converse(port, (socket) => {
      socket.write('GET /health/live HTTP/1.1\r\nHost: t\r\n');
      trickle(socket, 'X-Slow: 1\r\n', 100);
    });
    expect(slow.received).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
    expect(slow.received).toMatch(/\r\nConnection: close\r\n/);
    expect(bodyOf(slow.received)).toEqual({
      statusCode: 408,
      error: 'Request Timeout',
      code: 'REQUEST_TIMEOUT',
      message: `The request did not arrive in time: headers within ${TIMEOUTS.headers} ms, the whole request within ${TIMEOUTS.request} ms`,
    });
    expect(slow.closedAfterMs).toBeGreaterThanOrEqual(TIMEOUTS.headers - 20);
    expect(slow.closedAfterMs).toBeLessThan(TIMEOUTS.headers + 700);
  });

  it('cuts a trickled body at HTTP_REQUEST_TIMEOUT_MS: 408, the socket closes and nothing is applied', async () => {
    const slow = await converse(port, (socket) => {
      socket.write(
        'POST /boards/slow/items/x/increment HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n' +
          'Content-Length: 64\r\n\r\n{"amount":5',
      );
      trickle(socket, ' ', 100);
    });
    expect(slow.received).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
    expect(bodyOf(slow.received)).toMatchObject({ statusCode: 408, code: 'REQUEST_TIMEOUT' });
    expect(slow.closedAfterMs).toBeGreaterThanOrEqual(TIMEOUTS.request - 20);
    expect(slow.closedAfterMs).toBeLessThan(TIMEOUTS.request + 700);
    expect((await request(e2e.app().getHttpServer()).get('/boards/slow/items/x')).body.score).toBe(0);
  });

  it('serves a keep-alive client request after request, and closes the socket once idle past the keep-alive timeout', async () => {
    let lastAnswerAt = 0;
    const kept = await converse(port, (socket) => {
      const ask = () => socket.write('GET /health/live HTTP/1.1\r\nHost: t\r\n\r\n');
      let answers = 0;
      socket.on('data', (chunk: string) => {
        answers += (chunk.match(/HTTP\/1\.1 /g) ?? []).length;
        lastAnswerAt = Date.now();
        // Each pause is shorter than the keep-alive timeout, and together longer than every other timeout.
        if (answers < 4) setTimeout(ask, 200);
      });
      ask();
    });
    expect(kept.received.match(/HTTP\/1\.1 200 OK\r\n/g)).toHaveLength(4);
    expect(kept.received).not.toMatch(/Connection: close/);
    // Node keeps an idle socket 1 s past keepAliveTimeout, so a client reusing it at the limit it was told never races the close.
    const idleMs = Date.now() - lastAnswerAt;
    expect(idleMs).toBeGreaterThanOrEqual(TIMEOUTS.keepAlive - 20);
    expect(idleMs).toBeLessThan(TIMEOUTS.keepAlive + 1700);
  });

  it('answers headers over 16 KB with 431 HEADERS_TOO_LARGE and closes the socket', async () => {
    const big = await converse(port, (socket) =>
      socket.write(`GET /health/live HTTP/1.1\r\nHost: t\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`),
    );
    expect(big.received).toMatch(/^HTTP\/1\.1 431 /);
    expect(bodyOf(big.received)).toMatchObject({ statusCode: 431, code: 'HEADERS_TOO_LARGE' });
  });

  it('answers malformed HTTP with 400 INVALID_INPUT and closes the socket', async () => {
    const bad = await converse(port, (socket) => socket.write('GET / HTTP/1.1\r\nHost t\r\n\r\n'));
    expect(bad.received).toMatch(/^HTTP\/1\.1 400 /);
    expect(bodyOf(bad.received)).toMatchObject({ statusCode: 400, code: 'INVALID_INPUT' });
  });

  it('closes a connection over HTTP_MAX_CONNECTIONS on arrival; a freed place takes the next one', async () => {
    const server = e2e.app().getHttpServer();
    const open = () => new Promise<number>((resolve) => server.getConnections((_: unknown, n: number) => resolve(n)));
    while ((await open()) > 0) await sleep(50); // earlier tests' sockets time out
    const held: Socket[] = [];
    for (let i = 0; i < MAX_CONNECTIONS; i++) held.push(connect(port, '127.0.0.1'));
    while ((await open()) < MAX_CONNECTIONS) await sleep(10);
    const refused = await converse(port, (socket) => socket.write('GET /health/live HTTP/1.1\r\nHost: t\r\n\r\n'));
    expect(refused).toEqual({ received: '', closedAfterMs: expect.any(Number) });
    expect(refused.closedAfterMs).toBeLessThan(TIMEOUTS.connection);
    held.pop()!.destroy();
    while ((await open()) >= MAX_CONNECTIONS) await sleep(10);
    const served = await converse(port, (socket) =>
      socket.write('GET /health/live HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n'),
    );
    expect(served.received).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    for (const socket of held) socket.destroy();
  });
});

describe('the HTTP edge sends security headers', () => {
  const { http } = useSingleNodeApp();

  it.each([
    ['a JSON answer', 'get', '/health/live', 200],
    ['an error', 'get', '/no/such/route', 404],
    ['a refused write (no JSON content type)', 'post', '/boards/none/items/x/increment', 415],
    ['the OpenAPI document', 'get', '/docs-json', 200],
    ['Prometheus text', 'get', '/metrics', 200],
  ] as const)('%s: nosniff and never framed, no CSP', async (_, method, path, status) => {
    const answer = await http()[method](path);
    expect(answer.status).toBe(status);
    expect(answer.headers).toMatchObject({ 'x-content-type-options': 'nosniff', 'x-frame-options': 'DENY' });
    expect(answer.headers).not.toHaveProperty('content-security-policy');
  });

  it('/docs: a CSP that forbids framing and foreign or inline scripts, and no HSTS over plain HTTP', async () => {
    const page = await http().get('/docs').expect(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    const csp = Object.fromEntries(
      String(page.headers['content-security-policy'])
        .split(';')
        .map((directive) => directive.trim().split(/\s+/))
        .map(([name, ...sources]) => [name, sources.join(' ')]),
    );
    expect(csp).toMatchObject({
      'default-src': "'self'",
      'script-src': "'self'",
      'script-src-attr': "'none'",
      'object-src': "'none'",
      'frame-ancestors': "'none'",
      'base-uri': "'self'",
      'connect-src': "'self'",
    });
    expect(csp).not.toHaveProperty('upgrade-insecure-requests'); // would move a page served over HTTP to https
    expect(page.headers).toMatchObject({
      'x-content-type-options': 'nosniff',
      'x-frame-options': 'DENY',
      'referrer-policy': 'no-referrer',
    });
    expect(page.headers).not.toHaveProperty('strict-transport-security');
  });

  it('/docs renders under its CSP: no inline script or handler, and every asset it loads is served', async () => {
    const html = (await http().get('/docs').expect(200)).text;
    const scripts = [...html.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.length).toBeGreaterThan(0);
    for (const [, attributes, inline] of scripts) {
      expect(attributes).toMatch(/\ssrc=/); // script-src 'self' runs files of this origin only
      expect(inline.trim()).toBe('');
    }
    expect(html).not.toMatch(/\son[a-z]+\s*=/i); // script-src-attr 'none'
    const assets = [...html.matchAll(/<(?:script|link)[^>]*\s(?:src|href)=["']([^"']+)["']/g)].map((m) => m[1]);
    expect(assets).toEqual(
      expect.arrayContaining(['./docs/swagger-ui.css', './docs/swagger-ui-bundle.js', './docs/swagger-ui-init.js']),
    );
    for (const asset of assets) {
      const path = new URL(asset, 'http://x/docs').pathname; // all same-origin and relative
      const answer = await http().get(path);
      expect([path, answer.status]).toEqual([path, 200]);
      expect(answer.headers['content-security-policy']).toMatch(/script-src 'self'/);
      expect(answer.headers['content-type']).toMatch(
        path.endsWith('.js') ? /javascript/ : path.endsWith('.css') ? /text\/css/ : /image\/png/,
      );
    }
    // Swagger UI's stylesheet only needs what img-src/font-src allow: data: URIs, never another origin.
    const css = (await http().get('/docs/swagger-ui.css')).text;
    const urls = [...css.matchAll(/url\(\s*["']?([^"')]+)/g)].map((m) => m[1]);
    expect(urls.filter((url) => !url.startsWith('data:'))).toEqual([]);
    // The "valid" badge would load an image from validator.swagger.io, which img-src refuses.
    expect((await http().get('/docs/swagger-ui-init.js')).text).toMatch(/"validatorUrl": null/);
  });
});
