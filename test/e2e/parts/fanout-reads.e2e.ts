import { LiveHub } from '../../../src/live/live-hub';
import { RankingService } from '../../../src/ranking/ranking.service';
import { LOOKUP_IDS_PER_CALL } from '../../../src/ranking/core/ranking.limits';
import { ADMIN, createBoard } from '../../../harness/app';
import { T0, useSingleNodeApp } from '../../support/e2e';
import { listen, SseReader, waitUntil } from '../../support/sse';

/** Ids spread over every shard of a board (by hash), named so that a test can ask for n of them. */
const ids = (n: number, prefix = 'i') => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

describe('a lookup is charged by its cost and capped per request (issue 45 row 5)', () => {
  // 100 reads a second: a lookup of 90 ids with board ranks on 64 shards counts 5 760, 29 reads.
  const e2eApp = useSingleNodeApp({
    startMs: T0,
    fresh: true,
    env: { READ_RATE_LIMIT_PER_SEC: '100', READ_RATE_LIMIT_BURST: '100' },
  });
  const { app, clock, http } = e2eApp;
  const lookup = (body: object) => http().post('/boards/wide/lookup').send(body);
  // Each test reads at a time of its own, past the read budget's 10 s of the one before (fresh sets
  // the clock back to T0 before each).
  let testStartSec = 0;

  beforeEach(async () => {
    await createBoard(app(), 'wide', { windows: [{ name: 'h', period: '1h', interval: '1m' }], shards: 64 });
    await http()
      .post('/boards/wide/increments')
      .send({ items: ids(100).map((item, i) => ({ item, amount: 1 + (i % 7) })) })
      .expect(200);
    testStartSec += 20;
    clock.advanceSec(testStartSec);
  });

  it('spends ids x shards / 200 reads of the budget: the fourth lookup of 90 ids on 64 shards is a 429', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await lookup({ items: ids(90) })).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
  });

  it(`spends a read per call: on one shard 1 000 ids are ${1000 / LOOKUP_IDS_PER_CALL} calls of ${LOOKUP_IDS_PER_CALL}, the read budget (100) takes ${100 / (1000 / LOOKUP_IDS_PER_CALL)} such lookups`, async () => {
    await createBoard(app(), 'one', { windows: [{ name: 'h', period: '1h', interval: '1m' }] });
    const statuses: number[] = [];
    const answered = 100 / (1000 / LOOKUP_IDS_PER_CALL);
    for (let i = 0; i <= answered; i++)
      statuses.push(
        (
          await http()
            .post('/boards/one/lookup')
            .send({ items: ids(1000) })
        ).status,
      );
    expect(statuses).toEqual([...Array.from({ length: answered }, () => 200), 429]);
  });

  it("spends a read per metric count call (#50): 90 ids on 64 shards with metrics, 13 lookup calls and each shard's counts", async () => {
    const board = { windows: [{ name: 'h', period: '1h', interval: '1m' }], shards: 64, metrics: ['up', 'down'] };
    await createBoard(app(), 'counted', board);
    // 5 760 counts are 29 reads, with the metric calls of the ~50 shards holding the ids more than 50.
    const statuses: number[] = [];
    for (let i = 0; i < 2; i++)
      statuses.push(
        (
          await http()
            .post('/boards/counted/lookup')
            .send({ items: ids(90) })
        ).status,
      );
    expect(statuses).toEqual([200, 429]);
  });

  it("spends a read per other shard on an item's history (#49): on 64 shards the second is a 429", async () => {
    const kept = { name: 'h', period: '1h', interval: '1m', snapshots: { keep: 10, top: 100 } };
    await createBoard(app(), 'kept', { windows: [kept], shards: 64 });
    await http()
      .post('/boards/kept/increments')
      .send({ items: ids(100).map((item) => ({ item, amount: 1 })) })
      .expect(200);
    // Past the boundary (a snapshot); the next test reads past this one's time.
    clock.advanceSec(60);
    testStartSec += 60;
    const read = () => http().get('/boards/kept/items/i7/history?window=h');
    const first = await read().expect(200);
    expect(first.body.points.map((point: { rank: number | null }) => point.rank)).toEqual([1]);
    expect((await read()).status).toBe(429);
  });

  it("spends a read per other metric on a window's history (#50): 3 metrics are 3 reads, the 34th of a budget of 100 a 429", async () => {
    const kept = { name: 'h', period: '1h', interval: '1m', snapshots: { keep: 10, top: 100 } };
    await createBoard(app(), 'tri', { windows: [kept], metrics: ['up', 'down', 'meh'] });
    for (const metric of ['up', 'down', 'meh'])
      await http().post('/boards/tri/items/a/increment').send({ amount: 2, metric }).expect(200);
    // Past the boundary (a snapshot); the next test reads past this one's time.
    clock.advanceSec(60);
    testStartSec += 60;
    const first = await http().get('/boards/tri/history?window=h').expect(200);
    expect(first.body.items).toEqual([{ rank: 1, item: 'a', score: 2, metrics: { up: 2, down: 2, meh: 2 } }]);
    const statuses: number[] = [];
    for (let i = 1; i < 34; i++) statuses.push((await http().get('/boards/tri/history?window=h')).status);
    expect(statuses).toEqual([...Array.from({ length: 32 }, () => 200), 429]);
  });

  it("spends a read per other metric's call on an archive page (#50): 3 metrics are 3 reads, the 34th of a budget of 100 a 429", async () => {
    const day = { name: 'd', calendar: 'day', archive: { keep: 3, top: 100 } };
    await createBoard(app(), 'triday', { windows: [day], metrics: ['up', 'down', 'meh'] });
    for (const metric of ['up', 'down', 'meh'])
      await http().post('/boards/triday/items/a/increment').send({ amount: 2, metric }).expect(200);
    clock.advanceSec(86_400);
    const first = await http().get('/boards/triday/archive?window=d').expect(200);
    expect(first.body.items).toEqual([{ rank: 1, item: 'a', score: 2, metrics: { up: 2, down: 2, meh: 2 } }]);
    const statuses: number[] = [];
    for (let i = 1; i < 34; i++) statuses.push((await http().get('/boards/triday/archive?window=d')).status);
    expect(statuses).toEqual([...Array.from({ length: 32 }, () => 200), 429]);
  });

  it('spends a read per settling call of a group board over a sharded member board (#48): on 64 shards the second top is a 429', async () => {
    await createBoard(app(), 'wide-teams', { groupOf: { board: 'wide', window: 'h', top: 2 } });
    for (const item of ids(3))
      await http().put(`/boards/wide-teams/members/red/${item}`).set('content-type', 'application/json').expect(204);
    // The first settles red (3 x 64 + 2 calls, charged up to the burst), the second names no dirty group (64 calls).
    const first = await http().get('/boards/wide-teams/top').expect(200);
    expect(first.body.items).toEqual([expect.objectContaining({ rank: 1, item: 'red', score: 5 })]);
    expect((await http().get('/boards/wide-teams/top')).status).toBe(429);
  });

  it.each([
    ['the rank of a score', () => http().get('/boards/wide-teams/rank?score=3')],
    ['the distribution', () => http().get('/boards/wide-teams/distribution')],
    [
      'a lookup',
      () =>
        http()
          .post('/boards/wide-teams/lookup')
          .send({ items: ['red'] }),
    ],
  ])('spends a read per settling call of such a group board in %s too: the second is a 429', async (_, read) => {
    await createBoard(app(), 'wide-teams', { groupOf: { board: 'wide', window: 'h', top: 2 } });
    for (const item of ids(3))
      await http().put(`/boards/wide-teams/members/red/${item}`).set('content-type', 'application/json').expect(204);
    const first = await read();
    expect(first.status).toBe(200);
    expect((await read()).status).toBe(429);
  });

  it('answers the right ranks when the counts are split over calls', async () => {
    const res = await lookup({ items: ids(90) }).expect(200);
    // amounts cycle 1..7 over 100 items: 14 items score 7 (i % 7 = 6), and so on down.
    const byScore = new Map<number, number>();
    for (let i = 0; i < 100; i++) byScore.set(1 + (i % 7), (byScore.get(1 + (i % 7)) ?? 0) + 1);
    const rankOf = (score: number) => 1 + [...byScore].filter(([s]) => s > score).reduce((sum, [, n]) => sum + n, 0);
    expect(res.body.items.map((row: { rank: number }) => row.rank)).toEqual(ids(90).map((_, i) => rankOf(1 + (i % 7))));
  });

  it('refuses a lookup past 6 000 counts with 422 REQUEST_TOO_COSTLY naming the most ids, charging nothing', async () => {
    const res = await lookup({ items: ids(200) }).expect(422);
    expect(res.body.code).toBe('REQUEST_TOO_COSTLY');
    expect(res.body.message).toMatch(/6000/);
    expect(res.body.message).toMatch(/at most 93 ids/);
    // relative ranks on a "ties": "shared" board count nothing across shards: 1 000 ids are 10 calls, 10 reads.
    await lookup({ items: ids(1000), relative: true }).expect(200);
  });

  it('weighs a count of a `ties: first` board 3 times: 32 ids on 64 shards are refused, 31 answered', async () => {
    const board = { windows: [{ name: 'h', period: '1h', interval: '1m' }], shards: 64, ties: 'first' };
    await createBoard(app(), 'strict', board);
    const refused = await http()
      .post('/boards/strict/lookup')
      .send({ items: ids(32) })
      .expect(422);
    expect(refused.body.message).toMatch(/at most 31 ids/);
    await http()
      .post('/boards/strict/lookup')
      .send({ items: ids(31) })
      .expect(200);
  });

  describe('with LOOKUP_COUNTS_PER_REQUEST raised to 64 000', () => {
    const raised = e2eApp.describeApp({ LOOKUP_COUNTS_PER_REQUEST: '64000', READ_RATE_LIMIT_PER_SEC: '0' });

    it('takes the 1 000 ids a lookup may name on 64 shards, and refuses past the raised bound', async () => {
      const items = [...ids(100), ...Array.from({ length: 900 }, (_, i) => `absent${i}`)];
      const answer = await raised.http().post('/boards/wide/lookup').send({ items }).expect(200);
      expect(answer.body.items).toHaveLength(1000);
      const strict = { windows: [{ name: 'h', period: '1h', interval: '1m' }], shards: 64, ties: 'first' };
      await createBoard(app(), 'strict2', strict);
      const refused = await raised
        .http()
        .post('/boards/strict2/lookup')
        .send({ items: ids(334) })
        .expect(422);
      expect(refused.body.message).toMatch(/at most 333 ids/);
    });
  });
});

