import request from 'supertest';
import { LiveHub, LiveListing } from '../../../src/live/live-hub';
import { RankingService } from '../../../src/ranking/ranking.service';
import { FakeClock } from '../../../harness/clock';
import { ADMIN, startTestApp } from '../../../harness/app';
import { startTestRedis } from '../../../harness/redis';
import { listen, SseReader } from '../../support/sse';
import { useClusterApp, useSingleNodeApp } from '../../support/e2e';

const T0 = 1_700_002_800_000;

describe('live stream over HTTP (SSE)', () => {
  // The poll timer is left far out: the test drives each poll with hub.tick().
  const e2e = useSingleNodeApp({ startMs: T0, env: { STREAM_COALESCE_MS: '60000' }, fresh: true });
  const { clock, http } = e2e;
  let base: string;
  let hub: LiveHub;
  const readers: SseReader[] = [];
  const open = async (query = '', headers: Record<string, string> = {}) => {
    const reader = await SseReader.open(`${base}/boards/live/stream${query}`, headers);
    readers.push(reader);
    return reader;
  };
  const increment = (item: string, amount = 1) =>
    http().post(`/boards/live/items/${item}/increment`).send({ amount }).expect(200);

  beforeAll(async () => {
    base = await listen(e2e.app());
    hub = e2e.app().get(LiveHub);
  });
  beforeEach(async () => {
    await http()
      .put('/admin/boards/live')
      .set(ADMIN)
      .send({ windows: [{ name: 'm', period: '2m', interval: '1m', snapshots: { keep: 5, top: 10 } }] })
      .expect(201);
  });
  afterEach(() => {
    for (const reader of readers.splice(0)) reader.close();
  });

  it('answers a snapshot first, then one coalesced top event per poll when the rows changed', async () => {
    await increment('a', 2);
    const reader = await open('?limit=2');
    expect(reader.response.statusCode).toBe(200);
    expect(reader.response.headers['content-type']).toMatch(/^text\/event-stream/);
    await reader.waitFor(1);
    const [snapshot] = reader.named<LiveListing>('snapshot');
    expect(snapshot).toMatchObject({ board: 'live', window: 'm', items: [{ rank: 1, item: 'a', score: 2 }] });
    expect(reader.events[0].id).toBe(String(snapshot.version));

    await increment('b', 5);
    await increment('c', 1);
    await increment('b', 1);
    await hub.tick();
    await reader.waitFor(2);
    const tops = reader.named<LiveListing>('top');
    expect(tops).toHaveLength(1);
    expect(tops[0].items).toEqual([
      { rank: 1, item: 'b', score: 6, previousRank: null },
      { rank: 2, item: 'a', score: 2, previousRank: null },
    ]);
    expect(tops[0].version).toBe(snapshot.version + 3);

    // A write below the watched rows, and a poll with nothing new: no event.
    await increment('d', 1);
    await hub.tick();
    await hub.tick();
    hub.heartbeat();
    await reader.waitFor(3);
    expect(reader.events[2]).toEqual({ comment: 'heartbeat' });
  });

  it('reads once per watched board per poll, whatever the number of clients', async () => {
    const ranking = e2e.app().get(RankingService);
    const clients = await Promise.all(Array.from({ length: 8 }, () => open('?window=m&limit=3')));
    await Promise.all(clients.map((client) => client.waitFor(1)));
    const versions = jest.spyOn(ranking, 'changeVersion');
    const tops = jest.spyOn(ranking, 'top');
    try {
      await increment('x', 3);
      await hub.tick();
      await Promise.all(clients.map((client) => client.waitFor(2)));
      expect([versions.mock.calls.length, tops.mock.calls.length]).toEqual([1, 1]);
      await hub.tick();
      expect([versions.mock.calls.length, tops.mock.calls.length]).toEqual([2, 1]);
    } finally {
      versions.mockRestore();
      tops.mockRestore();
    }
  });

  it('moves with time: a new slot re-reads the rows (expiry, previousRank) without any write', async () => {
    await increment('a', 2);
    const reader = await open();
    await reader.waitFor(1);
    clock.advanceSec(60);
    await hub.tick();
    await reader.waitFor(2);
    expect(reader.named<LiveListing>('top')[0].items).toEqual([{ rank: 1, item: 'a', score: 2, previousRank: 1 }]);
    clock.advanceSec(120);
    await hub.tick();
    await reader.waitFor(3);
    expect(reader.named<LiveListing>('top')[1].items).toEqual([]);
  });

  it('a calendar window resets at local midnight in its zone: the stream delivers it without any write', async () => {
    await http()
      .put('/admin/boards/berlin')
      .set(ADMIN)
      .send({ windows: [{ name: 'day', calendar: 'day', timeZone: 'Europe/Berlin' }] })
      .expect(201);
    await http().post('/boards/berlin/items/a/increment').send({ amount: 4 }).expect(200);
    const reader = await SseReader.open(`${base}/boards/berlin/stream?window=day`);
    readers.push(reader);
    await reader.waitFor(1);
    const [snapshot] = reader.named<LiveListing>('snapshot');
    expect(snapshot.items).toEqual([{ rank: 1, item: 'a', score: 4, previousRank: null }]);
    // T0 is midnight in Berlin (23:00 UTC): the day ends at snapshot.to, not at a multiple of its length.
    const toMs = Number(snapshot.to) * 1000;
    expect((toMs - T0) % 86_400_000).toBe(0);
    clock.setMs(toMs - 1000);
    await hub.tick();
    clock.setMs(toMs);
    await hub.tick();
    await reader.waitFor(2);
    const [reset] = reader.named<LiveListing>('top');
    expect(reset).toMatchObject({ from: snapshot.to, items: [] });
    expect(reader.events).toHaveLength(2);
  });

  it("a segment's stream answers and pushes that segment's rows only", async () => {
    await http()
      .put('/admin/boards/live')
      .set(ADMIN)
      .send({
        windows: [{ name: 'm', period: '2m', interval: '1m', snapshots: { keep: 5, top: 10 } }],
        segments: { max: 4 },
      })
      .expect(200);
    const write = (item: string, amount: number, segments: string[]) =>
      http().post(`/boards/live/items/${item}/increment`).send({ amount, segments }).expect(200);
    await write('a', 2, ['en']);
    await write('b', 9, ['fr']);
    const en = await open('?segment=en');
    const board = await open();
    await Promise.all([en.waitFor(1), board.waitFor(1)]);
    const [snapshot] = en.named<LiveListing>('snapshot');
    expect(snapshot).toMatchObject({ board: 'live', window: 'm', segment: 'en' });
    expect(snapshot.items).toEqual([{ rank: 1, item: 'a', score: 2, previousRank: null }]);
    expect(board.named<LiveListing>('snapshot')[0]).not.toHaveProperty('segment');

    await write('c', 3, ['en']);
    await hub.tick();
    await Promise.all([en.waitFor(2), board.waitFor(2)]);
    expect(en.named<LiveListing>('top')[0].items.map((row) => [row.item, row.score])).toEqual([
      ['c', 3],
      ['a', 2],
    ]);
    expect(board.named<LiveListing>('top')[0].items.map((row) => row.item)).toEqual(['b', 'c', 'a']);
    // A write to another segment moves the board's rows, not this segment's: no event on its stream.
    await write('b', 1, ['fr']);
    await hub.tick();
    await board.waitFor(3);
    expect(en.named<LiveListing>('top')).toHaveLength(1);
    const plain = await http().get('/boards/none/stream?segment=en').expect(404);
    expect(plain.body.code).toBe('BOARD_NOT_FOUND');
  });

  it('ends the streams of a deleted board', async () => {
    const reader = await open();
    await reader.waitFor(1);
    await http().delete('/admin/boards/live').set(ADMIN).expect(204);
    await hub.tick();
    await reader.waitForEnd();
    expect(hub.clients).toBe(0);
  });

  it('a reconnect with Last-Event-ID starts with a fresh snapshot; bad input is a 4xx with a code', async () => {
    await increment('a', 1);
    const first = await open();
    await first.waitFor(1);
    first.close();
    await increment('a', 1);
    const again = await open('', { 'last-event-id': first.events[0].id ?? '' });
    await again.waitFor(1);
    expect(again.events[0].event).toBe('snapshot');
    expect(again.named<LiveListing>('snapshot')[0].items[0].score).toBe(2);
    for (const [path, status, code] of [
      ['/boards/nope/stream', 404, 'BOARD_NOT_FOUND'],
      ['/boards/live/stream?window=x', 404, 'WINDOW_NOT_FOUND'],
      ['/boards/live/stream?limit=101', 400, 'INVALID_INPUT'],
      ['/boards/live/stream?limit=0', 400, 'INVALID_INPUT'],
    ] as const) {
      const res = await http().get(path);
      expect([path, res.status, res.body.code]).toEqual([path, status, code]);
    }
  });
});

