import { RankingService } from '../../../src/ranking/ranking.service';
import { ADMIN } from '../../../harness/app';
import { useSingleNodeApp } from '../../support/e2e';

// Saturday 2024-03-30 12:00 in Berlin (UTC+1): the night after, clocks spring forward to UTC+2.
const T0 = Date.parse('2024-03-30T11:00:00Z');
const SAT_START = Date.parse('2024-03-29T23:00:00Z') / 1000;
const SUN_START = Date.parse('2024-03-30T23:00:00Z') / 1000;
const MON_START = Date.parse('2024-03-31T22:00:00Z') / 1000;

describe('calendar windows and archives over HTTP', () => {
  const { clock, http } = useSingleNodeApp({ startMs: T0, fresh: true });
  const put = (windows: object[]) => http().put('/admin/boards/cal').set(ADMIN).send({ windows });
  const increment = (item: string, amount: number, at?: number) =>
    http().post(`/boards/cal/items/${item}/increment`).send({ amount, at });

  it('counts the local day, answers its span and zone, and archives it once it closes', async () => {
    const created = await put([
      { calendar: 'day', timeZone: 'europe/berlin', archive: { keep: 2, top: 2 } },
      { name: 'week', calendar: 'week', timeZone: 'America/New_York', weekStart: 'sunday' },
      { name: '1h', period: '1h', interval: '1m' },
    ]).expect(201);
    expect(created.body.windows[0]).toEqual({
      name: 'day',
      period: 90_000,
      interval: 90_000,
      calendar: 'day',
      timeZone: 'Europe/Berlin',
      archive: { keep: 2, top: 2 },
    });
    await increment('a', 3).expect(200);
    await increment('b', 5).expect(200);
    await increment('c', 1).expect(200);
    const top = await http().get('/boards/cal/top?window=day').expect(200);
    expect(top.body).toMatchObject({ from: SAT_START, to: SUN_START, timeZone: 'Europe/Berlin' });
    expect(top.body.items.map((row: { item: string }) => row.item)).toEqual(['b', 'a', 'c']);
    const lookup = await http()
      .post('/boards/cal/lookup')
      .send({ items: ['a', 'zz'], window: 'day' })
      .expect(200);
    expect(lookup.body.items.map((row: { score: number }) => row.score)).toEqual([3, 0]);
    const item = await http().get('/boards/cal/items/a?window=day').expect(200);
    expect(item.body).toMatchObject({ score: 3, rank: 2, timeZone: 'Europe/Berlin' });
    await http()
      .get('/boards/cal/archive?window=day')
      .expect(404)
      .expect((res) => expect(res.body.code).toBe('ARCHIVE_NOT_FOUND'));

    // Sunday lasts 23 hours in Berlin: its end is Monday 00:00 UTC+2.
    clock.setMs(SUN_START * 1000 + 3_600_000);
    const sunday = await http().get('/boards/cal/top?window=day').expect(200);
    expect(sunday.body).toMatchObject({ from: SUN_START, to: MON_START, items: [] });
    expect(MON_START - SUN_START).toBe(23 * 3600);
    const archive = await http()
      .get(`/boards/cal/archive?window=day&at=${SAT_START + 10}`)
      .expect(200);
    expect(archive.body).toEqual({
      board: 'cal',
      window: 'day',
      timeZone: 'Europe/Berlin',
      from: SAT_START,
      to: SUN_START,
      items: [
        { rank: 1, item: 'b', score: 5 },
        { rank: 2, item: 'a', score: 3 },
      ],
      nextOffset: null,
    });
    const paged = await http().get('/boards/cal/archive?window=day&limit=1&offset=1').expect(200);
    expect(paged.body.items).toEqual([{ rank: 2, item: 'a', score: 3 }]);
    await http()
      .get(`/boards/cal/archive?window=day&at=${SUN_START + 10}`)
      .expect(404);
    const archives = await http().get('/boards/cal/archives?window=day').expect(200);
    expect(archives.body).toMatchObject({ board: 'cal', window: 'day', nextCursor: null });
    expect(archives.body.periods).toEqual([
      { from: SAT_START, to: SUN_START, items: archive.body.items, nextOffset: null },
    ]);
  });

  it('refuses what a calendar window cannot be, naming it', async () => {
    const bad = async (window: object, pattern: RegExp) => {
      const res = await put([window]).expect(400);
      expect(res.body.code).toBe('INVALID_INPUT');
      expect(res.body.message).toMatch(pattern);
    };
    await bad({ calendar: 'day', timeZone: 'Mars/Olympus' }, /timeZone "Mars\/Olympus"/);
    await bad({ calendar: 'day', period: '1d', interval: '1h' }, /no period or interval/);
    await bad({ calendar: 'month', weekStart: 'sunday' }, /weekStart/);
    await bad({ calendar: 'fortnight' }, /calendar must be one of/);
    await bad({ calendar: 'day', archive: { keep: 0, top: 5 } }, /keep/);
    await bad({ calendar: 'day', archive: { keep: 1, top: 10_001 } }, /top/);
    await bad({ period: '1h', interval: '1m', timeZone: 'UTC' }, /calendar windows only/);
  });

  it('refuses a late event for a closed period, reads archives of a calendar window only', async () => {
    await put([
      { calendar: 'day', archive: { keep: 3, top: 5 } },
      { name: '1h', period: '1h', interval: '1m' },
    ]).expect(201);
    await http()
      .put('/admin/boards/cal2')
      .set(ADMIN)
      .send({ windows: [{ calendar: 'week' }] })
      .expect(201);
    const late = await http()
      .post('/boards/cal2/items/a/increment')
      .send({ at: T0 / 1000 - 8 * 86_400 })
      .expect(400);
    expect(late.body.message).toMatch(/closed period/);
    await http().get('/boards/cal/archive?window=1h').expect(400);
    await http()
      .get('/boards/cal2/archives?window=week')
      .expect(404)
      .expect((res) => expect(res.body.code).toBe('ARCHIVE_NOT_FOUND'));
    await http().get('/boards/cal/archives?window=day&limit=0').expect(400);
    await http().get('/boards/cal/archive?window=nope').expect(404);
    const history = await http().get('/boards/cal/history?window=day').expect(404);
    expect(history.body.message).toMatch(/archive\?window=day/);
  });
});

