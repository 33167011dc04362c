import { TOPOLOGIES } from '../../../harness/redis';
import { boardPutter } from '../../support/boards';
import { useApp } from '../../support/e2e';

const T0 = 1_700_002_800_000;

describe.each(TOPOLOGIES)('ranking over HTTP (%s)', (topology) => {
  const e2e = useApp(topology, { startMs: T0, fresh: true });
  const { clock, http } = e2e;
  const createBoard = boardPutter(http);

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
