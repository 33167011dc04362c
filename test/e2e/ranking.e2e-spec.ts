import { ADMIN } from '../support/app';
import { useApp } from '../support/e2e';
import { TOPOLOGIES } from '../support/redis';

const T0 = 1_700_002_800_000;

describe.each(TOPOLOGIES)('ranking over HTTP (%s)', (topology) => {
  const e2e = useApp(topology, { startMs: T0, fresh: true });
  const { clock, http } = e2e;
  const createBoard = (
    name = 'posts',
    body: object = {
      windows: [
        { period: '1h', interval: '5m' },
        { name: 'day', period: '24h', interval: '1h' },
      ],
    },
  ) => http().put(`/admin/boards/${name}`).set(ADMIN).send(body);

  describe('boards', () => {
    it('creates (201), repeats (200), conflicts (409), resets (200), lists, reads and deletes a board', async () => {
      const created = await createBoard();
      expect(created.status).toBe(201);
      expect(created.body).toEqual({
        name: 'posts',
        shards: 1,
        windows: [
          { name: '1h', period: 3600, interval: 300 },
          { name: 'day', period: 86400, interval: 3600 },
        ],
      });
      expect((await createBoard()).status).toBe(200);
      const conflict = await createBoard('posts', {
        windows: [
          { period: '1h', interval: '10m' },
          { name: 'day', period: '24h', interval: '1h' },
        ],
      });
      expect(conflict.status).toBe(409);
      expect(conflict.body.message).toMatch(/window 1h would change/);
      const reset = await http()
        .put('/admin/boards/posts?reset=true')
        .set(ADMIN)
        .send({ windows: [{ period: '1h', interval: '10m' }] });
      expect(reset.status).toBe(200);
      expect(reset.body.windows).toEqual([{ name: '1h', period: 3600, interval: 600 }]);
      expect((await http().get('/boards')).body).toEqual({ boards: [reset.body], total: 1, nextCursor: null });
      expect((await http().get('/boards/posts')).body).toEqual(reset.body);
      expect((await http().delete('/admin/boards/posts').set(ADMIN)).status).toBe(204);
      expect((await http().get('/boards/posts')).status).toBe(404);
      expect((await http().delete('/admin/boards/posts').set(ADMIN)).status).toBe(404);
      expect(await e2e.redis().keys('board:posts*')).toEqual([]);
    });

    it('pages the board list by name: limit and offset or cursor, with the total', async () => {
      const names = ['b', 'a', 'c:1', 'B', 'c', 'a-2'];
      for (const name of names) expect((await createBoard(name)).status).toBe(201);
      const sorted = [...names].sort(); // byte order: B, a, a-2, b, c, c:1
      const page = async (query: string) => {
        const reply = await http().get(`/boards${query}`);
        expect(reply.status).toBe(200);
        return reply.body as { boards: Array<{ name: string }>; total: number; nextCursor: string | null };
      };
      const first = await page('?limit=4');
      expect(first.boards.map((b) => b.name)).toEqual(sorted.slice(0, 4));
      expect([first.total, first.nextCursor]).toEqual([6, 'b']);
      const rest = await page(`?limit=4&cursor=${first.nextCursor}`);
      expect(rest.boards.map((b) => b.name)).toEqual(sorted.slice(4));
      expect([rest.total, rest.nextCursor]).toEqual([6, null]);
      expect((await page('?limit=2&offset=3')).boards.map((b) => b.name)).toEqual(sorted.slice(3, 5));
      expect((await page('?offset=6')).boards).toEqual([]);
      // A board deleted between two pages moves no other board across the cursor.
      await http().delete('/admin/boards/a').set(ADMIN);
      expect((await page('?limit=2&cursor=a')).boards.map((b) => b.name)).toEqual(['a-2', 'b']);
      for (const [query, field] of [
        ['?limit=0', 'limit'],
        ['?limit=1001', 'limit'],
        ['?offset=-1', 'offset'],
        ['?offset=1&cursor=a', 'cursor'],
        ['?cursor=a%7Bb', 'cursor'],
        ['?limit=x', 'limit'],
      ]) {
        const refused = await http().get(`/boards${query}`);
        expect([query, refused.status, refused.body.code]).toEqual([query, 400, 'INVALID_INPUT']);
        expect(refused.body.message).toMatch(field);
      }
    });

    it.each([
      [{ windows: [] }, /windows must contain at least 1/],
      [{}, /windows must be an array/],
      [{ windows: 'x' }, /windows must be an array/],
      [{ windows: [{ period: '1h', interval: '1m' }], shards: '4' }, /shards must be an integer/],
      [{ windows: [{ period: '1h' }] }, /windows\.0\.interval must be a duration/],
      [{ windows: [{ period: '1h', interval: '7m' }] }, /windows\.0\.period must be a multiple/],
      [{ windows: [{ period: '30d', interval: '1m' }] }, /43200 slots; at most 10000 are allowed/],
      [{ windows: [{ period: 'x', interval: '1m' }] }, /windows\.0\.period must be a duration/],
      // Issue #47: a period past the cap names it.
      [{ windows: [{ period: '401d', interval: '1d' }] }, /windows\.0\.period must be a duration.*at most 400d/],
      [{ windows: [{ name: 'a{b}', period: '1h', interval: '1m' }] }, /windows\.0\.name must be/],
      [{ windows: [{ period: '1h', interval: '1m' }], shards: 0 }, /shards must not be less than 1/],
      [{ windows: [{ period: '1h', interval: '1m' }], shards: null }, /shards must not be null/],
      [{ windows: [{ name: null, period: '1h', interval: '1m' }] }, /windows\.0\.name must not be null/],
      [{ windows: [{ period: '1h', interval: '1m' }], extra: 1 }, /property extra should not exist/],
      [
        { windows: Array.from({ length: 9 }, (_, i) => ({ name: `w${i}`, period: 60, interval: 60 })) },
        /windows must contain no more than 8/,
      ],
    ])('refuses board %j with 400', async (body, message) => {
      const response = await createBoard('b', body);
      expect(response.status).toBe(400);
      expect(response.body).toMatchObject({ statusCode: 400, error: 'Bad Request' });
      expect(JSON.stringify(response.body.message)).toMatch(message);
    });

    it('serves a sharded board like any other', async () => {
      const created = await createBoard('s', { windows: [{ period: '1h', interval: '1m' }], shards: 4 });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({ name: 's', shards: 4 });
      for (const [item, amount] of [
        ['a', 3],
        ['b', 5],
        ['c', 3],
        ['d', 1],
      ] as const) {
        expect((await http().post(`/boards/s/items/${item}/increment`).send({ amount })).status).toBe(200);
      }
      expect(
        (
          await http()
            .post('/boards/s/increments')
            .send({
              items: [
                { item: 'e', amount: 4 },
                { item: 'a', amount: 1 },
              ],
            })
        ).body,
      ).toMatchObject({ count: 2 });
      const top = await http().get('/boards/s/top?limit=3&offset=1');
      expect(top.body.items).toEqual([
        { rank: 2, item: 'e', score: 4, previousRank: null },
        { rank: 2, item: 'a', score: 4, previousRank: null },
        { rank: 4, item: 'c', score: 3, previousRank: null },
      ]);
      expect((await http().get('/boards/s/items/c')).body).toMatchObject({ score: 3, rank: 4, percentile: 25 });
      expect(
        (await http().get('/boards/s/items/e/around?radius=1')).body.items.map((row: { item: string }) => row.item),
      ).toEqual(['b', 'e', 'a']);
      expect((await createBoard('s', { windows: [{ period: '1h', interval: '1m' }], shards: 2 })).status).toBe(409);
    });

    it('guards admin routes: 401 without a token, 403 with a wrong one', async () => {
      const body = { windows: [{ period: '1h', interval: '1m' }] };
      const missing = await http().put('/admin/boards/x').send(body);
      expect(missing.status).toBe(401);
      expect(missing.body).toEqual({
        statusCode: 401,
        message: 'Authorization: Bearer <ADMIN_TOKEN> (or an API key with the admin scope) is required',
        error: 'Unauthorized',
        code: 'ADMIN_TOKEN_MISSING',
      });
      const wrong = await http().put('/admin/boards/x').set('Authorization', 'Bearer nope').send(body);
      expect([wrong.status, wrong.body.code]).toEqual([403, 'ADMIN_TOKEN_INVALID']);
      expect((await http().delete('/admin/boards/x').set('Authorization', 'Basic abc')).status).toBe(401);
      // Nothing of the board (access times of these requests may be flushed meanwhile: not checked here).
      expect(await e2e.redis().keys('board*')).toEqual([]);
    });

    it('refuses bad board names', async () => {
      expect((await http().get('/boards/a%20b')).status).toBe(400);
      expect((await http().get(`/boards/${'x'.repeat(65)}`)).status).toBe(400);
      expect((await http().get('/boards/%7Bx%7D/top')).body).toMatchObject({
        message: 'board must be 1-64 characters of A-Z a-z 0-9 _ . : -',
        code: 'INVALID_INPUT',
      });
    });
  });

  describe('writes and reads', () => {
    beforeEach(async () => {
      expect((await createBoard()).status).toBe(201);
    });

    it('walks a board from increments to top-N, item, around and likes', async () => {
      const first = await http().post('/boards/posts/items/post-1/increment').send({ amount: 5 });
      expect(first.status).toBe(200);
      expect(first.body).toEqual({
        board: 'posts',
        item: 'post-1',
        windows: { '1h': { score: 5, rank: 1, previousRank: null }, day: { score: 5, rank: 1, previousRank: null } },
        draining: false,
      });
      expect(
        (await http().post('/boards/posts/items/post-2/increment').set('Content-Type', 'application/json')).body
          .windows['1h'],
      ).toEqual({
        score: 1,
        rank: 2,
        previousRank: null,
      });
      const batch = await http()
        .post('/boards/posts/increments')
        .send({ items: [{ item: 'post-3', amount: 3 }, { item: 'post-2' }] });
      expect(batch.body).toEqual({ board: 'posts', count: 2, draining: false });
      const like = await http().post('/boards/posts/items/post-2/likes').send({ userId: 'ann' });
      expect(like.body).toMatchObject({
        board: 'posts',
        item: 'post-2',
        userId: 'ann',
        counted: true,
        windows: { '1h': { score: 3, rank: 2, previousRank: null } },
      });
      expect((await http().post('/boards/posts/items/post-2/likes').send({ userId: 'ann' })).body.counted).toBe(false);

      const top = await http().get('/boards/posts/top?limit=2');
      expect(top.body).toEqual({
        board: 'posts',
        window: '1h',
        from: T0 / 1000 - 3300,
        to: T0 / 1000 + 300,
        draining: false,
        items: [
          { rank: 1, item: 'post-1', score: 5, previousRank: null },
          { rank: 2, item: 'post-3', score: 3, previousRank: null },
        ],
      });
      expect((await http().get('/boards/posts/top?window=day&offset=2')).body.items).toEqual([
        { rank: 2, item: 'post-2', score: 3, previousRank: null },
      ]);
      expect((await http().get('/boards/posts/items/post-3?window=day')).body).toMatchObject({
        item: 'post-3',
        score: 3,
        rank: 2,
        percentile: 50,
        from: T0 / 1000 - 82800,
      });
      expect((await http().get('/boards/posts/items/nobody')).body).toMatchObject({
        score: 0,
        rank: null,
        percentile: null,
      });
      expect(
        (await http().get('/boards/posts/items/post-1/around?radius=1')).body.items.map(
          (i: { item: string }) => i.item,
        ),
      ).toEqual(['post-1', 'post-3']);

      const unlike = await http().delete('/boards/posts/items/post-2/likes/ann');
      expect(unlike.body).toMatchObject({
        counted: true,
        windows: { '1h': { score: 2, rank: 3, previousRank: null } },
      });
      expect((await http().delete('/boards/posts/items/post-2/likes/ann')).body.counted).toBe(false);
    });

    it('forgets what left the window as time passes', async () => {
      await http().post('/boards/posts/items/old/increment').send({ amount: 10 });
      clock.advanceSec(3600);
      await http().post('/boards/posts/items/new/increment').set('Content-Type', 'application/json');
      expect((await http().get('/boards/posts/top')).body.items).toEqual([
        { rank: 1, item: 'new', score: 1, previousRank: null },
      ]);
      expect((await http().get('/boards/posts/top?window=day')).body.items).toEqual([
        { rank: 1, item: 'old', score: 10, previousRank: null },
        { rank: 2, item: 'new', score: 1, previousRank: null },
      ]);
    });

    it('takes item and user ids with any printable characters, URL-encoded', async () => {
      const id = 'a/b c?d#é{x}%';
      const response = await http()
        .post(`/boards/posts/items/${encodeURIComponent(id)}/increment`)
        .set('Content-Type', 'application/json');
      expect(response.status).toBe(200);
      expect(response.body.item).toBe(id);
      expect((await http().get(`/boards/posts/items/${encodeURIComponent(id)}`)).body.score).toBe(1);
      const like = await http()
        .post(`/boards/posts/items/${encodeURIComponent(id)}/likes`)
        .send({ userId: 'ü/ser' });
      expect(like.body.counted).toBe(true);
      expect(
        (await http().delete(`/boards/posts/items/${encodeURIComponent(id)}/likes/${encodeURIComponent('ü/ser')}`)).body
          .counted,
      ).toBe(true);
    });

    it.each([
      ['amount 0', { amount: 0 }, /amount must not be zero/],
      ['amount too big', { amount: 1_000_001 }, /amount must not be greater than 1000000/],
      ['amount too small', { amount: -1_000_001 }, /amount must not be less than -1000000/],
      ['amount not integer', { amount: 1.5 }, /amount must be an integer/],
      ['amount as string', { amount: '5' }, /amount must be an integer/],
      ['amount null (not taken for absent)', { amount: null }, /amount must not be null/],
      ['unknown field', { amount: 1, by: 'me' }, /property by should not exist/],
    ])('refuses an increment with %s, counting nothing', async (_, body, message) => {
      const response = await http().post('/boards/posts/items/x/increment').send(body);
      expect(response.status).toBe(400);
      expect(JSON.stringify(response.body.message)).toMatch(message);
      expect((await http().get('/boards/posts/items/x')).body.score).toBe(0);
    });

    it('refuses malformed JSON, oversize and control-character ids with 400', async () => {
      const malformed = await http()
        .post('/boards/posts/items/x/increment')
        .set('content-type', 'application/json')
        .send('{"amount": ');
      expect(malformed.status).toBe(400);
      expect(malformed.body).toMatchObject({ statusCode: 400, error: 'Bad Request' });
      const long = await http()
        .post(`/boards/posts/items/${'x'.repeat(129)}/increment`)
        .set('Content-Type', 'application/json');
      expect(long.status).toBe(400);
      expect(long.body.message).toBe('item must be 1-128 printable characters');
      expect(
        (await http().post('/boards/posts/items/a%00b/increment').set('Content-Type', 'application/json')).status,
      ).toBe(400);
      expect((await http().post('/boards/posts/items/x/likes').send({ userId: '' })).status).toBe(400);
      expect((await http().post('/boards/posts/items/x/likes').send({})).body.message).toBe(
        'userId must be 1-128 printable characters',
      );
      expect(await e2e.redis().client.exists(`{${e2e.redis().prefix}board:posts}:1h:top`)).toBe(0);
    });

    it('refuses a batch with any bad entry, naming it, and applies nothing', async () => {
      const response = await http()
        .post('/boards/posts/increments')
        .send({
          items: [
            { item: 'a', amount: 1 },
            { item: 'b', amount: 0 },
          ],
        });
      expect(response.status).toBe(400);
      expect(response.body.message).toBe('items.1.amount must not be zero');
      const nullAmount = await http()
        .post('/boards/posts/increments')
        .send({ items: [{ item: 'a' }, { item: 'b', amount: null }] });
      expect(nullAmount.status).toBe(400);
      expect(nullAmount.body.message).toBe('items.1.amount must not be null');
      expect((await http().post('/boards/posts/increments').send({ items: [] })).status).toBe(400);
      expect((await http().post('/boards/posts/increments').send({})).body.message).toBe('items must be an array');
      const tooMany = Array.from({ length: 1001 }, (_, i) => ({ item: `i${i}` }));
      // Refused by the JSON parser's array bound, before any DTO is built.
      expect((await http().post('/boards/posts/increments').send({ items: tooMany })).body.message).toBe(
        'body has an array with more than 1000 elements',
      );
      expect((await http().get('/boards/posts/items/a')).body.score).toBe(0);
    });

    it.each([
      ['/boards/posts/top?limit=0', /limit must not be less than 1/],
      ['/boards/posts/top?limit=1001', /limit must not be greater than 1000/],
      ['/boards/posts/top?limit=abc', /limit must be an integer/],
      ['/boards/posts/top?offset=-1', /offset must not be less than 0/],
      ['/boards/posts/top?window=a%20b', /window must be/],
      ['/boards/posts/top?sort=asc', /property sort should not exist/],
      ['/boards/posts/items/x/around?radius=101', /radius must not be greater than 100/],
    ])('refuses %s with 400', async (url, message) => {
      const response = await http().get(url);
      expect(response.status).toBe(400);
      expect(JSON.stringify(response.body.message)).toMatch(message);
    });

    it('answers 404 for an unknown board or window', async () => {
      expect((await http().post('/boards/nope/items/x/increment').set('Content-Type', 'application/json')).status).toBe(
        404,
      );
      expect(
        (
          await http()
            .post('/boards/nope/increments')
            .send({ items: [{ item: 'x' }] })
        ).status,
      ).toBe(404);
      expect((await http().post('/boards/nope/items/x/likes').send({ userId: 'u' })).status).toBe(404);
      const window = await http().get('/boards/posts/top?window=week');
      expect(window.status).toBe(404);
      expect(window.body.message).toBe('window "week" does not exist on board "posts" (windows: 1h, day)');
      expect(await e2e.redis().keys('board:nope*')).toEqual([]);
    });
  });

  describe('operations', () => {
    it('answers health and the OpenAPI document', async () => {
      expect((await http().get('/health/live')).status).toBe(200);
      const ready = await http().get('/health/ready');
      expect(ready.status).toBe(200);
      expect(ready.body.info.redis.status).toBe('up');
      const docs = await http().get('/docs-json');
      expect(docs.status).toBe(200);
      expect(Object.keys(docs.body.paths)).toEqual(
        expect.arrayContaining([
          '/admin/boards/{board}',
          '/boards',
          '/boards/{board}/items/{item}/increment',
          '/boards/{board}/top',
          '/health/ready',
        ]),
      );
      expect(docs.body.components.schemas.PutBoardDto.properties.windows).toBeDefined();
    });
  });
});