describe('an archive still being taken, over HTTP', () => {
  // 5 fields or rows a call: 200 items take 40 drain calls, beyond what one read drains (MAX_READ_DRAIN_CALLS).
  const { app, clock, http } = useSingleNodeApp({ startMs: T0, fresh: true, env: { EXPIRE_CHUNK: '5' } });

  it('answers 503 WINDOW_DRAINING with Retry-After until the scheduler finished it, then the archive', async () => {
    await http()
      .put('/admin/boards/big')
      .set(ADMIN)
      .send({ windows: [{ calendar: 'day', timeZone: 'Europe/Berlin', archive: { keep: 2, top: 50 } }] })
      .expect(201);
    const items = Array.from({ length: 200 }, (_, i) => ({ item: `p${i}`, amount: i + 1 }));
    await http().post('/boards/big/increments').send({ items }).expect(200);
    clock.setMs(SUN_START * 1000 + 1000);

    const pending = await http().get('/boards/big/archives?window=day').expect(503);
    expect(pending.body.code).toBe('WINDOW_DRAINING');
    expect(pending.headers['retry-after']).toBeDefined();
    await http().get('/boards/big/archive?window=day').expect(503);

    await app().get(RankingService).expireDue({ leaseMs: 30_000, claimBatch: 10 });
    const { body } = await http().get('/boards/big/archive?window=day&limit=3').expect(200);
    expect(body).toMatchObject({ from: SAT_START, to: SUN_START, timeZone: 'Europe/Berlin' });
    expect(body.items).toEqual([
      { rank: 1, item: 'p199', score: 200 },
      { rank: 2, item: 'p198', score: 199 },
      { rank: 3, item: 'p197', score: 198 },
    ]);
    const page = await http().get('/boards/big/archive?window=day&offset=49&limit=5').expect(200);
    expect(page.body.items).toEqual([{ rank: 50, item: 'p150', score: 151 }]);
  });
});
