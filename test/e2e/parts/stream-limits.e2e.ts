import { Logger } from '@nestjs/common';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { Socket } from 'node:net';
import request from 'supertest';
import { LiveHub } from '../../../src/live/live-hub';
import { STREAM_MAX_BUFFERED_BYTES } from '../../../src/live/live.limits';
import { ADMIN, createBoard } from '../../../harness/app';
import { useSingleNodeApp } from '../../support/e2e';
import { listen, SseReader, StalledReader, waitUntil } from '../../support/sse';

const T0 = 1_700_002_800_000;
const READ_KEY_A = 'stream-key-a-0123456789';
const READ_KEY_B = 'stream-key-b-0123456789';
const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

/** The server's side of every connection, by the client's port: what the server still holds for a client. */
function serverSockets(app: NestFastifyApplication): Map<number, Socket> {
  const sockets = new Map<number, Socket>();
  app.getHttpServer().on('connection', (socket: Socket) => sockets.set(socket.remotePort ?? 0, socket));
  return sockets;
}

/** Opens streams and closes them all after each test. */
function streams(base: () => string) {
  const open: Array<SseReader | StalledReader> = [];
  afterEach(() => {
    for (const reader of open.splice(0)) reader.close();
  });
  return {
    open: async (path: string, headers: Record<string, string> = {}) => {
      const reader = await SseReader.open(`${base()}${path}`, headers);
      open.push(reader);
      if (reader.response.statusCode !== 200) await reader.waitForEnd();
      return reader;
    },
    stall: async (path: string) => {
      const reader = await StalledReader.open(`${base()}${path}`);
      open.push(reader);
      return reader;
    },
  };
}

const answerOf = (reader: SseReader) => [
  reader.response.statusCode,
  reader.response.statusCode === 200 ? 'stream' : (JSON.parse(reader.text) as { code: string }).code,
];

