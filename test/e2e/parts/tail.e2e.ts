import { boardPut, T0, useSingleNodeApp } from '../../support/e2e';

const WINDOWS = [{ name: 'h', period: '3m', interval: '1m' }];
const MINUTE_MS = 60_000;

describe('tail over HTTP', () => {
  const { clock, http } = useSingleNodeApp({ startMs: T0, fresh: true });
  const put = boardPut(http, WINDOWS);

  it.each([
    [{ tail: 3 }, /tail must be an object like/],
    [{ tail: null }, /tail/],
    [{ tail: { exact: 0, below: 2 } }, /exact must not be less than 1/],
    [{ tail: { exact: 1001, below: 2 } }, /exact must not be greater than 1000/],
    [{ tail: { exact: 10, below: 1 } }, /below must not be less than 2/],
    [{ tail: { exact: 10 } }, /tail.below must/],
    [{ tail: { exact: 10, below: 2, keep: 1 } }, /property keep should not exist/],
    [{ tail: { exact: 10, below: 2 }, aggregate: 'max' }, /tail bounds the dropped part of sums/],
    [{ tail: { exact: 10, below: 2 }, actors: true }, /tail prunes counts that views, segments and actors/],
    [{ tail: { exact: 10, below: 2 }, segments: { max: 5 } }, /tail prunes counts/],
    [{ tail: { exact: 10, below: 2 }, views: [{ name: 'hot', mode: 'hot', window: 'h' }] }, /tail prunes counts/],
  ])('refuses %j with 400 INVALID_INPUT', async (body, message) => {
    const answer = await put('bad', body).expect(400);
    expect(answer.body.code).toBe('INVALID_INPUT');
    expect(answer.body.message).toMatch(message);
    await http().get('/boards/bad').expect(404);
  });

  it('keeps the setting, answers it in the view, and needs reset to change it', async () => {
    await put('kept', { tail: { exact: 2, below: 2 } }).expect(201);
    expect((await http().get('/boards/kept').expect(200)).body.tail).toEqual({ exact: 2, below: 2 });
    await put('kept', {}).expect(200);
    expect((await http().get('/boards/kept').expect(200)).body.tail).toEqual({ exact: 2, below: 2 });
    expect((await put('kept', { tail: { exact: 3, below: 2 } }).expect(409)).body.code).toBe('BOARD_CONFIG_CONFLICT');
    await put('kept', { tail: { exact: 3, below: 2 } }, '?reset=true').expect(200);
  });

  it('answers each row of top with its bound: 0 for the exact head, more once one-hit items were pruned', async () => {
    await put('t', { tail: { exact: 2, below: 2 } }).expect(201);
    const items = [
      { item: 'a', amount: 50 },
      { item: 'b', amount: 30 },
      { item: 'c', amount: 1 },
      { item: 'd', amount: 1 },
    ];
    await http().post('/boards/t/increments').send({ items }).expect(200);
    clock.advanceMs(MINUTE_MS);
    await http()
      .post('/boards/t/increments')
      .send({ items: [{ item: 'c', amount: 2 }] })
      .expect(200);
    const { body } = await http().get('/boards/t/top?window=h&limit=10').expect(200);
    expect(body.items.map((row: { item: string; score: number; rank: number; bound: number }) => row)).toEqual([
      { item: 'a', score: 50, rank: 1, bound: 0, previousRank: null },
      { item: 'b', score: 30, rank: 2, bound: 0, previousRank: null },
      { item: 'c', score: 2, rank: 3, bound: 1, previousRank: null },
    ]);
    const deep = await http().get('/boards/t/top?window=h&offset=1990&limit=20').expect(422);
    expect(deep.body.code).toBe('REQUEST_TOO_COSTLY');
  });
});
