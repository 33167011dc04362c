import { createBoard } from '../support/app';
import { T0, useSingleNodeApp } from '../support/e2e';

/** Ids spread over every shard of a board (by hash), named so that a test can ask for n of them. */
const ids = (n: number, prefix = 'i') => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

describe('a lookup is charged by its cost and capped per request (issue 45 row 5)', () => {
  // 100 reads a second: a lookup of 100 ids with board ranks on 64 shards counts 6 400, 32 reads.
  const { app, clock, http } = useSingleNodeApp({
    startMs: T0,
    fresh: true,
    env: { READ_RATE_LIMIT_PER_SEC: '100', READ_RATE_LIMIT_BURST: '100' },
  });
  const lookup = (body: object) => http().post('/boards/wide/lookup').send(body);
  // Each test reads at a time of its own, past the read budget's 10 s of the one before (fresh sets
  // the clock back to T0 before each).
  let testStartSec = 0;

  beforeEach(async () => {
    await createBoard(app(), 'wide', { windows: [{ name: 'h', period: '1h', interval: '1m' }], shards: 64 });
    await http()
      .post('/boards/wide/increments')
      .send({ items: ids(100).map((item, i) => ({ item, amount: 1 + (i % 7) })) })
      .expect(200);
    testStartSec += 20;
    clock.advanceSec(testStartSec);
  });

  it('spends ids x shards / 200 reads of the budget: the fourth lookup of 100 ids on 64 shards is a 429', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await lookup({ items: ids(100) })).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
  });

  it('answers the right ranks when the counts are split over calls', async () => {
    const res = await lookup({ items: ids(100) }).expect(200);
    // amounts cycle 1..7 over 100 items: 14 items score 7 (i % 7 = 6), and so on down.
    const byScore = new Map<number, number>();
    for (let i = 0; i < 100; i++) byScore.set(1 + (i % 7), (byScore.get(1 + (i % 7)) ?? 0) + 1);
    const rankOf = (score: number) => 1 + [...byScore].filter(([s]) => s > score).reduce((sum, [, n]) => sum + n, 0);
    expect(res.body.items.map((row: { rank: number }) => row.rank)).toEqual(
      ids(100).map((_, i) => rankOf(1 + (i % 7))),
    );
  });

  it('refuses a lookup past 8 000 counts with 422 REQUEST_TOO_COSTLY naming the most ids, charging nothing', async () => {
    const res = await lookup({ items: ids(200) }).expect(422);
    expect(res.body.code).toBe('REQUEST_TOO_COSTLY');
    expect(res.body.message).toMatch(/8000/);
    expect(res.body.message).toMatch(/at most 125 ids/);
    // relative ranks on a "ties": "shared" board count nothing across shards: 1 000 ids are 5 reads.
    await lookup({ items: ids(1000), relative: true }).expect(200);
  });
});
