import { ADMIN } from '../../../harness/app';
import { T0, useSingleNodeApp } from '../../support/e2e';

const WINDOWS = [{ name: 'h', period: '1h', interval: '1m' }];
const VIEWS = [
  { name: 'people', mode: 'unique', window: 'h' },
  { name: 'hot', mode: 'hot', window: 'h' },
];

type Row = { item: string; rank: number; score: number };

describe('minActors over HTTP: top, POST .../query, views', () => {
  const { http } = useSingleNodeApp({ startMs: T0, fresh: true });
  const rowsOf = (items: Row[]) => items.map((row) => [row.item, row.rank, row.score]);
  const top = async (board: string, query: string) =>
    (await http().get(`/boards/${board}/top?${query}`).expect(200)).body;

  it.each([1, 3])('%i shard(s): only items with n distinct actors, board ranks kept', async (shards) => {
    const board = `ma${shards}`;
    await http()
      .put(`/admin/boards/${board}`)
      .set(ADMIN)
      .send({ windows: WINDOWS, views: VIEWS, actors: true, shards });
    const items = [
      { item: 'solo', amount: 30, actor: 'bot' },
      { item: 'three', amount: 4, actor: 'ann' },
      { item: 'three', amount: 3, actor: 'bob' },
      { item: 'three', amount: 3, actor: 'cy' },
      { item: 'two', amount: 6, actor: 'ann' },
      { item: 'two', amount: 5, actor: 'dan' },
      { item: 'none', amount: 1 },
    ];
    await http().post(`/boards/${board}/increments`).send({ items }).expect(200);
    const two = await top(board, 'window=h&minActors=2');
    expect(two).toMatchObject({ board, window: 'h', truncated: false });
    expect(rowsOf(two.items)).toEqual([
      ['two', 2, 11],
      ['three', 3, 10],
    ]);
    expect(rowsOf((await top(board, 'window=h&minActors=2&offset=1&limit=1')).items)).toEqual([['three', 3, 10]]);
    const page = (
      await http()
        .post(`/boards/${board}/query`)
        .send({ minActors: 1, exclude: { items: ['solo'] } })
        .expect(200)
    ).body;
    expect(rowsOf(page.items)).toEqual([
      ['two', 2, 11],
      ['three', 3, 10],
    ]);
    // A view lists its own rows and ranks, the actors counted in its window.
    const people = await top(board, 'window=people&minActors=2');
    expect(people).toMatchObject({ window: 'people', mode: 'unique', truncated: false });
    expect(rowsOf(people.items)).toEqual([
      ['three', 1, 3],
      ['two', 2, 2],
    ]);
    const hot = await top(board, 'window=hot&minActors=3');
    expect(hot.items.map((row: Row) => row.item)).toEqual(['three']);
  });

  it('refuses minActors out of 1-1000 and on a board without actors; a view takes exclude beside it', async () => {
    await http().put('/admin/boards/plain').set(ADMIN).send({ windows: WINDOWS }).expect(201);
    await http()
      .put('/admin/boards/acts')
      .set(ADMIN)
      .send({ windows: WINDOWS, views: VIEWS, actors: true })
      .expect(201);
    const refused = async (path: string, message: RegExp, body?: object) => {
      const answer = body ? await http().post(path).send(body).expect(400) : await http().get(path).expect(400);
      expect([answer.body.code, answer.body.message]).toEqual(['INVALID_INPUT', expect.stringMatching(message)]);
    };
    await refused('/boards/acts/top?minActors=0', /minActors/);
    await refused('/boards/acts/top?minActors=1001', /minActors/);
    await refused('/boards/plain/top?minActors=1', /minActors: board "plain" keeps no actors/);
    const items = [
      { item: 'x', amount: 1, actor: 'ann' },
      { item: 'y', amount: 1, actor: 'bob' },
      { item: 'y', amount: 1, actor: 'cy' },
    ];
    await http().post('/boards/acts/increments').send({ items }).expect(200);
    const body = { window: 'people', minActors: 1, exclude: { items: ['y'] } };
    const page = (await http().post('/boards/acts/query').send(body).expect(200)).body;
    expect([page.window, rowsOf(page.items)]).toEqual(['people', [['x', 2, 1]]]);
  });
});
