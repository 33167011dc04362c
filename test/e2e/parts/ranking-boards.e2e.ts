import { ADMIN } from '../../../harness/app';
import { TOPOLOGIES } from '../../../harness/redis';
import { boardPutter } from '../../support/boards';
import { useApp } from '../../support/e2e';

const T0 = 1_700_002_800_000;

describe.each(TOPOLOGIES)('ranking over HTTP: boards (%s)', (topology) => {
  const e2e = useApp(topology, { startMs: T0, fresh: true });
  const { http } = e2e;
  const createBoard = boardPutter(http);

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
        { windows: [{ period: '1h', interval: '1m', snapshots: 5 }] },
        /windows\.0\.snapshots must be an object like \{ \\"keep\\": 24, \\"top\\": 100 \}/,
      ],
      [{ windows: [{ period: '1h', interval: '1m', snapshots: null }] }, /windows\.0\.snapshots must not be null/],
      [
        { windows: [{ period: '1h', interval: '1m', archive: 'x' }] },
        /windows\.0\.archive must be an object like \{ \\"keep\\": 12, \\"top\\": 100 \}/,
      ],
      [
        { windows: [{ period: '1h', interval: '1m' }], segments: [] },
        /"segments must be an object like \{ \\"max\\": 100 \}/,
      ],
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
});
