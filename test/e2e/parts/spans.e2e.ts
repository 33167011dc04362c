import { createBoard } from '../../../harness/app';
import { useSingleNodeApp } from '../../support/e2e';
import { SPAN_MAX_FIELDS } from '../../../src/ranking/core/ranking.limits';

const T0 = 1_700_002_800_000; // an hour boundary (unix ms)
const T0_SEC = T0 / 1000;
const HOUR_MS = 3_600_000;
const BOARD = {
  windows: [{ name: 'day', period: '24h', interval: '1h' }],
  views: [{ name: 'trending', mode: 'decay', window: 'day', halfLife: '6h' }],
};

/** `?span=` over HTTP: the newest slots of a rolling window, and every way to ask one wrongly. */
describe.each([1, 3])('spans chosen at read time (shards: %i)', (shards) => {
  const { app, clock, http } = useSingleNodeApp({
    startMs: T0,
    fresh: true,
    env: { QUOTA_NEW_ITEMS: String(SPAN_MAX_FIELDS * 3) },
  });
  const add = (item: string, amount: number) =>
    http().post(`/boards/b/items/${item}/increment`).send({ amount }).expect(200);

  beforeEach(() => createBoard(app(), 'b', { ...BOARD, shards }));

  it('top, item and around count only the newest slots; from/to say which', async () => {
    await add('old', 10); // the slot starting at T0
    clock.setMs(T0 + 2 * HOUR_MS);
    await add('new', 3);
    await add('mid', 2);
    clock.setMs(T0 + 3 * HOUR_MS + 60_000);
    await add('new', 1);

    const day = await http().get('/boards/b/top?window=day').expect(200);
    expect(day.body.items.map((row: { item: string }) => row.item)).toEqual(['old', 'new', 'mid']);

    const span = await http().get('/boards/b/top?window=day&span=2h').expect(200);
    expect(span.body).toMatchObject({ board: 'b', window: 'day', from: T0_SEC + 2 * 3600, to: T0_SEC + 4 * 3600 });
    expect(span.body.items).toEqual([
      { rank: 1, item: 'new', score: 4, previousRank: null },
      { rank: 2, item: 'mid', score: 2, previousRank: null },
    ]);
    const item = await http().get('/boards/b/items/old?window=day&span=2h').expect(200);
    expect(item.body).toMatchObject({ item: 'old', score: 0, rank: null });
    const newest = await http().get('/boards/b/items/new?span=1h').expect(200);
    expect(newest.body).toMatchObject({ item: 'new', score: 1, rank: 1, percentile: 100 });
    const around = await http().get('/boards/b/items/mid/around?window=day&span=4h&radius=1').expect(200);
    expect(around.body.items.map((row: { item: string; rank: number }) => [row.item, row.rank])).toEqual([
      ['new', 2],
      ['mid', 3],
    ]);
  });

  it('refuses a span that does not fit the window, a span on a view, and a malformed span, naming it', async () => {
    const notMultiple = await http().get('/boards/b/top?span=90m').expect(400);
    expect(notMultiple.body.code).toBe('INVALID_INPUT');
    expect(notMultiple.body.message).toMatch(
      /span 5400s does not fit window "day".*interval \(3600s\).*period \(86400s\)/,
    );
    const tooLong = await http().get('/boards/b/items/x?span=2d').expect(400);
    expect(tooLong.body.message).toMatch(/at most its period/);
    const onView = await http().get('/boards/b/top?window=trending&span=1h').expect(400);
    expect(onView.body.message).toMatch(/"trending" is a view/);
    const malformed = await http().get('/boards/b/items/x/around?span=soon').expect(400);
    expect(malformed.body).toMatchObject({ code: 'INVALID_INPUT' });
    expect(malformed.body.message).toMatch(/span must be a duration/);
  });

  it('a span holding more slot fields than one read sums is a 422 SPAN_TOO_COSTLY naming the window to declare', async () => {
    const items = Array.from({ length: SPAN_MAX_FIELDS + 1 }, (_, i) => ({ item: `i${i}`, amount: 1 }));
    // A window and a decay view weigh 3.5 units an entry: 500 a batch fit WRITE_COST_PER_CALL.
    for (let first = 0; first < items.length; first += 500)
      await http()
        .post('/boards/b/increments')
        .send({ items: items.slice(first, first + 500) })
        .expect(200);
    // The bound holds over all shards together: sharded, each shard may sum a share of it.
    const response = await http().get('/boards/b/top?span=1h');
    expect(response.status).toBe(422);
    expect(response.body.code).toBe('SPAN_TOO_COSTLY');
    const holds =
      shards === 1 ? /holds 4001 slot fields, more than the 4000/ : /on one of its 3 shards, more than the 1333/;
    expect(response.body.message).toMatch(holds);
    expect(response.body.message).toMatch(/declare a window \{ "period": "3600s"/);
  });
});
