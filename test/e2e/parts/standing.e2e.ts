import { createBoard } from '../../../harness/app';
import { useSingleNodeApp } from '../../support/e2e';

const T0 = 1_700_002_800_000;
const HOUR_MS = 3_600_000;

describe('GET …/rank and …/distribution over HTTP', () => {
  const { app, clock, http } = useSingleNodeApp({ startMs: T0, fresh: true });
  const seed = (board: string, items: Array<[string, number]>) =>
    http()
      .post(`/boards/${board}/increments`)
      .send({ items: items.map(([item, amount]) => ({ item, amount })) })
      .expect(200);

  beforeEach(async () => {
    const windows = [
      { name: 'h', period: '1h', interval: '1m' },
      { name: 'day', calendar: 'day' },
    ];
    const views = [{ name: 'fading', mode: 'decay', window: 'h', halfLife: '30m' }];
    await createBoard(app(), 'sd', { windows, views, shards: 3 });
    await createBoard(app(), 'sf', { windows, ties: 'first' });
    for (const board of ['sd', 'sf'])
      await seed(board, [
        ['a', 5],
        ['b', 5],
        ['c', 9],
        ['d', 2],
        ['e', -4],
      ]);
  });

  it('places a score among the listed items: competition rank, the percentile of an item holding it', async () => {
    const rank = async (board: string, query: string) =>
      (await http().get(`/boards/${board}/rank?${query}`).expect(200)).body;
    expect(await rank('sd', 'window=h&score=5')).toMatchObject({
      board: 'sd',
      window: 'h',
      score: 5,
      rank: 2,
      percentile: 75,
    });
    expect(await rank('sd', 'score=10')).toMatchObject({ window: 'h', rank: 1, percentile: 100 });
    expect(await rank('sd', 'score=1.5')).toMatchObject({ rank: 5, percentile: 0 });
    expect(await rank('sd', 'score=-3')).toMatchObject({ rank: null, percentile: null });
    // On `ties: first` the items already holding the score reached it first: they are ahead.
    expect(await rank('sf', 'window=day&score=5')).toMatchObject({ window: 'day', rank: 4, percentile: 25 });
  });

  it('answers the distribution of the listed scores, exactly, and an empty window', async () => {
    const { body } = await http().get('/boards/sd/distribution?window=day&buckets=2').expect(200);
    expect(body).toMatchObject({
      board: 'sd',
      window: 'day',
      count: 4,
      min: 2,
      max: 9,
      buckets: [
        { from: 2, to: 5.5, count: 3 },
        { from: 5.5, to: 9, count: 1 },
      ],
      quantiles: { p10: 2, p25: 2, p50: 5, p75: 5, p90: 9, p99: 9 },
    });
    expect((await http().get('/boards/sd/distribution').expect(200)).body.buckets).toHaveLength(10);
    clock.advanceMs(2 * HOUR_MS);
    expect((await http().get('/boards/sd/distribution?window=h').expect(200)).body).toMatchObject({
      count: 0,
      min: null,
      max: null,
      buckets: [],
      quantiles: { p10: null, p50: null, p99: null },
    });
  });

  it.each([
    ['/boards/sd/rank?window=h', 400, 'INVALID_INPUT'],
    ['/boards/sd/rank?score=abc', 400, 'INVALID_INPUT'],
    ['/boards/sd/rank?score=1000000000000001', 400, 'INVALID_INPUT'],
    ['/boards/sd/rank?score=3&tiebreak=1.5', 400, 'INVALID_INPUT'],
    ['/boards/sd/rank?score=3&tiebreak=7', 400, 'INVALID_INPUT'],
    ['/boards/sd/rank?score=3&window=fading', 400, 'INVALID_INPUT'],
    ['/boards/sd/rank?score=3&window=nope', 404, 'WINDOW_NOT_FOUND'],
    ['/boards/nope/rank?score=3', 404, 'BOARD_NOT_FOUND'],
    ['/boards/sd/distribution?buckets=0', 400, 'INVALID_INPUT'],
    ['/boards/sd/distribution?buckets=101', 400, 'INVALID_INPUT'],
    ['/boards/sd/distribution?window=fading', 400, 'INVALID_INPUT'],
    ['/boards/sd/distribution?window=nope', 404, 'WINDOW_NOT_FOUND'],
    ['/boards/nope/distribution', 404, 'BOARD_NOT_FOUND'],
  ])('%s: %i %s', async (path, status, code) => {
    expect((await http().get(path).expect(status)).body).toMatchObject({ code });
  });
});