describe('live stream timers and shutdown', () => {
  it('pushes within a poll interval on its own, and closing the app ends open streams', async () => {
    const redis = await startTestRedis();
    const app = await startTestApp(redis, new FakeClock(T0), { STREAM_COALESCE_MS: '50' });
    let closed = false;
    try {
      const base = await listen(app);
      await request(app.getHttpServer())
        .put('/admin/boards/auto')
        .set(ADMIN)
        .send({ windows: [{ period: '1h', interval: '1m' }] })
        .expect(201);
      const reader = await SseReader.open(`${base}/boards/auto/stream`);
      await reader.waitFor(1);
      const sentMs = Date.now();
      await request(app.getHttpServer()).post('/boards/auto/items/z/increment').send({}).expect(200);
      await reader.waitFor(2, 1000);
      expect(Date.now() - sentMs).toBeLessThan(1000);
      expect(reader.named<LiveListing>('top')[0].items[0]).toMatchObject({ item: 'z', rank: 1 });
      await app.close();
      closed = true;
      await reader.waitForEnd();
      expect(app.get(LiveHub).clients).toBe(0);
    } finally {
      if (!closed) await app.close();
      await redis.stop();
    }
  });
});

describe('live stream of a sharded board on a Cluster', () => {
  const e2e = useClusterApp({ startMs: T0, env: { STREAM_COALESCE_MS: '60000' } });
  const { clock, http } = e2e;
  let reader: SseReader;
  afterAll(() => reader?.close());

  let base: string;
  beforeAll(async () => {
    base = await listen(e2e.app());
  });

  it('sums the shards change versions and streams the merged top', async () => {
    await http()
      .put('/admin/boards/wide')
      .set(ADMIN)
      .send({ windows: [{ period: '1h', interval: '1m', snapshots: { keep: 5, top: 10 } }], shards: 4 })
      .expect(201);
    reader = await SseReader.open(`${base}/boards/wide/stream?limit=3`);
    await reader.waitFor(1);
    const [snapshot] = reader.named<LiveListing>('snapshot');
    expect(snapshot.items).toEqual([]);
    for (const [item, amount] of [
      ['a', 3],
      ['b', 5],
      ['c', 4],
      ['d', 1],
    ] as const)
      await http().post(`/boards/wide/items/${item}/increment`).send({ amount }).expect(200);
    await e2e.app().get(LiveHub).tick();
    await reader.waitFor(2);
    const [top] = reader.named<LiveListing>('top');
    expect(top.version).toBe(snapshot.version + 4);
    expect(top.items.map((row) => [row.item, row.rank])).toEqual([
      ['b', 1],
      ['c', 2],
      ['a', 3],
    ]);
    // The next slot: previous ranks from the shards' merged snapshot.
    clock.advanceSec(60);
    await http().post('/boards/wide/items/a/increment').send({ amount: 5 }).expect(200);
    await e2e.app().get(LiveHub).tick();
    await reader.waitFor(3);
    expect(reader.named<LiveListing>('top')[1].items).toEqual([
      { rank: 1, item: 'a', score: 8, previousRank: 3 },
      { rank: 2, item: 'b', score: 5, previousRank: 1 },
      { rank: 3, item: 'c', score: 4, previousRank: 2 },
    ]);
  });

  it("streams a segment's merged top with previous ranks from the segment's own snapshots", async () => {
    await http()
      .put('/admin/boards/wideseg')
      .set(ADMIN)
      .send({
        windows: [{ period: '1h', interval: '1m', snapshots: { keep: 5, top: 10 } }],
        shards: 4,
        segments: { max: 5 },
      })
      .expect(201);
    const write = (item: string, amount: number, segments: string[]) =>
      http().post(`/boards/wideseg/items/${item}/increment`).send({ amount, segments }).expect(200);
    for (const [item, amount] of [
      ['a', 3],
      ['b', 5],
      ['c', 4],
    ] as const)
      await write(item, amount, ['en']);
    await write('z', 50, ['fr']);
    const en = await SseReader.open(`${base}/boards/wideseg/stream?limit=3&segment=en`);
    try {
      await en.waitFor(1);
      expect(en.named<LiveListing>('snapshot')[0].items.map((row) => row.item)).toEqual(['b', 'c', 'a']);
      clock.advanceSec(60);
      await write('a', 5, ['en']);
      await e2e.app().get(LiveHub).tick();
      await en.waitFor(2);
      expect(en.named<LiveListing>('top')[0]).toMatchObject({ segment: 'en' });
      expect(en.named<LiveListing>('top')[0].items).toEqual([
        { rank: 1, item: 'a', score: 8, previousRank: 3 },
        { rank: 2, item: 'b', score: 5, previousRank: 1 },
        { rank: 3, item: 'c', score: 4, previousRank: 2 },
      ]);
    } finally {
      en.close();
    }
  });
});
