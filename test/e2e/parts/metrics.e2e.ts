import { ADMIN } from '../../../harness/app';
import { controversy, wilsonLowerBound } from '../../../src/ranking/options/metrics/metric-formulas';
import { boardPut, listedRows, T0, useSingleNodeApp } from '../../support/e2e';

const WINDOWS = [
  { name: 'h', period: '1h', interval: '1m' },
  { name: 'd', period: '1d', interval: '1h' },
];

describe('metrics over HTTP', () => {
  const { http } = useSingleNodeApp({ startMs: T0, fresh: true });
  const put = boardPut(http, WINDOWS);
  const increment = (board: string, item: string, body: object) =>
    http()
      .post(`/boards/${board}/items/${encodeURIComponent(item)}/increment`)
      .send(body);
  const rows = listedRows(http);

  it.each([
    [{ metrics: ['up'] }, /metrics holds at least 2 names/],
    [{ metrics: ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i'] }, /metrics holds at most 8 names/],
    [{ metrics: ['up', 'up'] }, /metrics must be distinct/],
    [{ metrics: ['up', 'Down'] }, /each metric must be 1-32 characters of a-z 0-9 _/],
    [{ metrics: 'up,down' }, /metrics must be an array|each metric must be/],
    [{ metrics: null }, /metrics/],
    [{ metrics: ['up', 'down'], aggregate: 'max' }, /metrics count events: board "bad" aggregates scores/],
    [{ metrics: ['up', 'down'], segments: { max: 10 } }, /metrics do not go with segments yet/],
    [{ metrics: ['up', 'down'], actors: true }, /metrics do not go with actors yet/],
  ])('refuses the board %j with 400 INVALID_INPUT', async (body, message) => {
    const answer = await put('bad', body).expect(400);
    expect(answer.body.code).toBe('INVALID_INPUT');
    expect(answer.body.message).toMatch(message);
  });

  it('counts each metric apart, ranks by ?metric= (default the first) and shows the metrics on the board', async () => {
    const board = await put('votes', { metrics: ['up', 'down'] }).expect(201);
    expect(board.body.metrics).toEqual(['up', 'down']);
    await increment('votes', 'a', { amount: 5 }).expect(200);
    await increment('votes', 'b', { amount: 2, metric: 'up' }).expect(200);
    const down = await increment('votes', 'b', { amount: 7, metric: 'down' }).expect(200);
    expect(down.body.windows.h).toMatchObject({ score: 7, rank: 1 });
    await http()
      .post('/boards/votes/increments')
      .send({
        items: [
          { item: 'a', metric: 'down' },
          { item: 'c', amount: 3, metric: 'down' },
        ],
      })
      .expect(200);
    expect(await rows('/boards/votes/top?window=h')).toEqual([
      ['a', 1, 5],
      ['b', 2, 2],
    ]);
    expect(await rows('/boards/votes/top?window=d&metric=down')).toEqual([
      ['b', 1, 7],
      ['c', 2, 3],
      ['a', 3, 1],
    ]);
    const item = await http().get('/boards/votes/items/c?window=h&metric=down').expect(200);
    expect(item.body).toMatchObject({ score: 3, rank: 2, metrics: { up: 0, down: 3 } });
    const top = await http().get('/boards/votes/top?window=h').expect(200);
    expect(top.body.items.map((row: { metrics: object }) => row.metrics)).toEqual([
      { up: 5, down: 1 },
      { up: 2, down: 7 },
    ]);
    const around = await http().get('/boards/votes/items/b/around?window=h&metric=down&radius=1').expect(200);
    expect(around.body.items[0]).toMatchObject({ item: 'b', metrics: { up: 2, down: 7 } });
    expect((await http().get('/boards/votes').expect(200)).body.metrics).toEqual(['up', 'down']);
  });

  it('ranks lookup, rank, distribution and POST query by ?metric= (#50); lookup and query rows carry metrics', async () => {
    await put('reads', { metrics: ['up', 'down'], shards: 3, groups: true }).expect(201);
    const up = [
      { item: 'a', amount: 5, group: 'g' },
      { item: 'b', amount: 1, group: 'g' },
      { item: 'c', amount: 2 },
    ];
    await http().post('/boards/reads/increments').send({ items: up }).expect(200);
    const down = [
      { item: 'b', amount: 9, metric: 'down' },
      { item: 'c', amount: 4, metric: 'down' },
    ];
    await http().post('/boards/reads/increments').send({ items: down }).expect(200);
    const lookup = await http()
      .post('/boards/reads/lookup?metric=down')
      .send({ items: ['a', 'b', 'c'], window: 'h' })
      .expect(200);
    expect(
      lookup.body.items.map((row: { item: string; score: number; rank: number | null }) => [
        row.item,
        row.score,
        row.rank,
      ]),
    ).toEqual([
      ['a', 0, null],
      ['b', 9, 1],
      ['c', 4, 2],
    ]);
    expect(lookup.body.items[1].metrics).toEqual({ up: 1, down: 9 });
    const plain = await http()
      .post('/boards/reads/lookup')
      .send({ items: ['b'], window: 'h' })
      .expect(200);
    expect(plain.body.items[0]).toMatchObject({ score: 1, rank: 3, metrics: { up: 1, down: 9 } });
    expect((await http().get('/boards/reads/rank?window=h&score=5&metric=down').expect(200)).body).toMatchObject({
      rank: 2,
    });
    expect((await http().get('/boards/reads/rank?window=h&score=5').expect(200)).body).toMatchObject({ rank: 1 });
    const spread = await http().get('/boards/reads/distribution?window=h&metric=down').expect(200);
    expect(spread.body).toMatchObject({ count: 2, min: 4, max: 9 });
    const query = await http()
      .post('/boards/reads/query')
      .send({ window: 'h', perGroup: 1, metric: 'down' })
      .expect(200);
    expect(query.body.items.map((row: { item: string; rank: number }) => [row.item, row.rank])).toEqual([
      ['b', 1],
      ['c', 2],
    ]);
    expect(query.body.items[1]).toMatchObject({ metrics: { up: 2, down: 4 } });
    for (const [method, path] of [
      ['get', '/boards/reads/rank?score=1&metric=nope'],
      ['get', '/boards/reads/distribution?metric=nope'],
      ['post', '/boards/reads/lookup?metric=nope'],
    ] as const) {
      const refused = await http()
        [method](path)
        .send(method === 'post' ? { items: ['a'] } : undefined)
        .expect(400);
      expect(refused.body.code).toBe('UNKNOWN_METRIC');
    }
    const queried = await http().post('/boards/reads/query').send({ metric: 'nope' }).expect(400);
    expect(queried.body.code).toBe('UNKNOWN_METRIC');
  });

  it('answers 400 UNKNOWN_METRIC naming the metrics, for writes and reads', async () => {
    await put('votes2', { metrics: ['up', 'down'] }).expect(201);
    await put('plain', {}).expect(201);
    const write = await increment('votes2', 'a', { metric: 'sideways' }).expect(400);
    expect(write.body).toMatchObject({ code: 'UNKNOWN_METRIC' });
    expect(write.body.message).toMatch(/board "votes2" has no metric "sideways"; its metrics: up, down/);
    const batch = await http()
      .post('/boards/votes2/increments')
      .send({ items: [{ item: 'a', metric: 'nope' }] })
      .expect(400);
    expect(batch.body.code).toBe('UNKNOWN_METRIC');
    const read = await http().get('/boards/votes2/top?metric=nope').expect(400);
    expect(read.body.code).toBe('UNKNOWN_METRIC');
    const plain = await increment('plain', 'a', { metric: 'up' }).expect(400);
    expect(plain.body).toMatchObject({ code: 'UNKNOWN_METRIC' });
    expect(plain.body.message).toMatch(/declares no metrics/);
    const badName = await increment('votes2', 'a', { metric: 'Up!' }).expect(400);
    expect(badName.body.code).toBe('INVALID_INPUT');
  });

  it('refuses a batch naming two metrics (400), and a change of metrics without reset (409)', async () => {
    await put('votes3', { metrics: ['up', 'down'] }).expect(201);
    const mixed = await http()
      .post('/boards/votes3/increments')
      .send({ items: [{ item: 'a' }, { item: 'b', metric: 'down' }] })
      .expect(400);
    expect(mixed.body.message).toMatch(/names one metric for all its entries/);
    await increment('votes3', 'a', { metric: 'down' }).expect(200);
    const conflict = await put('votes3', { metrics: ['up', 'down', 'meh'] }).expect(409);
    expect(conflict.body.message).toMatch(/metrics would change from \[up,down\] to \[up,down,meh\]/);
    await put('votes3', { metrics: ['up', 'down', 'meh'] }, '?reset=true').expect(200);
    expect(await rows('/boards/votes3/top?window=h&metric=down')).toEqual([]);
  });

  it('drops every metric with the board', async () => {
    await put('gone', { metrics: ['up', 'down'] }).expect(201);
    await increment('gone', 'a', { metric: 'down' }).expect(200);
    await http().delete('/admin/boards/gone').set(ADMIN).expect(204);
    await put('gone', { metrics: ['up', 'down'] }).expect(201);
    expect(await rows('/boards/gone/top?window=h&metric=down')).toEqual([]);
  });

  const best = { name: 'best', mode: 'wilson', window: 'h', positive: 'up', negative: 'down' };
  it.each([
    [{ views: [best] }, /views\.0: a wilson view ranks by two metrics of the board, and the board declares none/],
    [{ metrics: ['up', 'down'], views: [{ ...best, negative: 'meh' }] }, /negative must be one of the board's metrics/],
    [{ metrics: ['up', 'down'], views: [{ ...best, mode: 'controversial', negative: 'up' }] }, /two different metrics/],
    [{ metrics: ['up', 'down'], views: [{ ...best, positive: 'Up!' }] }, /positive must be a metric name/],
  ])('refuses the wilson or controversial view %j with 400 INVALID_INPUT', async (body, message) => {
    const answer = await put('badview', body).expect(400);
    expect(answer.body.code).toBe('INVALID_INPUT');
    expect(answer.body.message).toMatch(message);
  });

  it('ranks wilson and controversial views by their formula; rows carry the score and the two counts', async () => {
    const argued = { name: 'argued', mode: 'controversial', window: 'd', positive: 'up', negative: 'down' };
    const board = await put('rated', { metrics: ['up', 'down'], views: [best, argued] }).expect(201);
    expect(board.body.views).toEqual([best, argued]);
    const votes = http()
      .post('/boards/rated/increments')
      .send({
        items: [
          { item: 'a', amount: 9 },
          { item: 'b', amount: 40 },
          { item: 'c', amount: 3 },
        ],
      });
    await votes.expect(200);
    const against = [
      { item: 'a', amount: 1 },
      { item: 'b', amount: 30 },
      { item: 'c', amount: 3 },
    ];
    await http()
      .post('/boards/rated/increments')
      .send({ items: against.map((e) => ({ ...e, metric: 'down' })) })
      .expect(200);
    const top = await http().get('/boards/rated/top?window=best').expect(200);
    expect(top.body).toMatchObject({ window: 'best', mode: 'wilson' });
    expect(top.body.items).toEqual([
      { rank: 1, item: 'a', score: wilsonLowerBound(9, 1), previousRank: null, metrics: { up: 9, down: 1 } },
      { rank: 2, item: 'b', score: wilsonLowerBound(40, 30), previousRank: null, metrics: { up: 40, down: 30 } },
      { rank: 3, item: 'c', score: wilsonLowerBound(3, 3), previousRank: null, metrics: { up: 3, down: 3 } },
    ]);
    // Lua's pow may differ from Math.pow in its last bit.
    const argue: Array<[string, number, number]> = await rows('/boards/rated/top?window=argued');
    expect(argue.map(([item, rank]) => [item, rank])).toEqual([
      ['b', 1],
      ['c', 2],
      ['a', 3],
    ]);
    [controversy(40, 30), 6, controversy(9, 1)].forEach((score, i) => expect(argue[i][2]).toBeCloseTo(score, 12));
    const item = await http().get('/boards/rated/items/c?window=argued').expect(200);
    expect(item.body).toMatchObject({ rank: 2, score: 6, metrics: { up: 3, down: 3 } });
    const byMetric = await http().get('/boards/rated/top?window=best&metric=down').expect(400);
    expect(byMetric.body.message).toMatch(/ranks by its own formula/);
  });
});