describe('stream caps: per client, per instance (under the connection limit), lifetime, HEAD', () => {
  const e2e = useSingleNodeApp({
    startMs: T0,
    env: {
      STREAM_COALESCE_MS: '60000',
      API_KEYS: `${READ_KEY_A}:read,${READ_KEY_B}:read`,
      PUBLIC_READS: 'true',
      STREAM_MAX_PER_CLIENT: '3',
      // 7 streams at most: half the connections.
      HTTP_MAX_CONNECTIONS: '14',
    },
  });
  const { clock } = e2e;
  let base = '';
  const { open } = streams(() => base);

  beforeAll(async () => {
    base = await listen(e2e.app());
    await createBoard(e2e.app(), 'capped');
  });

  it('refuses a client its 4th stream (429 STREAM_LIMIT), the instance its 8th (503), and probes still answer', async () => {
    const anonymous = await Promise.all([1, 2, 3].map(() => open('/boards/capped/stream')));
    expect(anonymous.map(answerOf)).toEqual([1, 2, 3].map(() => [200, 'stream']));
    expect(answerOf(await open('/boards/capped/stream'))).toEqual([429, 'STREAM_LIMIT']);
    // Another client (each key is one) has its own count.
    for (let i = 0; i < 3; i++)
      expect(answerOf(await open('/boards/capped/stream', bearer(READ_KEY_A)))).toEqual([200, 'stream']);
    expect(answerOf(await open('/boards/capped/stream', bearer(READ_KEY_B)))).toEqual([200, 'stream']);
    expect(e2e.app().get(LiveHub).clients).toBe(7);
    expect(answerOf(await open('/boards/capped/stream', bearer(READ_KEY_B)))).toEqual([503, 'STREAM_CAPACITY']);
    const live = await SseReader.open(`${base}/health/live`);
    await live.waitForEnd();
    expect(live.response.statusCode).toBe(200);
    // A stream closed gives its place back.
    anonymous[0].close();
    await waitUntil(() => e2e.app().get(LiveHub).clients === 6);
    expect(answerOf(await open('/boards/capped/stream'))).toEqual([200, 'stream']);
  });

  it('ends every stream STREAM_MAX_LIFETIME_MS after it opened (the client reconnects)', async () => {
    const reader = await open('/boards/capped/stream');
    await reader.waitFor(1);
    clock.advanceSec(30 * 60 - 1);
    e2e.app().get(LiveHub).heartbeat();
    await reader.waitFor(2);
    expect(reader.ended).toBe(false);
    clock.advanceSec(1);
    e2e.app().get(LiveHub).heartbeat();
    await reader.waitForEnd();
    expect(e2e.app().get(LiveHub).clients).toBe(0);
  });

  it('counts streams on /metrics (open now; opened, closed and cut by reason) and logs each one', async () => {
    const metric = async (series: string) => {
      const text = (await request(e2e.app().getHttpServer()).get('/metrics').set(ADMIN).expect(200)).text;
      const line = text.split('\n').find((row) => row.startsWith(`${series} `));
      return line === undefined ? 0 : Number(line.slice(series.length + 1));
    };
    const closedByClient = 'trendboard_streams_closed_total{reason="client"}';
    const closedByLifetime = 'trendboard_streams_closed_total{reason="lifetime"}';
    const before = [await metric('trendboard_streams_opened_total'), await metric(closedByClient)];
    const logged = jest.spyOn(Logger.prototype, 'log');
    try {
      const first = await open('/boards/capped/stream');
      const second = await open('/boards/capped/stream', bearer(READ_KEY_A));
      await Promise.all([first.waitFor(1), second.waitFor(1)]);
      expect(await metric('trendboard_streams_open')).toBe(2);
      expect(await metric('trendboard_streams_opened_total')).toBe(before[0] + 2);
      first.close();
      await waitUntil(() => e2e.app().get(LiveHub).clients === 1);
      expect(await metric(closedByClient)).toBe(before[1] + 1);
      const lifetimeBefore = await metric(closedByLifetime);
      clock.advanceSec(30 * 60);
      e2e.app().get(LiveHub).heartbeat();
      await second.waitForEnd();
      expect([await metric('trendboard_streams_open'), await metric(closedByLifetime)]).toEqual([
        0,
        lifetimeBefore + 1,
      ]);
      expect(await metric('trendboard_streams_cut_total{reason="idle"}')).toBe(0);
      const lines = logged.mock.calls.map(([message]) => String(message)).filter((m) => m.startsWith('stream '));
      expect(lines).toEqual([
        expect.stringMatching(/^stream opened: board capped, window \S+ \(client ip:\S+; 1 open\)$/),
        expect.stringMatching(/^stream opened: board capped, window \S+ \(client key:\S+; 2 open\)$/),
        expect.stringMatching(
          /^stream ended after \d+\.\d s, the client closed it: board capped, window \S+ \(1 open\)$/,
        ),
        expect.stringMatching(/^stream ended after 1800\.0 s, it reached STREAM_MAX_LIFETIME_MS: board capped/),
      ]);
    } finally {
      logged.mockRestore();
    }
  });

  it('answers HEAD with the event-stream headers and no body, and the 404 of a GET', async () => {
    const head = await request(e2e.app().getHttpServer()).head('/boards/capped/stream').timeout(2000);
    expect([head.status, head.headers['content-type']]).toEqual([200, 'text/event-stream; charset=utf-8']);
    const missing = await request(e2e.app().getHttpServer()).head('/boards/nope/stream').timeout(2000);
    expect(missing.status).toBe(404);
    expect(e2e.app().get(LiveHub).clients).toBe(0);
  });
});

describe('a stream costs reads from its client budget', () => {
  const e2e = useSingleNodeApp({
    startMs: T0,
    env: { STREAM_COALESCE_MS: '60000', READ_RATE_LIMIT_PER_SEC: '5', READ_RATE_LIMIT_BURST: '25' },
  });
  const readers: SseReader[] = [];
  afterEach(() => {
    for (const reader of readers.splice(0)) reader.close();
  });

  it('counts 10 reads per shard when a stream opens: 429 RATE_LIMITED past the read burst', async () => {
    const base = await listen(e2e.app());
    await createBoard(e2e.app(), 'paid');
    for (let i = 0; i < 3; i++) {
      readers.push(await SseReader.open(`${base}/boards/paid/stream`));
      if (readers[i].response.statusCode !== 200) await readers[i].waitForEnd();
    }
    expect(readers.map(answerOf)).toEqual([
      [200, 'stream'],
      [200, 'stream'],
      [429, 'RATE_LIMITED'],
    ]);
  });
});

