import { boardPut, useSingleNodeApp } from '../../support/e2e';

/** The league routes over HTTP: a placement, the standing and cohort reads, the moves of a closed week, the refusals. */
describe('leagues over HTTP', () => {
  const { http, clock, redis, describeApp } = useSingleNodeApp();
  const put = boardPut(http, [{ name: 'week', calendar: 'week' }]);
  const leagues = { window: 'week', size: 2, tiers: ['bronze', 'silver'], promote: 1, relegate: 1 };

  it('places, ranks and moves items once a week ends', async () => {
    clock.setMs(Date.parse('2026-11-25T12:00:00Z'));
    await put('lg', { leagues }).expect(201);
    for (const [item, amount] of [
      ['ann', 120],
      ['bob', 80],
      ['cyd', 5],
    ] as const)
      await http().post(`/boards/lg/items/${item}/increment`).send({ amount }).expect(200);
    const bob = await http().get('/boards/lg/items/bob/league').expect(200);
    expect(bob.body).toMatchObject({
      board: 'lg',
      item: 'bob',
      tier: 'bronze',
      cohort: 1,
      rank: 2,
      score: 80,
      members: 2,
    });
    const cohort = await http().get('/boards/lg/leagues/bronze/1').expect(200);
    expect(cohort.body.items).toEqual([
      { rank: 1, item: 'ann', score: 120 },
      { rank: 2, item: 'bob', score: 80 },
    ]);
    await http()
      .get(`/boards/lg/leagues/moves?at=${clock.nowMs() / 1000}`)
      .expect(400);
    clock.advanceMs(7 * 86_400_000);
    const moves = await http().get('/boards/lg/leagues/moves?limit=1').expect(200);
    expect(moves.body.moves).toEqual([{ item: 'ann', fromTier: 'bronze', toTier: 'silver', cohort: 1, rank: 1 }]);
    expect(moves.body.nextCursor).toBe('1');
    const rest = await http().get('/boards/lg/leagues/moves?cursor=1').expect(200);
    // cyd is alone in the second cohort: its best, so it moves up too; bob stays (no tier below bronze).
    expect(rest.body).toMatchObject({
      moves: [{ item: 'cyd', fromTier: 'bronze', toTier: 'silver', cohort: 2, rank: 1 }],
      nextCursor: null,
    });
    await http().post('/boards/lg/items/ann/increment').send({ amount: 1 }).expect(200);
    expect((await http().get('/boards/lg/items/ann/league').expect(200)).body.tier).toBe('silver');
    expect((await http().get('/boards/lg/items/bob/league').expect(404)).body.code).toBe('ITEM_NOT_FOUND');
  });

  it('on a ties: first board, ranks, pages and moves a cohort by the order its members reached their scores', async () => {
    clock.setMs(Date.parse('2026-11-25T12:00:00Z'));
    await put('lgt', { ties: 'first', leagues: { ...leagues, size: 3 } }).expect(201);
    // b reaches 5 first, a (2, then 3) second, c last: shared ties would list c, b, a all rank 1.
    for (const [item, amount] of [
      ['a', 2],
      ['b', 5],
      ['a', 3],
      ['c', 5],
    ] as const)
      await http().post(`/boards/lgt/items/${item}/increment`).send({ amount }).expect(200);
    const strict = [
      { rank: 1, item: 'b', score: 5 },
      { rank: 2, item: 'a', score: 5 },
      { rank: 3, item: 'c', score: 5 },
    ];
    const top = await http().get('/boards/lgt/top?window=week').expect(200);
    expect(top.body.items.map(({ rank, item, score }: (typeof strict)[number]) => ({ rank, item, score }))).toEqual(
      strict,
    );
    expect((await http().get('/boards/lgt/leagues/bronze/1').expect(200)).body.items).toEqual(strict);
    expect((await http().get('/boards/lgt/leagues/bronze/1?offset=1&limit=2').expect(200)).body.items).toEqual(
      strict.slice(1),
    );
    for (const { item, rank } of strict)
      expect((await http().get(`/boards/lgt/items/${item}/league`).expect(200)).body).toMatchObject({
        rank,
        members: 3,
      });
    clock.advanceMs(7 * 86_400_000);
    const moves = await http().get('/boards/lgt/leagues/moves').expect(200);
    expect(moves.body.moves).toEqual([{ item: 'b', fromTier: 'bronze', toTier: 'silver', cohort: 1, rank: 1 }]);
    for (const [item, tier] of [
      ['b', 'silver'],
      ['a', 'bronze'],
    ] as const) {
      await http().post(`/boards/lgt/items/${item}/increment`).send({ amount: 1 }).expect(200);
      expect((await http().get(`/boards/lgt/items/${item}/league`).expect(200)).body.tier).toBe(tier);
    }
    // The cohorts' members are kept in the strict order's form: the mode stays, even with reset.
    const refused = await put('lgt', { ties: 'shared', leagues: { ...leagues, size: 3 } }, '?reset=true').expect(409);
    expect(JSON.stringify(refused.body)).toContain('holds the leagues');
  });

  it('on 3 shards: cohorts of each shard numbered apart, moves paged shard by shard', async () => {
    clock.setMs(Date.parse('2026-11-25T12:00:00Z'));
    await put('lgs', { leagues, shards: 3 }).expect(201);
    // Shards of 3: g 0; a, b, d 1; c 2. Shard 1's second cohort is its own 2nd: (2 - 1) × 3 + 1 + 1 = 5.
    for (const [item, amount] of [
      ['g', 10],
      ['a', 5],
      ['b', 7],
      ['d', 3],
      ['c', 4],
    ] as const)
      await http().post(`/boards/lgs/items/${item}/increment`).send({ amount }).expect(200);
    const cohorts = { g: 1, a: 2, b: 2, c: 3, d: 5 };
    for (const [item, cohort] of Object.entries(cohorts))
      expect((await http().get(`/boards/lgs/items/${item}/league`).expect(200)).body).toMatchObject({ cohort });
    expect((await http().get('/boards/lgs/leagues/bronze/2').expect(200)).body.items).toEqual([
      { rank: 1, item: 'b', score: 7 },
      { rank: 2, item: 'a', score: 5 },
    ]);
    clock.advanceMs(7 * 86_400_000);
    const up = (item: string, cohort: number) => ({ item, fromTier: 'bronze', toTier: 'silver', cohort, rank: 1 });
    const first = await http().get('/boards/lgs/leagues/moves?limit=2').expect(200);
    expect(first.body).toMatchObject({ moves: [up('g', 1), up('b', 2)], nextCursor: '4' });
    const rest = await http().get('/boards/lgs/leagues/moves?limit=2&cursor=4').expect(200);
    expect(rest.body).toMatchObject({ moves: [up('d', 5), up('c', 3)], nextCursor: null });
  });

  it('refuses what it does not support, and answers 404 where there are no leagues', async () => {
    await put('lgx', { leagues: { ...leagues, window: 'nope' } }).expect(400);
    await put('plain', {}).expect(201);
    expect((await http().get('/boards/plain/leagues/moves').expect(404)).body.code).toBe('LEAGUE_NOT_FOUND');
    expect((await http().get('/boards/lg/leagues/platinum/1').expect(404)).body.code).toBe('LEAGUE_NOT_FOUND');
  });

  describe('under a read budget of 10 reads (a burst of 10, the clock held)', () => {
    const budgeted = describeApp({ READ_RATE_LIMIT_PER_SEC: '1', READ_RATE_LIMIT_BURST: '10' });

    it('charges a moves page a read per call: 8 on 8 shards (each rolled and read in one call), the second page a 429', async () => {
      clock.setMs(Date.parse('2026-12-09T12:00:00Z'));
      await put('lr', { leagues, shards: 8 }).expect(201);
      const items = Array.from({ length: 40 }, (_, i) => ({ item: `r${i}`, amount: i + 1 }));
      await http().post('/boards/lr/increments').send({ items }).expect(200);
      clock.advanceMs(7 * 86_400_000);
      const first = await budgeted.http().get('/boards/lr/leagues/moves').expect(200);
      expect(first.body.moves.length).toBeGreaterThan(8);
      expect(first.body.nextCursor).toBeNull();
      // 8 calls counted, 2 reads left: the next page's third call finds none.
      expect((await budgeted.http().get('/boards/lr/leagues/moves').expect(429)).body.code).toBe('RATE_LIMITED');
      expect((await http().get('/boards/lr/leagues/moves').expect(200)).body.moves).toEqual(first.body.moves);
    });
  });

  describe('under a client quota of 5 new items', () => {
    const quoted = describeApp({ QUOTA_NEW_ITEMS: '5' });
    /** Items the leagues hold state of (placements, tiers, cohort entries), distinct. */
    const leagueItems = async () => {
      const held = new Set<string>();
      const client = redis().client;
      for (const key of await redis().dataKeys('board:lq}:lg:*')) {
        if (key.endsWith(':lg:at') || key.endsWith(':lg:tier'))
          for (const item of await client.hkeys(key)) held.add(item);
        if (/:c:\d+:\d+$/.test(key)) for (const item of await client.zrange(key, 0, -1)) held.add(item);
      }
      return held;
    };

    it("holds league state only of items the client's items quota charged", async () => {
      clock.setMs(Date.parse('2026-12-02T12:00:00Z'));
      await put('lq', { leagues }).expect(201);
      const batch = Array.from({ length: 8 }, (_, i) => ({ item: `q${i}`, amount: i + 1 }));
      expect((await quoted.http().post('/boards/lq/increments').send({ items: batch }).expect(429)).body.code).toBe(
        'QUOTA_EXCEEDED',
      );
      expect(await leagueItems()).toEqual(new Set());
      for (let i = 0; i < 5; i++)
        await quoted
          .http()
          .post(`/boards/lq/items/q${i}/increment`)
          .send({ amount: i + 1 })
          .expect(200);
      await quoted.http().post('/boards/lq/items/q5/increment').send({ amount: 9 }).expect(429);
      // Events of items it holds are not new: they move league scores, not the league state's size.
      await quoted.http().post('/boards/lq/items/q0/increment').send({ amount: 7 }).expect(200);
      expect(await leagueItems()).toEqual(new Set(['q0', 'q1', 'q2', 'q3', 'q4']));
      clock.advanceMs(7 * 86_400_000);
      await http().get('/boards/lq/leagues/moves').expect(200);
      expect([...(await leagueItems())].every((item) => ['q0', 'q1', 'q2', 'q3', 'q4'].includes(item))).toBe(true);
    });
  });
});
