import { ADMIN } from '../../../harness/app';
import { useSingleNodeApp } from '../../support/e2e';

const T0 = 1_700_002_800_000;
const T0_SEC = T0 / 1000;

describe('history over HTTP', () => {
  const e2e = useSingleNodeApp({ startMs: T0 });
  const { clock, http } = e2e;
  const increment = (item: string, amount: number) =>
    http().post(`/boards/h/items/${item}/increment`).send({ amount }).expect(200);

  beforeEach(async () => {
    await e2e.redis().clear();
    clock.setMs(T0);
    await http()
      .put('/admin/boards/h')
      .set(ADMIN)
      .send({
        windows: [
          { name: 'm', period: '10m', interval: '1m', snapshots: { keep: 10, top: 2 } },
          { name: 'plain', period: '1h', interval: '1m' },
        ],
      })
      .expect(201)
      .expect((res) => expect(res.body.windows[0].snapshots).toEqual({ keep: 10, top: 2 }));
  });

  it('answers the snapshot at a boundary, the item series and previousRank', async () => {
    await increment('a', 3);
    await increment('b', 5);
    await increment('c', 1);
    expect((await http().get('/boards/h/history?window=m')).body).toMatchObject({ code: 'SNAPSHOT_NOT_FOUND' });
    clock.advanceSec(60);
    const moved = await increment('a', 10);
    expect(moved.body.windows).toEqual({
      m: { score: 13, rank: 1, previousRank: 2 },
      plain: { score: 13, rank: 1, previousRank: null },
    });
    const history = await http().get('/boards/h/history?window=m').expect(200);
    expect(history.body).toEqual({
      board: 'h',
      window: 'm',
      at: T0_SEC + 60,
      from: T0_SEC + 60 - 600,
      to: T0_SEC + 60,
      items: [
        { rank: 1, item: 'b', score: 5 },
        { rank: 2, item: 'a', score: 3 },
      ],
    });
    const top = await http().get('/boards/h/top?window=m').expect(200);
    expect(top.body.items).toEqual([
      { rank: 1, item: 'a', score: 13, previousRank: 2 },
      { rank: 2, item: 'b', score: 5, previousRank: 1 },
      { rank: 3, item: 'c', score: 1, previousRank: null },
    ]);
    clock.advanceSec(60);
    const series = await http().get('/boards/h/items/a/history?window=m').expect(200);
    expect(series.body).toEqual({
      board: 'h',
      window: 'm',
      item: 'a',
      points: [
        { at: T0_SEC + 60, rank: 2, score: 3 },
        { at: T0_SEC + 120, rank: 1, score: 13 },
      ],
      nextFrom: null,
    });
    const ranged = await http()
      .get(`/boards/h/items/c/history?window=m&from=${T0_SEC + 100}`)
      .expect(200);
    expect(ranged.body.points).toEqual([{ at: T0_SEC + 120, rank: null, score: null }]);
    expect((await http().get(`/boards/h/history?window=m&at=${T0_SEC + 119}`)).body.at).toBe(T0_SEC + 60);
  });

  it("pages an item's history so one read scans at most HISTORY_ROWS_PER_CALL snapshot rows (issue #22 row 7)", async () => {
    await http()
      .put('/admin/boards/deep')
      .set(ADMIN)
      .send({ windows: [{ period: '20m', interval: '1m', snapshots: { keep: 12, top: 1000 } }] })
      .expect(201);
    const items = Array.from({ length: 1000 }, (_, i) => ({ item: `i${i}`, amount: 2000 - i }));
    await http().post('/boards/deep/increments').send({ items }).expect(200);
    for (let minute = 0; minute < 12; minute++) {
      clock.advanceSec(60);
      await http().get('/boards/deep/top?limit=1').expect(200); // crosses the boundary: one snapshot
    }
    // The lowest item: each snapshot is scanned to its last row. 5 000 rows: 5 snapshots per read.
    const pages = [];
    let from = 0;
    for (let page = 0; page < 5; page++) {
      const answer = await http().get(`/boards/deep/items/i999/history?from=${from}`).expect(200);
      pages.push(answer.body);
      if (answer.body.nextFrom === null) break;
      from = answer.body.nextFrom;
    }
    expect(pages.map((page) => page.points.length)).toEqual([5, 5, 2]);
    const points = pages.flatMap((page) => page.points);
    expect(points.map((point) => point.at)).toEqual(Array.from({ length: 12 }, (_, i) => T0_SEC + 60 * (i + 1)));
    expect(points.every((point) => point.rank === 1000 && point.score === 1001)).toBe(true);
    expect(pages[0].nextFrom).toBe(T0_SEC + 360);
  });

  it('a view has no history: the 404 says so and names the window to read, never advising snapshots', async () => {
    await http()
      .put('/admin/boards/v')
      .set(ADMIN)
      .send({
        windows: [{ name: 'm', period: '10m', interval: '1m', snapshots: { keep: 10, top: 2 } }],
        views: [{ name: 'fading', mode: 'decay', window: 'm', halfLife: '5m' }],
      })
      .expect(201);
    for (const path of ['/boards/v/history?window=fading', '/boards/v/items/a/history?window=fading']) {
      const res = await http().get(path);
      expect([res.status, res.body.code, res.body.message]).toEqual([
        404,
        'SNAPSHOT_NOT_FOUND',
        '"fading" of board "v" is a view: views keep no history (read the history of its window: ?window=m)',
      ]);
    }
  });

  it('refuses bad input with a 4xx and a stable code', async () => {
    const bad = async (path: string, status: number, code: string) => {
      const res = await http().get(path);
      expect([path, res.status, res.body.code]).toEqual([path, status, code]);
    };
    await bad('/boards/h/history?window=plain', 404, 'SNAPSHOT_NOT_FOUND');
    await bad('/boards/h/items/a/history?window=plain', 404, 'SNAPSHOT_NOT_FOUND');
    await bad('/boards/h/history?window=nope', 404, 'WINDOW_NOT_FOUND');
    await bad('/boards/h/history?at=soon', 400, 'INVALID_INPUT');
    await bad('/boards/h/history?at=-1', 400, 'INVALID_INPUT');
    await bad('/boards/h/items/a/history?from=20&to=10', 400, 'INVALID_INPUT');
    for (const snapshots of [{ keep: 0, top: 1 }, { keep: 1 }, null, 'yes', { keep: 1, top: 1001 }]) {
      const res = await http()
        .put('/admin/boards/h2')
        .set(ADMIN)
        .send({ windows: [{ period: '1h', interval: '1m', snapshots }] });
      expect([JSON.stringify(snapshots), res.status, res.body.code]).toEqual([
        JSON.stringify(snapshots),
        400,
        'INVALID_INPUT',
      ]);
    }
  });
});