describe('clients that do not read: buffer bound, idle limit, no crash when their board goes', () => {
  const e2e = useSingleNodeApp({ startMs: T0, env: { STREAM_COALESCE_MS: '60000', QUOTA_NEW_ITEMS: '0' } });
  const { clock } = e2e;
  let hub: LiveHub;
  let base = '';
  let sockets: Map<number, Socket>;
  const { open, stall } = streams(() => base);
  // 100 rows of long multi-byte ids: about 30 KB an event, so a few hundred events fill the socket buffers.
  const ids = Array.from({ length: 100 }, (_, i) => `${'😀'.repeat(60)}${String(i).padStart(3, '0')}`);

  /** One event to every client of the board: the top row's score moves, then a poll. */
  const push = async () => {
    await request(e2e.app().getHttpServer())
      .post(`/boards/slow/items/${encodeURIComponent(ids[0])}/increment`)
      .send({ amount: 1000 })
      .expect(200);
    await hub.tick();
    await new Promise((resolve) => setImmediate(resolve));
  };
  /** Pushes events until `done` (at most 800: 24 MB, far past what a socket's buffers take). */
  const pushUntil = async (done: () => boolean) => {
    for (let events = 0; events < 800; events++) {
      if (done()) return;
      await push();
    }
    throw new Error('pushed 800 events and the condition still does not hold');
  };

  beforeAll(async () => {
    base = await listen(e2e.app());
    hub = e2e.app().get(LiveHub);
    sockets = serverSockets(e2e.app());
  });
  beforeEach(async () => {
    await e2e.redis().clear();
    await createBoard(e2e.app(), 'slow');
    await request(e2e.app().getHttpServer())
      .post('/boards/slow/increments')
      .send({ items: ids.map((item, i) => ({ item, amount: 1000 - i })) })
      .expect(200);
  });

  it('drops a client whose unread bytes pass the bound, logging one line for many', async () => {
    const warn = jest.spyOn(Logger.prototype, 'warn');
    try {
      const stalled = await Promise.all([1, 2].map(() => stall('/boards/slow/stream?limit=100')));
      const reading = await open('/boards/slow/stream?limit=100');
      await waitUntil(() => hub.clients === 3);
      const serverSide = stalled.map((reader) => sockets.get(reader.localPort ?? -1));
      let mostBufferedBytes = 0;
      await pushUntil(() => {
        for (const socket of serverSide) mostBufferedBytes = Math.max(mostBufferedBytes, socket?.writableLength ?? 0);
        return hub.clients === 1;
      });
      expect(mostBufferedBytes).toBeGreaterThan(0);
      // The bound plus the one event that passed it.
      expect(mostBufferedBytes).toBeLessThan(STREAM_MAX_BUFFERED_BYTES + 64 * 1024);
      expect(serverSide.every((socket) => socket?.destroyed)).toBe(true);
      expect(reading.ended).toBe(false);
      expect(warn.mock.calls.filter(([message]) => /dropped/.test(String(message)))).toHaveLength(1);
    } finally {
      warn.mockRestore();
    }
  });

  it('cuts a stream whose client read nothing for STREAM_IDLE_TIMEOUT_MS; a reading one stays', async () => {
    const stalled = await stall('/boards/slow/stream?limit=100');
    const reading = await open('/boards/slow/stream?limit=100');
    await waitUntil(() => hub.clients === 2);
    const serverSide = () => sockets.get(stalled.localPort ?? -1);
    await pushUntil(() => (serverSide()?.writableLength ?? 0) > 0);
    const heartbeat = async (afterSec: number) => {
      clock.advanceSec(afterSec);
      hub.heartbeat();
      await new Promise((resolve) => setImmediate(resolve));
    };
    await heartbeat(0);
    await heartbeat(59);
    expect(hub.clients).toBe(2);
    await heartbeat(1);
    expect(hub.clients).toBe(1);
    expect(serverSide()?.destroyed).toBe(true);
    expect(reading.ended).toBe(false);
    const metrics = (await request(e2e.app().getHttpServer()).get('/metrics').set(ADMIN).expect(200)).text;
    expect(metrics).toMatch(/^trendboard_streams_cut_total\{reason="idle"\} 1$/m);
  });

  it('survives a stalled stream whose board is deleted, then a heartbeat: the app still answers', async () => {
    const stalled = await stall('/boards/slow/stream?limit=100');
    await waitUntil(() => hub.clients === 1);
    await pushUntil(() => (sockets.get(stalled.localPort ?? -1)?.writableLength ?? 0) > 0);
    await request(e2e.app().getHttpServer()).delete('/admin/boards/slow').set(ADMIN).expect(204);
    await hub.tick();
    // Two heartbeats: Fastify's own response listener takes the first error of a response, not a second.
    for (let beat = 0; beat < 2; beat++) {
      hub.heartbeat();
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await hub.tick();
    const live = await SseReader.open(`${base}/health/live`);
    await live.waitForEnd();
    expect(live.response.statusCode).toBe(200);
    expect(hub.clients).toBe(0);
  });
});
