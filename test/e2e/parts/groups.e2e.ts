import { ADMIN, createBoard } from '../../../harness/app';
import { T0, useSingleNodeApp } from '../../support/e2e';

const WINDOWS = [{ name: 'h', period: '1h', interval: '1m' }];

type Row = { item: string; rank: number; score: number; group?: string };

describe('item groups over HTTP: groups, perGroup, POST .../query', () => {
  const { app, http, clock } = useSingleNodeApp({ startMs: T0, fresh: true });
  const add = (board: string, item: string, amount: number, group?: string) =>
    http()
      .post(`/boards/${board}/items/${encodeURIComponent(item)}/increment`)
      .send({ amount, ...(group === undefined ? {} : { group }) })
      .expect(200);
  const rowsOf = (items: Row[]) => items.map((row) => [row.item, row.rank, row.score, row.group ?? null]);
  const top = async (board: string, query: string) =>
    rowsOf((await http().get(`/boards/${board}/top?${query}`).expect(200)).body.items);
  const query = async (board: string, body: object) =>
    (await http().post(`/boards/${board}/query`).send(body).expect(200)).body;

  it.each([1, 3])('%i shard(s): rows carry groups, perGroup caps a group and keeps board ranks', async (shards) => {
    const board = `g${shards}`;
    await createBoard(app(), board, { windows: WINDOWS, groups: true, shards });
    expect((await http().get(`/boards/${board}`).expect(200)).body).toMatchObject({ groups: true });
    await add(board, 'a1', 10, 'alice');
    await add(board, 'a2', 9, 'alice');
    await add(board, 'a3', 8, 'alice');
    await add(board, 'b1', 7, 'bob');
    await add(board, 'n1', 6);
    await http()
      .post(`/boards/${board}/increments`)
      .send({
        items: [
          { item: 'b2', amount: 5, group: 'bob' },
          { item: 'a3', amount: 1, group: 'bob' },
        ],
      })
      .expect(200);
    // a3 moved to bob (the latest group named), with 9 it ties a2.
    expect(await top(board, 'limit=10')).toEqual([
      ['a1', 1, 10, 'alice'],
      ['a3', 2, 9, 'bob'],
      ['a2', 2, 9, 'alice'],
      ['b1', 4, 7, 'bob'],
      ['n1', 5, 6, null],
      ['b2', 6, 5, 'bob'],
    ]);
    expect(await top(board, 'perGroup=1&limit=10')).toEqual([
      ['a1', 1, 10, 'alice'],
      ['a3', 2, 9, 'bob'],
      ['n1', 5, 6, null],
    ]);
    expect(await top(board, 'perGroup=1&limit=1&offset=1')).toEqual([['a3', 2, 9, 'bob']]);
    // Every write landed in the current slot: a one-slot span caps groups over that slot alike.
    expect(await top(board, 'perGroup=1&limit=10&span=1m')).toEqual(await top(board, 'perGroup=1&limit=10'));
    expect((await http().get(`/boards/${board}/items/b2`).expect(200)).body).toMatchObject({ group: 'bob', rank: 6 });
    const page = await query(board, { exclude: { items: ['a1'], groups: ['bob'] }, limit: 10 });
    expect(rowsOf(page.items)).toEqual([
      ['a2', 2, 9, 'alice'],
      ['n1', 5, 6, null],
    ]);
    expect(page).toMatchObject({ board, window: 'h', truncated: false });
    // Every write landed in the current slot: a one-slot span lists the same page, over that slot.
    const spanned = await query(board, { span: '1m', exclude: { items: ['a1'], groups: ['bob'] }, limit: 10 });
    expect(rowsOf(spanned.items)).toEqual(rowsOf(page.items));
    expect(Number(spanned.to) - Number(spanned.from)).toBe(60);
    expect(rowsOf((await query(board, { perGroup: 2, exclude: { items: ['a2'] } })).items)).toEqual([
      ['a1', 1, 10, 'alice'],
      ['a3', 2, 9, 'bob'],
      ['b1', 4, 7, 'bob'],
      ['n1', 5, 6, null],
    ]);
  });

  it('a group leaves with its item: an item taken to 0 loses its group', async () => {
    await createBoard(app(), 'gone', { windows: WINDOWS, groups: true });
    await add('gone', 'x', 2, 'carol');
    await add('gone', 'x', -2);
    await add('gone', 'x', 1);
    expect(await top('gone', '')).toEqual([['x', 1, 1, null]]);
  });

  it.each([
    ['/boards/plain/items/i/increment', { amount: 1, group: 'g' }, /group: board "plain" keeps no groups/],
    ['/boards/plain/increments', { items: [{ item: 'i', group: 'g' }] }, /items\.0\.group: board "plain"/],
    ['/boards/plain/query', { perGroup: 2 }, /perGroup: board "plain" keeps no groups/],
    ['/boards/plain/query', { span: '90s' }, /span 90s .*multiple/],
    ['/boards/plain/query', { span: 'soon' }, /span must be a duration/],
    ['/boards/plain/query', { minActors: 2 }, /minActors: board "plain" keeps no actors/],
    ['/boards/plain/query', { minActors: 1001 }, /minActors/],
    ['/boards/plain/query', { limit: 600, offset: 500 }, /lists at most 1000 deep/],
    ['/boards/plain/query', { exclude: { items: Array.from({ length: 1001 }, (_, i) => `i${i}`) } }, /more than 1000/],
    ['/boards/plain/query', { exclude: { groups: [''] } }, /exclude\.groups/],
    ['/boards/plain/query', { perGroup: 101 }, /perGroup/],
  ])('POST %s %j: 400 INVALID_INPUT', async (path, body, message) => {
    await createBoard(app(), 'plain', { windows: WINDOWS });
    const answer = await http().post(path).send(body).expect(400);
    expect(answer.body.code).toBe('INVALID_INPUT');
    expect(answer.body.message).toMatch(message);
  });

  it('refuses perGroup out of 1-100 and on a board without groups; a span of a view is a 400', async () => {
    await createBoard(app(), 'plain', { windows: WINDOWS });
    for (const q of ['perGroup=0', 'perGroup=101', 'perGroup=1'])
      expect((await http().get(`/boards/plain/top?${q}`).expect(400)).body.code).toBe('INVALID_INPUT');
    await http()
      .put('/admin/boards/v')
      .set(ADMIN)
      .send({ windows: WINDOWS, groups: true, views: [{ name: 'hot', mode: 'hot', window: 'h' }] })
      .expect(201);
    const items = [
      { item: 'p1', amount: 3, group: 'ann' },
      { item: 'p2', amount: 2, group: 'ann' },
      { item: 'p3', amount: 1, group: 'bob' },
    ];
    await http().post('/boards/v/increments').send({ items }).expect(200);
    const hot = (await http().get('/boards/v/top?perGroup=1&window=hot').expect(200)).body;
    expect(hot.items.map((row: { item: string; group: string }) => [row.item, row.group])).toEqual([
      ['p1', 'ann'],
      ['p3', 'bob'],
    ]);
    const onView = await http().post('/boards/v/query').send({ window: 'hot', span: '10m', minActors: 1 }).expect(400);
    expect(onView.body.message).toMatch(/span applies to rolling windows; "hot" is a view/);
  });

  it('span with minActors counts the distinct actors of the span only (POST query and GET top)', async () => {
    await createBoard(app(), 'acted', { windows: WINDOWS, actors: true, groups: true, segments: { max: 2 } });
    const send = (items: object[]) => http().post('/boards/acted/increments').send({ items }).expect(200);
    // Two actors on `old` 20 minutes ago; now one of them again and a third, and two on `new`.
    await send([
      { item: 'old', amount: 5, actor: 'ann' },
      { item: 'old', amount: 5, actor: 'bob' },
    ]);
    clock.advanceMs(20 * 60_000);
    await send([
      { item: 'old', amount: 1, actor: 'ann' },
      { item: 'new', amount: 2, actor: 'cy', group: 'g', segments: ['en'] },
      { item: 'new', amount: 1, actor: 'dan' },
      { item: 'old', amount: 1, actor: 'eve', segments: ['en'] },
    ]);
    const page = await query('acted', { span: '10m', minActors: 2 });
    expect(page).toMatchObject({ window: 'h', truncated: false });
    expect(rowsOf(page.items)).toEqual([
      ['new', 1, 3, 'g'],
      ['old', 2, 2, null],
    ]);
    expect(await top('acted', 'span=10m&minActors=2&perGroup=1')).toEqual(rowsOf(page.items));
    // bob's event is in the window, not in the span.
    expect((await query('acted', { span: '10m', minActors: 3 })).items).toEqual([]);
    expect(rowsOf((await query('acted', { minActors: 3 })).items)).toEqual([['old', 1, 12, null]]);
    // A segment's span counts the actors of the segment's events only.
    const segment = await query('acted', { segment: 'en', span: '10m', minActors: 1 });
    expect(rowsOf(segment.items)).toEqual([
      ['new', 1, 2, 'g'],
      ['old', 2, 1, null],
    ]);
    expect((await query('acted', { segment: 'en', span: '10m', minActors: 2 })).items).toEqual([]);
  });
});
