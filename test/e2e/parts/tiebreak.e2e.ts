import { ADMIN, createBoard } from '../../../harness/app';
import { LiveHub } from '../../../src/live/live-hub';
import { boardPut, T0, useSingleNodeApp } from '../../support/e2e';
import { listen, SseReader, waitUntil } from '../../support/sse';

const WINDOWS = [{ name: 'h', period: '1h', interval: '1m' }];

describe('tiebreak over HTTP', () => {
  const { app, http, clock } = useSingleNodeApp({ startMs: T0, fresh: true });
  const put = boardPut(http, WINDOWS);
  /** The app's address once it listens (the stream's test starts it, once). */
  let base: string | undefined;
  const send = (board: string, item: string, body: object) =>
    http()
      .post(`/boards/${board}/items/${encodeURIComponent(item)}/score`)
      .send(body);
  const score = send;
  const rows = async (path: string) =>
    (await http().get(path).expect(200)).body.items.map(
      (row: { item: string; rank: number; score: number; tiebreak?: number }) => [
        row.item,
        row.rank,
        row.score,
        row.tiebreak,
      ],
    );

  it.each([
    [{ tiebreak: { order: 'sideways' }, aggregate: 'max' }, /tiebreak must be an object like/],
    [{ tiebreak: 'desc', aggregate: 'max' }, /tiebreak must be an object like/],
    [{ tiebreak: { order: 'desc', extra: 1 }, aggregate: 'max' }, /tiebreak must be an object like/],
    [{ tiebreak: null, aggregate: 'max' }, /tiebreak/],
    [{ tiebreak: { order: 'desc' } }, /tiebreak orders recorded pairs: board "bad" aggregates by sum/],
  ])('refuses %j with 400 INVALID_INPUT', async (body, message) => {
    const answer = await put('bad', body).expect(400);
    expect(answer.body.code).toBe('INVALID_INPUT');
    expect(answer.body.message).toMatch(message);
    await http().get('/boards/bad').expect(404);
  });

  it('a change of tiebreak drops the data, so it needs ?reset=true', async () => {
    await put('kept', { aggregate: 'max', shards: 3 }).expect(201);
    await score('kept', 'a', { score: 3 }).expect(200);
    expect((await put('kept', { tiebreak: { order: 'asc' } }).expect(409)).body.message).toMatch(/tiebreak/);
    await put('kept', { tiebreak: { order: 'asc' } }, '?reset=true').expect(200);
    expect((await http().get('/boards/kept').expect(200)).body).toMatchObject({ tiebreak: { order: 'asc' } });
    await put('kept', {}).expect(200); // omitted: kept
    expect((await http().get('/boards/kept').expect(200)).body).toMatchObject({ tiebreak: { order: 'asc' } });
    expect(await rows('/boards/kept/top')).toEqual([]);
    // Its marks follow the board's order: a change of order drops them too, on every shard.
    for (const item of ['a', 'b', 'c', 'd', 'e', 'f']) await score('kept', item, { score: 3, tiebreak: 1 }).expect(200);
    expect((await put('kept', { order: 'asc' }).expect(409)).body.message).toMatch(/order would change/);
    await put('kept', { order: 'asc' }, '?reset=true').expect(200);
    expect((await http().get('/boards/kept').expect(200)).body).toMatchObject({
      order: 'asc',
      tiebreak: { order: 'asc' },
    });
    expect(await rows('/boards/kept/top')).toEqual([]);
  });

  it.each([1, 3])('%i shard(s): a speedrun board lists the lowest time, then the earliest date', async (shards) => {
    const name = `speedrun${shards}`;
    const tiebreak = { order: 'asc' };
    await createBoard(app(), name, { windows: WINDOWS, aggregate: 'min', order: 'asc', tiebreak, shards });
    await score(name, 'ann', { score: 61_234, tiebreak: 20_251_103 }).expect(200);
    await score(name, 'bob', { score: 59_876, tiebreak: 20_251_105 }).expect(200);
    await score(name, 'cid', { score: 59_876, tiebreak: 20_251_101 }).expect(200);
    await score(name, 'dee', { score: 59_876, tiebreak: 20_251_101 }).expect(200);
    // min keeps the better pair: the same time dated later changes nothing, an earlier date moves ahead.
    expect(
      (await score(name, 'bob', { score: 59_876, tiebreak: 20_251_109 }).expect(200)).body.windows.h,
    ).toMatchObject({ score: 59_876, rank: 3, tiebreak: 20_251_105 });
    const ann = await score(name, 'ann', { score: 61_234, tiebreak: 20_251_102 }).expect(200);
    expect(ann.body.windows.h).toMatchObject({ score: 61_234, rank: 4, tiebreak: 20_251_102 });
    const expected = [
      ['cid', 1, 59_876, 20_251_101],
      ['dee', 1, 59_876, 20_251_101],
      ['bob', 3, 59_876, 20_251_105],
      ['ann', 4, 61_234, 20_251_102],
    ];
    expect(await rows(`/boards/${name}/top`)).toEqual(expected);
    expect(await rows(`/boards/${name}/items/bob/around?radius=1`)).toEqual(expected.slice(1, 4));
    expect((await http().get(`/boards/${name}/items/bob`).expect(200)).body).toMatchObject({
      rank: 3,
      tiebreak: 20_251_105,
    });
    const rank = async (query: string) => (await http().get(`/boards/${name}/rank?${query}`).expect(200)).body.rank;
    expect(await rank('score=59876&tiebreak=20251104')).toBe(3);
    expect(await rank('score=59876&tiebreak=20251106')).toBe(4);
    expect(await rank('score=60000&tiebreak=1')).toBe(4);
    await http().delete(`/admin/boards/${name}`).set(ADMIN).expect(204);
  });

  it.each([1, 3])('%i shard(s): most points, then the fastest time, then whoever got there first', async (shards) => {
    const name = `cup${shards}`;
    // A ms apart: across shards who got there first is known to the millisecond.
    const score = (board: string, item: string, body: object) => {
      clock.advanceMs(1);
      return send(board, item, body);
    };
    const board = { windows: WINDOWS, aggregate: 'max', tiebreak: { order: 'asc' }, ties: 'first', shards };
    await createBoard(app(), name, board);
    expect((await http().get(`/boards/${name}`).expect(200)).body).toMatchObject({
      ties: 'first',
      tiebreak: { order: 'asc' },
    });
    await score(name, 'ann', { score: 10, tiebreak: 50 }).expect(200);
    await score(name, 'bob', { score: 10, tiebreak: 50 }).expect(200);
    await score(name, 'cid', { score: 10, tiebreak: 40 }).expect(200);
    const eve = await score(name, 'eve', { score: 10, tiebreak: 50 }).expect(200);
    expect(eve.body.windows.h).toMatchObject({ rank: 4, tiebreak: 50 });
    await score(name, 'dee', { score: 8, tiebreak: 1 }).expect(200);
    // ann improves her time to bob's: she reached that pair first, she keeps ahead of bob.
    await score(name, 'bob', { score: 10, tiebreak: 45 }).expect(200);
    await score(name, 'ann', { score: 10, tiebreak: 45 }).expect(200);
    const expected = [
      ['cid', 1, 10, 40],
      ['bob', 2, 10, 45],
      ['ann', 3, 10, 45],
      ['eve', 4, 10, 50],
      ['dee', 5, 8, 1],
    ];
    expect(await rows(`/boards/${name}/top`)).toEqual(expected);
    expect(await rows(`/boards/${name}/top?offset=1&limit=2`)).toEqual(expected.slice(1, 3));
    expect(await rows(`/boards/${name}/items/ann/around?radius=1`)).toEqual(expected.slice(1, 4));
    const ann = (await http().get(`/boards/${name}/items/ann`).expect(200)).body;
    expect(ann).toMatchObject({ rank: 3, tiebreak: 45, percentile: 50 });
    const looked = await http()
      .post(`/boards/${name}/lookup`)
      .send({ items: ['eve', 'bob'] })
      .expect(200);
    expect(looked.body.items.map((row: { rank: number }) => row.rank)).toEqual([4, 2]);
    const rank = async (query: string) => (await http().get(`/boards/${name}/rank?${query}`).expect(200)).body.rank;
    // A record reaching a held pair now comes after those who reached it first.
    expect(await rank('score=10&tiebreak=45')).toBe(4);
    expect(await rank('score=10&tiebreak=44')).toBe(2);
    expect(await rank('score=9&tiebreak=0')).toBe(5);
    // The live stream lists the same strict order.
    base ??= await listen(app());
    const reader = await SseReader.open(`${base}/boards/${name}/stream`);
    try {
      await reader.waitFor(1);
      const [first] = reader.named<{ items: Array<{ item: string; rank: number }> }>('snapshot');
      expect(first.items.map((row) => [row.item, row.rank])).toEqual(expected.map(([item, rank]) => [item, rank]));
    } finally {
      reader.close();
      await waitUntil(() => app().get(LiveHub).clients === 0);
    }
    await http().delete(`/admin/boards/${name}`).set(ADMIN).expect(204);
  });

  it.each([1, 3])(
    '%i shard(s): perGroup pages, queries and the stream with perGroup rank the pairs; the distribution is exact',
    async (shards) => {
      const name = `league${shards}`;
      const board = { windows: WINDOWS, aggregate: 'max', tiebreak: { order: 'asc' }, groups: true, shards };
      await createBoard(app(), name, board);
      // One score for all but dee: only the tiebreaks (the lower wins) tell the rows apart.
      const records = [
        { item: 'ann', score: 10, tiebreak: 30, group: 'red' },
        { item: 'bob', score: 10, tiebreak: 10, group: 'red' },
        { item: 'cid', score: 10, tiebreak: 20, group: 'blue' },
        { item: 'dee', score: 12, tiebreak: 90, group: 'red' },
        { item: 'eve', score: 10, tiebreak: 20, group: 'blue' },
        { item: 'fay', score: 10, tiebreak: 5 },
      ];
      await http().post(`/boards/${name}/increments`).send({ items: records }).expect(200);
      const all = [
        ['dee', 1, 12, 90],
        ['fay', 2, 10, 5],
        ['bob', 3, 10, 10],
        ['eve', 4, 10, 20],
        ['cid', 4, 10, 20],
        ['ann', 6, 10, 30],
      ];
      expect(await rows(`/boards/${name}/top`)).toEqual(all);
      const perGroup1 = [all[0], all[1], all[3]];
      expect(await rows(`/boards/${name}/top?perGroup=1`)).toEqual(perGroup1);
      const query = { perGroup: 2, exclude: { items: ['fay'], groups: ['blue'] } };
      const queried = await http().post(`/boards/${name}/query`).send(query).expect(200);
      expect(
        queried.body.items.map((row: { item: string; rank: number; tiebreak: number }) => [
          row.item,
          row.rank,
          row.tiebreak,
        ]),
      ).toEqual([
        ['dee', 1, 90],
        ['bob', 3, 10],
      ]);
      base ??= await listen(app());
      const reader = await SseReader.open(`${base}/boards/${name}/stream?perGroup=1`);
      try {
        await reader.waitFor(1);
        const [first] = reader.named<{ items: Array<{ item: string; rank: number; score: number; tiebreak: number }> }>(
          'snapshot',
        );
        expect(first.items.map((row) => [row.item, row.rank, row.score, row.tiebreak])).toEqual(perGroup1);
        // A better time for ann, still 10 points: she moves ahead of bob and eve (red's row stays dee's),
        // so eve's board rank is 5 now.
        await score(name, 'ann', { score: 10, tiebreak: 7 }).expect(200);
        await app().get(LiveHub).tick();
        await waitUntil(() => reader.named('top').length > 0);
        const [next] = reader.named<{ items: Array<{ item: string; rank: number; score: number; tiebreak: number }> }>(
          'top',
        );
        expect(next.items.map((row) => [row.item, row.rank, row.score, row.tiebreak])).toEqual([
          all[0],
          all[1],
          ['eve', 5, 10, 20],
        ]);
      } finally {
        reader.close();
        await waitUntil(() => app().get(LiveHub).clients === 0);
      }
      // Buckets and quantiles are scores: the tiebreaks order equal scores, they change no count.
      const spread = (await http().get(`/boards/${name}/distribution?buckets=2`).expect(200)).body;
      expect(spread).toMatchObject({
        count: 6,
        min: 10,
        max: 12,
        buckets: [
          { from: 10, to: 11, count: 5 },
          { from: 11, to: 12, count: 1 },
        ],
        quantiles: { p10: 10, p25: 10, p50: 10, p75: 10, p90: 12, p99: 12 },
      });
      await http().delete(`/admin/boards/${name}`).set(ADMIN).expect(204);
    },
  );

  it('an item retraction is refused on a tiebreak board (a sum board only): no archive being written loses a row', async () => {
    const windows = [{ name: 'day', calendar: 'day', archive: { keep: 2, top: 10 } }];
    await createBoard(app(), 'tbret', { windows, aggregate: 'max', tiebreak: { order: 'asc' }, ties: 'first' });
    await score('tbret', 'a', { score: 3, tiebreak: 1 }).expect(200);
    const refused = await http().post('/admin/boards/tbret/retractions').set(ADMIN).send({ item: 'a' }).expect(400);
    expect(refused.body.message).toMatch(/retractions need a sum board/);
    await http().delete('/admin/boards/tbret').set(ADMIN).expect(204);
  });

  it('a leagues board takes no tiebreak, with ties first or not (leagues need a sum board)', async () => {
    const leagues = { window: 'day', size: 3, tiers: ['bronze', 'silver'], promote: 1, relegate: 1 };
    const windows = [{ name: 'day', calendar: 'day' }];
    for (const ties of ['shared', 'first']) {
      const body = { windows, aggregate: 'max', tiebreak: { order: 'asc' }, ties, leagues };
      const refused = await http().put('/admin/boards/tbleague').set(ADMIN).send(body).expect(400);
      expect(refused.body.message).toMatch(/leagues need aggregate sum/);
    }
    await http().get('/boards/tbleague').expect(404);
  });

  it('a tiebreak is refused on a board without one, and out of range', async () => {
    await createBoard(app(), 'plain', { windows: WINDOWS, aggregate: 'max' });
    const refused = await score('plain', 'a', { score: 1, tiebreak: 2 }).expect(400);
    expect(refused.body.message).toMatch(/declares no tiebreak/);
    const batch = { items: [{ item: 'a', score: 1, tiebreak: 2 }] };
    await http().post('/boards/plain/increments').send(batch).expect(400);
    await createBoard(app(), 'tb', { windows: WINDOWS, aggregate: 'max', tiebreak: { order: 'desc' } });
    await score('tb', 'a', { score: 1, tiebreak: 1_000_000_000_000_001 }).expect(400);
    await score('tb', 'a', { score: 1, tiebreak: 1.5 }).expect(400);
  });

  it.each([1, 3])('%i shard(s): rows, writes, lookups and ranks carry and order the pairs', async (shards) => {
    const name = `race${shards}`;
    await createBoard(app(), name, { windows: WINDOWS, aggregate: 'max', tiebreak: { order: 'asc' }, shards });
    // Points first, then the earlier finish (a lower tiebreak) wins.
    expect((await score(name, 'ann', { score: 10, tiebreak: 300 }).expect(200)).body.windows.h).toMatchObject({
      score: 10,
      rank: 1,
      tiebreak: 300,
    });
    await score(name, 'bob', { score: 10, tiebreak: 200 }).expect(200);
    await score(name, 'cid', { score: 10, tiebreak: 200 }).expect(200);
    await score(name, 'dee', { score: 12 }).expect(200); // tiebreak 0
    // max keeps the better pair: an equal score with a worse tiebreak changes nothing.
    const kept = await score(name, 'ann', { score: 10, tiebreak: 900 }).expect(200);
    expect(kept.body.windows.h).toMatchObject({ score: 10, rank: 4, tiebreak: 300 });
    const batch = { items: [{ item: 'eve', score: 10, tiebreak: -5 }] };
    await http().post(`/boards/${name}/increments`).send(batch).expect(200);
    const expected = [
      ['dee', 1, 12, 0],
      ['eve', 2, 10, -5],
      ['cid', 3, 10, 200],
      ['bob', 3, 10, 200],
      ['ann', 5, 10, 300],
    ];
    expect(await rows(`/boards/${name}/top`)).toEqual(expected);
    expect(await rows(`/boards/${name}/top?offset=2&limit=2`)).toEqual(expected.slice(2, 4));
    expect(await rows(`/boards/${name}/items/bob/around?radius=1`)).toEqual(expected.slice(2, 5));
    const bob = (await http().get(`/boards/${name}/items/bob`).expect(200)).body;
    expect(bob).toMatchObject({ score: 10, rank: 3, tiebreak: 200 });
    const looked = await http()
      .post(`/boards/${name}/lookup`)
      .send({ items: ['ann', 'cid'] })
      .expect(200);
    expect(looked.body.items.map((row: { rank: number; tiebreak: number }) => [row.rank, row.tiebreak])).toEqual([
      [5, 300],
      [3, 200],
    ]);
    const rank = async (query: string) => (await http().get(`/boards/${name}/rank?${query}`).expect(200)).body.rank;
    expect(await rank('score=10&tiebreak=200')).toBe(3);
    expect(await rank('score=10&tiebreak=199')).toBe(3);
    expect(await rank('score=10&tiebreak=201')).toBe(5);
    expect(await rank('score=10')).toBe(3); // tiebreak 0: behind dee and eve's -5 only
    expect(await rank('score=11&tiebreak=5')).toBe(2);
    await http().delete(`/admin/boards/${name}`).set(ADMIN).expect(204);
  });
});