describe('archives are read a page of rows at a time, cut inside Redis (issue 45 row 4)', () => {
  const DAY_SEC = 86_400;
  const DAY0 = Math.floor(T0 / 1000 / DAY_SEC) * DAY_SEC + DAY_SEC;
  const { app, clock, http } = useSingleNodeApp({
    startMs: (DAY0 + 3600) * 1000,
    fresh: true,
    env: { QUOTA_NEW_ITEMS: '0' },
  });
  /** Period `day`'s rows: 2 items share each score (ties across page ends), best first, competition ranks. */
  const model = (rows: number, day: number) =>
    Array.from({ length: rows }, (_, i) => ({ item: `d${day}-${i}`, score: rows - Math.floor(i / 2) }))
      .sort((a, b) => b.score - a.score || (a.item < b.item ? -1 : 1))
      .map((row, i) => ({ ...row, rank: 1 + i - (i % 2) })); // pairs share a score: the pair's first position
  type Row = { rank: number; item: string; score: number };
  /** Rows of one period compared as sets of equal-score runs: ties may list in any order. */
  const canonical = (rows: Row[]) => [...rows].sort((a, b) => a.rank - b.rank || (a.item < b.item ? -1 : 1));

  /** `days` periods of `rows` rows each on board `name`, then the clock past them and their archives taken. */
  const archiveDays = async (name: string, days: number, rows: number, shards = 1) => {
    await http()
      .put(`/admin/boards/${name}`)
      .set(ADMIN)
      .send({ windows: [{ calendar: 'day', archive: { keep: 30, top: 10_000 } }], shards })
      .expect(201);
    for (let day = 0; day < days; day++) {
      clock.setMs((DAY0 + day * DAY_SEC + 3600) * 1000);
      for (let first = 0; first < rows; first += 1000) {
        const items = model(rows, day)
          .slice(first, first + 1000)
          .map((row) => ({ item: row.item, amount: row.score }));
        await http().post(`/boards/${name}/increments`).send({ items }).expect(200);
      }
    }
    clock.setMs((DAY0 + days * DAY_SEC + 3600) * 1000);
    for (let round = 0; round < 1000; round++) {
      const { status } = await http().get(`/boards/${name}/archives?window=day&limit=1&items=1`);
      if (status === 200) return;
      await app().get(RankingService).expireDue({ leaseMs: 30_000, claimBatch: 10 });
    }
    throw new Error('the archives were not taken');
  };

  it('answers at most 20 000 rows a page (fewer periods, nextCursor on), and a period read in pages equals the whole', async () => {
    await archiveDays('arch', 3, 10_000);
    const first = await http().get('/boards/arch/archives?window=day&limit=30').expect(200);
    expect(first.body.periods.map((period: { items: Row[] }) => period.items.length)).toEqual([10_000, 10_000]);
    expect(first.body.nextCursor).toBe(first.body.periods[1].from);
    const rest = await http().get(`/boards/arch/archives?window=day&limit=30&cursor=${first.body.nextCursor}`);
    expect(rest.body.periods.map((period: { items: Row[] }) => period.items.length)).toEqual([10_000]);
    expect(rest.body.nextCursor).toBeNull();
    // Day 1 from `items` pages of /archives, then its nextOffset with /archive: the whole period.
    const paged = await http().get('/boards/arch/archives?window=day&limit=2&items=700').expect(200);
    const [newest, second] = paged.body.periods as Array<{ from: number; items: Row[]; nextOffset: number | null }>;
    expect([newest.items.length, newest.nextOffset, second.nextOffset]).toEqual([700, 700, 700]);
    const rows = [...second.items];
    for (let offset = second.nextOffset; offset !== null;) {
      const page = await http().get(`/boards/arch/archive?window=day&at=${second.from}&offset=${offset}&limit=999`);
      rows.push(...page.body.items);
      offset = page.body.nextOffset;
    }
    expect(canonical(rows)).toEqual(canonical(model(10_000, 1)));
  });

  it('a sharded board answers rows down to 20 000 over its shards; a deeper page is a 422 naming the bound', async () => {
    await archiveDays('sharch', 1, 3000, 8);
    const { body } = await http().get('/boards/sharch/archives?window=day').expect(200);
    expect([body.periods[0].items.length, body.periods[0].nextOffset]).toEqual([2500, 2500]);
    const rows = [...body.periods[0].items];
    expect(canonical(rows)).toEqual(canonical(model(3000, 0).slice(0, 2500)));
    const deep = await http().get('/boards/sharch/archive?window=day&offset=2400&limit=200').expect(422);
    expect(deep.body.code).toBe('REQUEST_TOO_COSTLY');
    expect(deep.body.message).toMatch(/20000 one read may: ask for rows above 2500/);
  });
});

