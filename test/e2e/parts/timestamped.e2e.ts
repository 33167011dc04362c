import { createBoard } from '../../../harness/app';
import { useSingleNodeApp } from '../../support/e2e';

const T0 = 1_700_002_800_000; // an hour boundary (unix ms)
const T0_SEC = T0 / 1000;
const BOARD = {
  windows: [
    { name: 'hour', period: '1h', interval: '5m' },
    { name: 'day', period: '24h', interval: '1h' },
  ],
};

/** Timestamped events (`at`) on increments, batch entries and likes, over HTTP. */
describe.each([1, 3])('timestamped events (shards: %i)', (shards) => {
  const e2e = useSingleNodeApp({ startMs: T0 });
  const { clock, http } = e2e;
  const increment = (item: string, body: object, key?: string) => {
    const call = http().post(`/boards/b/items/${item}/increment`).send(body);
    return key === undefined ? call : call.set('Idempotency-Key', key);
  };
  const score = async (item: string, window: string) =>
    (await http().get(`/boards/b/items/${item}?window=${window}`).expect(200)).body.score as number;

  beforeEach(async () => {
    await e2e.redis().clear();
    clock.setMs(T0);
    await createBoard(e2e.app(), 'b', { ...BOARD, shards });
  });

  it('lands in the slot of `at` in every window whose live span still holds it, and only those', async () => {
    // 2 h ago: outside the hour window, inside the day.
    const old = await increment('x', { amount: 3, at: T0_SEC - 7200 }).expect(200);
    expect(old.body.windows).toEqual({
      hour: { score: 0, rank: null, previousRank: null },
      day: { score: 3, rank: 1, previousRank: null },
    });
    // 30 min ago (with a fraction): both windows, in the slot of that time.
    await increment('x', { amount: 2, at: T0_SEC - 1800.25 }).expect(200);
    expect(await score('x', 'hour')).toBe(2);
    expect(await score('x', 'day')).toBe(5);
    // T0 - 1801 s falls in the 5 m slot starting T0 - 2100 s, which leaves the hour window when the
    // current slot reaches its start + 1 h: T0 + 1500 s.
    clock.setMs(T0 + 1499_000);
    expect(await score('x', 'hour')).toBe(2);
    clock.setMs(T0 + 1500_000);
    expect(await score('x', 'hour')).toBe(0);
    expect(await score('x', 'day')).toBe(5);
  });

  it('batch entries and likes take their own `at`', async () => {
    const batch = await http()
      .post('/boards/b/increments')
      .send({
        items: [
          { item: 'a', amount: 1, at: T0_SEC - 7200 },
          { item: 'a', amount: 10 },
          { item: 'b', amount: 4, at: T0_SEC - 60 },
        ],
      })
      .expect(200);
    expect(batch.body.count).toBe(3);
    expect(await score('a', 'hour')).toBe(10);
    expect(await score('a', 'day')).toBe(11);
    expect(await score('b', 'hour')).toBe(4);
    // A like counts only in windows that existed at its time (so an unlike never takes it out of a
    // window remade since): before the board was created, no window holds it.
    const before = await http()
      .post('/boards/b/items/c/likes')
      .send({ userId: 'u', at: T0_SEC - 7200 })
      .expect(400);
    expect(before.body.message).toMatch(/before every window/);
    clock.setMs(T0 + 3 * 3600_000);
    const like = await http()
      .post('/boards/b/items/c/likes')
      .send({ userId: 'u', at: T0_SEC + 3600 })
      .expect(200);
    expect(like.body.windows).toEqual({
      hour: { score: 0, rank: null, previousRank: null },
      day: { score: 1, rank: 3, previousRank: null },
    });
    // The like's own time decides which windows an unlike takes it out of.
    const unlike = await http().delete('/boards/b/items/c/likes/u').expect(200);
    expect(unlike.body.counted).toBe(true);
    expect(unlike.body.windows.day).toEqual({ score: 0, rank: null, previousRank: null });
  });

  it('counts an `at` up to 5 s ahead as now, and refuses one further ahead or older than every window', async () => {
    await increment('x', { at: T0_SEC + 5 }).expect(200);
    expect(await score('x', 'hour')).toBe(1);
    const future = await increment('x', { at: T0_SEC + 5.5 }).expect(400);
    expect(future.body.code).toBe('INVALID_INPUT');
    expect(future.body.message).toMatch(/at must not be more than 5 s in the future/);
    // The day window's live span starts at the oldest of its 24 slots: T0 - 23 h.
    await increment('x', { at: T0_SEC - 23 * 3600 }).expect(200);
    const old = await increment('x', { at: T0_SEC - 23 * 3600 - 1 }).expect(400);
    expect(old.body.message).toBe(
      `at is older than every window's live span: the oldest accepted is ${T0_SEC - 23 * 3600} (at ${T0_SEC - 23 * 3600 - 1}, now ${T0_SEC})`,
    );
    const entry = await http()
      .post('/boards/b/increments')
      .send({ items: [{ item: 'a' }, { item: 'b', at: T0_SEC - 86400 }] })
      .expect(400);
    expect(entry.body.message).toMatch(/^items\.1\.at is older than every window's live span/);
    expect(await score('a', 'hour')).toBe(0);
    const like = await http()
      .post('/boards/b/items/x/likes')
      .send({ userId: 'u', at: T0_SEC + 60 })
      .expect(400);
    expect(like.body.message).toMatch(/at must not be more than 5 s/);
  });

  it('takes createdAt on increments and batch entries; refuses one ahead of the clock, naming it', async () => {
    await increment('x', { createdAt: T0_SEC - 86400 }).expect(200);
    await http()
      .post('/boards/b/increments')
      .send({ items: [{ item: 'y', createdAt: T0_SEC - 0.5, at: T0_SEC - 60 }] })
      .expect(200);
    expect((await increment('x', { createdAt: T0_SEC + 60 }).expect(400)).body.message).toMatch(
      /^createdAt must not be more than 5 s in the future/,
    );
    const entry = await http()
      .post('/boards/b/increments')
      .send({ items: [{ item: 'y', createdAt: 'yesterday' }] })
      .expect(400);
    expect(entry.body.message).toMatch(/items\.0\.createdAt/);
  });

  it.each([
    ['a string', '1700000000'],
    ['null', null],
    ['a boolean', true],
    ['negative', -1],
    ['beyond the year 2286', 1e10],
    ['an object', { t: 1 }],
  ])('refuses an `at` that is %s, naming it', async (_, at) => {
    const one = await increment('x', { at }).expect(400);
    expect(one.body.code).toBe('INVALID_INPUT');
    expect(one.body.message).toMatch(/^at /);
    const batch = await http()
      .post('/boards/b/increments')
      .send({ items: [{ item: 'x', at }] })
      .expect(400);
    expect(batch.body.message).toMatch(/items\.0\.at/);
    const like = await http().post('/boards/b/items/x/likes').send({ userId: 'u', at }).expect(400);
    expect(like.body.message).toMatch(/at /);
  });

  it('keeps `at` in the request a key protects: a repeat replays, another `at` is a 422', async () => {
    const first = await increment('x', { amount: 2, at: T0_SEC - 600 }, 'k1').expect(200);
    const again = await increment('x', { amount: 2, at: T0_SEC - 600 }, 'k1').expect(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
    expect((await increment('x', { amount: 2, at: T0_SEC - 660 }, 'k1').expect(422)).body.code).toBe(
      'IDEMPOTENCY_KEY_REUSED',
    );
    expect((await increment('x', { amount: 2 }, 'k1').expect(422)).body.code).toBe('IDEMPOTENCY_KEY_REUSED');
    expect(await score('x', 'hour')).toBe(2);
    // The event has left every window since: its key still replays the stored answer.
    clock.setMs(T0 + 23 * 3600_000);
    const late = await increment('x', { amount: 2, at: T0_SEC - 600 }, 'k1').expect(200);
    expect(late.body).toEqual(first.body);
    expect((await increment('x', { amount: 2, at: T0_SEC - 600 }, 'k2').expect(400)).body.message).toMatch(
      /older than every window/,
    );
  });
});
