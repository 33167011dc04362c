import { LiveHub, LiveListing } from '../../../src/live/live-hub';
import { ADMIN } from '../../../harness/app';
import { SseReader } from '../../support/sse';
import { E2eContext, T0, useClusterApp, useSingleNodeApp } from '../../support/e2e';

/**
 * The stream's ?metric= (#50), on one Redis (3 shards) and a Cluster: the rows rank by the metric
 * named, as GET top?metric= lists them, each row carries every metric's count, the events name the
 * metric; streams of two metrics of one board are two watches (each gets its own frames); a metric
 * the board does not declare is the 400 UNKNOWN_METRIC of the other reads.
 */
type Row = { rank: number; item: string; score: number; metrics?: Record<string, number>; group?: string };

function streamMetrics(e2e: E2eContext) {
  const { http } = e2e;
  const readers: SseReader[] = [];
  afterEach(() => {
    for (const reader of readers.splice(0)) reader.close();
  });
  const open = async (board: string, query: string) => {
    const reader = await SseReader.open(`http://127.0.0.1:${e2e.port()}/boards/${board}/stream${query}`);
    readers.push(reader);
    return reader;
  };
  const put = (board: string, body: object) =>
    http()
      .put(`/admin/boards/${board}`)
      .set(ADMIN)
      .send({ windows: [{ name: 'h', period: '1h', interval: '1m' }], ...body });
  const votes = (board: string, metric: string, items: Array<[string, number]>) =>
    http()
      .post(`/boards/${board}/increments`)
      .send({ items: items.map(([item, amount]) => ({ item, amount, metric })) })
      .expect(200);
  const topOf = async (path: string): Promise<Row[]> => (await http().get(path).expect(200)).body.items;
  const latest = (reader: SseReader) => {
    const frames = reader.events.filter((event) => event.event === 'snapshot' || event.event === 'top');
    return JSON.parse(frames[frames.length - 1].data!) as LiveListing;
  };

  it('ranks snapshot and top frames by ?metric=, rows carry metrics, and two metrics are two watches', async () => {
    await put('sm', { shards: 3, metrics: ['up', 'down', 'meh'] }).expect(201);
    await votes('sm', 'up', [
      ['a', 5],
      ['b', 1],
      ['c', 3],
    ]);
    await votes('sm', 'down', [
      ['b', 9],
      ['c', 2],
    ]);
    const down = await open('sm', '?window=h&limit=3&metric=down');
    const plain = await open('sm', '?window=h&limit=3');
    await Promise.all([down.waitFor(1), plain.waitFor(1)]);
    const [snapshot] = down.named<LiveListing>('snapshot');
    expect(snapshot).toMatchObject({ board: 'sm', window: 'h', metric: 'down' });
    expect(snapshot.items).toEqual(await topOf('/boards/sm/top?window=h&limit=3&metric=down'));
    expect(snapshot.items.map((row) => [row.item, row.score])).toEqual([
      ['b', 9],
      ['c', 2],
    ]);
    expect((snapshot.items[0] as Row).metrics).toEqual({ up: 1, down: 9, meh: 0 });
    expect(plain.named<LiveListing>('snapshot')[0]).not.toHaveProperty('metric');
    expect(latest(plain).items.map((row) => row.item)).toEqual(['a', 'c', 'b']);
    expect((latest(plain).items[0] as Row).metrics).toEqual({ up: 5, down: 0, meh: 0 });

    // A down vote moves the down stream's rows only: its watch is its own.
    await votes('sm', 'down', [['a', 20]]);
    await e2e.app().get(LiveHub).tick();
    await down.waitFor(2);
    const [top] = down.named<LiveListing>('top');
    expect(top).toMatchObject({ metric: 'down' });
    expect(top.items).toEqual(await topOf('/boards/sm/top?window=h&limit=3&metric=down'));
    expect(top.items.map((row) => [row.item, row.rank, row.score])).toEqual([
      ['a', 1, 20],
      ['b', 2, 9],
      ['c', 3, 2],
    ]);
    // The plain stream's rows kept their order; its metrics changed, so it gets a frame saying so.
    await plain.waitFor(2);
    expect(latest(plain).items.map((row) => [row.item, (row as Row).metrics?.down])).toEqual([
      ['a', 20],
      ['c', 2],
      ['b', 9],
    ]);
  });

  it('ranks a perGroup stream and GET top?perGroup= by ?metric=, rows with metrics', async () => {
    await put('smg', { shards: 3, metrics: ['up', 'down'], groups: true }).expect(201);
    const events = [
      { item: 'a', amount: 5, group: 'g1' },
      { item: 'b', amount: 1, group: 'g1' },
      { item: 'c', amount: 2, group: 'g2' },
    ];
    await http().post('/boards/smg/increments').send({ items: events }).expect(200);
    await votes('smg', 'down', [
      ['b', 7],
      ['c', 1],
    ]);
    const expected = [
      { rank: 1, item: 'b', score: 7, group: 'g1', previousRank: null, metrics: { up: 1, down: 7 } },
      { rank: 2, item: 'c', score: 1, group: 'g2', previousRank: null, metrics: { up: 2, down: 1 } },
    ];
    expect(await topOf('/boards/smg/top?window=h&perGroup=1&metric=down')).toEqual(expected);
    const stream = await open('smg', '?window=h&perGroup=1&metric=down');
    await stream.waitFor(1);
    expect(stream.named<LiveListing>('snapshot')[0].items).toEqual(expected);
  });

  it('refuses an unknown metric, and any metric on a board without metrics, with 400 UNKNOWN_METRIC like top', async () => {
    await put('smu', { metrics: ['up', 'down'] }).expect(201);
    await put('smp', {}).expect(201);
    for (const [board, metric] of [
      ['smu', 'sideways'],
      ['smp', 'up'],
    ]) {
      const top = await http().get(`/boards/${board}/top?metric=${metric}`).expect(400);
      const stream = await http().get(`/boards/${board}/stream?metric=${metric}`).expect(400);
      expect(stream.body).toMatchObject({ code: 'UNKNOWN_METRIC', message: top.body.message });
      await http().head(`/boards/${board}/stream?metric=${metric}`).expect(400);
    }
    expect((await http().get('/boards/smu/stream?metric=Up!').expect(400)).body.code).toBe('INVALID_INPUT');
    expect(e2e.app().get(LiveHub).clients).toBe(0);
  });
}

describe('stream ?metric= (one Redis)', () => {
  const e2e = useSingleNodeApp({ startMs: T0, env: { STREAM_COALESCE_MS: '60000' }, fresh: true });
  streamMetrics(e2e);
});

describe('stream ?metric= (Cluster)', () => {
  const e2e = useClusterApp({ startMs: T0, env: { STREAM_COALESCE_MS: '60000' }, fresh: true });
  streamMetrics(e2e);
});