describe('the streams of a board watch at most STREAM_MAX_SEGMENTS_PER_BOARD distinct segments (issue 45 row 7)', () => {
  const { app } = useSingleNodeApp({
    startMs: T0,
    env: { STREAM_COALESCE_MS: '60000', STREAM_MAX_SEGMENTS_PER_BOARD: '2' },
  });
  const readers: SseReader[] = [];
  let base = '';
  const open = async (path: string) => {
    const reader = await SseReader.open(`${base}${path}`);
    readers.push(reader);
    if (reader.response.statusCode === 200) await reader.waitFor(1);
    else await reader.waitForEnd();
    return reader;
  };
  const answerOf = (reader: SseReader) =>
    reader.response.statusCode === 200
      ? [200, 'stream']
      : [reader.response.statusCode, (JSON.parse(reader.text) as { code: string }).code];

  beforeAll(async () => {
    base = await listen(app());
    await createBoard(app(), 'seg', { windows: [{ name: 'h', period: '1h', interval: '1m' }], segments: { max: 100 } });
  });
  afterAll(async () => {
    for (const reader of readers.splice(0)) reader.close();
    await waitUntil(() => app().get(LiveHub).clients === 0);
  });

  it('refuses a third segment with 429 STREAM_SEGMENT_LIMIT; a watched segment and the whole board still open', async () => {
    const a = await open('/boards/seg/stream?segment=a');
    await open('/boards/seg/stream?segment=b');
    expect(answerOf(await open('/boards/seg/stream?segment=c'))).toEqual([429, 'STREAM_SEGMENT_LIMIT']);
    expect(answerOf(await open('/boards/seg/stream?segment=a'))).toEqual([200, 'stream']);
    expect(answerOf(await open('/boards/seg/stream'))).toEqual([200, 'stream']);
    // Once no stream watches `a` any more, another segment takes its place.
    a.close();
    readers[3].close();
    await waitUntil(() => app().get(LiveHub).clients === 2);
    expect(answerOf(await open('/boards/seg/stream?segment=c'))).toEqual([200, 'stream']);
  });
});

describe("the poller never reads a board's whole plan past a tick's budget (issue 45 row 7)", () => {
  const { app, http } = useSingleNodeApp({
    startMs: T0,
    env: { STREAM_COALESCE_MS: '60000', STREAM_MAX_SEGMENTS_PER_BOARD: '20' },
  });
  const readers: SseReader[] = [];
  afterAll(async () => {
    for (const reader of readers.splice(0)) reader.close();
    await waitUntil(() => app().get(LiveHub).clients === 0);
  });

  it('reads 3 of 20 segment groups of a 64-shard board a tick (64 x (1 + 3) = 256 commands), all in turn', async () => {
    const base = await listen(app());
    const hub = app().get(LiveHub);
    await createBoard(app(), 'many', {
      windows: [{ name: 'h', period: '1h', interval: '1m' }],
      shards: 64,
      segments: { max: 100 },
    });
    const segments = Array.from({ length: 20 }, (_, i) => `s${i}`);
    for (const segment of segments) {
      const reader = await SseReader.open(`${base}/boards/many/stream?segment=${segment}`);
      readers.push(reader);
      await reader.waitFor(1);
    }
    for (let first = 0; first < 20; first += 5) {
      await http()
        .post('/boards/many/items/x/increment')
        .send({ amount: 1, segments: segments.slice(first, first + 5) })
        .expect(200);
    }
    const tops = jest.spyOn(app().get(RankingService), 'top');
    const perTick: number[] = [];
    for (let tick = 0; tick < 7; tick++) {
      tops.mockClear();
      await hub.tick();
      perTick.push(tops.mock.calls.length);
    }
    tops.mockRestore();
    expect(perTick).toEqual([3, 3, 3, 3, 3, 3, 2]);
    await Promise.all(readers.map((reader) => reader.waitFor(2)));
    expect(readers.map((reader) => reader.named<{ items: unknown[] }>('top')[0].items.length)).toEqual(
      segments.map(() => 1),
    );
  });
});
