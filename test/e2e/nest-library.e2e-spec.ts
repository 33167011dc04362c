import { BadRequestException, Body, Controller, Get, HttpCode, Injectable, Module, Post } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import Redis from 'ioredis';
import request from 'supertest';
import { CountersService } from '../../src/counters/counters.service';
import { TrendboardModule } from '../../src/library/trendboard.module';
import { RankingService } from '../../src/ranking/ranking.service';
import { StatsService } from '../../src/stats/stats.service';
import { RedisUnavailableError } from '../../src/library';
import { RedisService } from '../../src/redis/redis.service';
import { FakeClock } from '../../harness/clock';
import { startTestRedis, TestRedis } from '../../harness/redis';

const JSON_TYPE = { 'content-type': 'application/json' };
const LIB_ADMIN = 'library-admin-token-0123456789';

async function boot(module: unknown): Promise<NestFastifyApplication> {
  const app = await NestFactory.create<NestFastifyApplication>(module as never, new FastifyAdapter(), {
    logger: false,
    // A module that fails at boot throws here instead of ending the process.
    abortOnError: false,
  });
  await app.init();
  await app.getHttpAdapter().getInstance().ready();
  return app;
}

/** trendboard as a Nest library: the example app (forRootAsync, a controller, a @Cron job), and forRoot. */
describe('TrendboardModule in a Nest app of its own', () => {
  let redis: TestRedis;

  beforeAll(async () => {
    redis = await startTestRedis('single', { own: true }); // the apps here use prefixes of their own
    process.env.EXAMPLE_REDIS_URL = redis.env.REDIS_URL;
    // The job's schedule is read when its module loads: one that cannot fall inside the test (the
    // every-minute default would add a digest whenever the test runs across a minute boundary).
    process.env.DIGEST_CRON = '0 0 0 1 1 *';
  });
  afterAll(async () => {
    delete process.env.EXAMPLE_REDIS_URL;
    delete process.env.DIGEST_CRON;
    await redis.stop();
  });

  it('the example app ranks its posts in process, from a controller and a scheduled job', async () => {
    const { AppModule } = await import('../../examples/nest-app/src/app.module');
    const { DigestJob } = await import('../../examples/nest-app/src/digest.job');
    const app = await boot(AppModule);
    try {
      const http = () => request(app.getHttpServer());
      for (const post of ['a', 'b', 'b', 'c', 'b', 'a']) await http().post(`/posts/${post}/views`).expect(201);
      expect((await http().post('/posts/c/views').expect(201)).body).toEqual({
        post: 'c',
        score: 2,
        rank: 2,
      });
      expect((await http().get('/posts/trending').expect(200)).body).toEqual([
        { post: 'b', score: 3 },
        { post: 'c', score: 2 },
        { post: 'a', score: 2 },
      ]);
      // The service's own routes are not mounted: the library was imported without them.
      await http().get('/boards/posts/top').expect(404);
      const job = app.get(DigestJob);
      await job.digest();
      expect(job.leader).toBe('b');
      const digests = await app.get(CountersService).read('digests', '1');
      expect(digests.samples.reduce((sum, sample) => sum + sample.count, 0)).toBe(1);
      // Its keys live under its own prefix.
      expect(await redis.client.exists('{example:board:posts}:cfg')).toBe(1);
    } finally {
      await app.close();
    }
  });

  it('forRoot with a connection the app owns, every service injectable, the routes mounted on request', async () => {
    const own = new Redis(redis.env.REDIS_URL);
    @Injectable()
    class Uses {
      constructor(
        readonly ranking: RankingService,
        readonly counters: CountersService,
        readonly stats: StatsService,
      ) {}
    }
    @Controller('mine')
    class Mine {
      @Get()
      hello(): string {
        return 'mine';
      }
    }
    @Module({
      imports: [
        TrendboardModule.forRoot({ redis: own, settings: { KEY_PREFIX: 'lib:', ADMIN_TOKEN: LIB_ADMIN }, http: true }),
      ],
      controllers: [Mine],
      providers: [Uses],
    })
    class HostModule {}
    const app = await boot(HostModule);
    try {
      const uses = app.get(Uses);
      await uses.ranking.putBoard({ name: 'b', windows: [{ name: 'm', period: '1h', interval: '1m' }] });
      await uses.stats.record('ctx', 'Latency', 12);
      const http = () => request(app.getHttpServer());
      await http().post('/boards/b/items/x/increment').set(JSON_TYPE).send({ amount: 4 }).expect(200);
      expect((await http().get('/boards/b/top').expect(200)).body.items).toEqual([
        { rank: 1, item: 'x', score: 4, previousRank: null },
      ]);
      await http().get('/mine').expect(200);
    } finally {
      await app.close();
    }
    // The app's own connection stays open after the module closed: its owner closes it.
    expect(await own.ping()).toBe('PONG');
    own.disconnect();
  });

  describe("issue #45 row 10: the mounted routes keep the edge's protections", () => {
    @Controller('mine')
    class Mine {
      @Post()
      @HttpCode(200)
      echo(@Body() body: unknown): unknown {
        return { body };
      }

      @Get('refusal')
      refuse(): never {
        throw new BadRequestException('the app says no');
      }
    }
    const hostWith = (settings: Record<string, string>, clock?: FakeClock) => {
      @Module({
        imports: [
          TrendboardModule.forRoot({
            settings: { REDIS_URL: redis.env.REDIS_URL, KEY_PREFIX: 'lib2:', ...settings },
            clock,
            http: true,
          }),
        ],
        controllers: [Mine],
      })
      class HostModule {}
      return HostModule;
    };
    let app: NestFastifyApplication;
    const http = () => request(app.getHttpServer());
    const answerOf = (response: request.Response) => [response.status, response.body.code];

    beforeAll(async () => {
      app = await boot(hostWith({ ADMIN_TOKEN: LIB_ADMIN }));
      await http()
        .put('/admin/boards/b')
        .set({ ...JSON_TYPE, authorization: `Bearer ${LIB_ADMIN}` })
        .send({ windows: [{ period: '1h', interval: '1m' }] })
        .expect(201);
    });
    afterAll(async () => {
      await app.close();
    });

    it('refuses to boot when the /admin routes would be mounted without ADMIN_TOKEN or an admin key', async () => {
      await expect(boot(hostWith({}))).rejects.toThrow(/set ADMIN_TOKEN, or an API_KEYS key with the admin scope/);
      const keyed = await boot(hostWith({ API_KEYS: 'library-admin-key-0123456789:admin' }));
      await keyed.close();
    });

    it('answers /admin routes only to a credential', async () => {
      const board = { windows: [{ period: '1h', interval: '1m' }] };
      expect(answerOf(await http().put('/admin/boards/open').set(JSON_TYPE).send(board))).toEqual([
        401,
        'ADMIN_TOKEN_MISSING',
      ]);
      expect(answerOf(await http().delete('/admin/boards/b'))).toEqual([401, 'ADMIN_TOKEN_MISSING']);
      const wrong = { ...JSON_TYPE, authorization: 'Bearer wrong-token-0123456789' };
      expect(answerOf(await http().put('/admin/boards/open').set(wrong).send(board))).toEqual([
        403,
        'ADMIN_TOKEN_INVALID',
      ]);
      const top = await http().get('/boards/b/top').expect(200);
      expect([top.headers['x-content-type-options'], top.headers['x-frame-options']]).toEqual(['nosniff', 'DENY']);
    });

    it('refuses a bodyless or form write a page of another origin could send (415), applying nothing', async () => {
      expect(answerOf(await http().post('/boards/b/items/x/increment'))).toEqual([415, 'UNSUPPORTED_MEDIA_TYPE']);
      const form = await http()
        .post('/boards/b/items/x/increment')
        .set('content-type', 'text/plain')
        .send('{"amount":5}');
      expect(answerOf(form)).toEqual([415, 'UNSUPPORTED_MEDIA_TYPE']);
      expect((await http().get('/boards/b/top').expect(200)).body.items).toEqual([]);
    });

    it('refuses a 1 MB array before parsing it, and answers invalid bodies 400 with a code, not 500', async () => {
      const huge = `{"items":[${'1,'.repeat(500_000)}1]}`;
      // The bounded parser's own words: it counted the elements before JSON.parse ran (no timing here:
      // the loop's cost is measured in bench/, not in tests).
      const array = await http().post('/boards/b/increments').set(JSON_TYPE).send(huge);
      expect([...answerOf(array), array.body.message]).toEqual([
        400,
        'INVALID_INPUT',
        'body has an array with more than 1000 elements',
      ]);
      const invalid = await http().post('/boards/b/items/x/increment').set(JSON_TYPE).send({ amount: 'x' });
      expect(answerOf(invalid)).toEqual([400, 'INVALID_INPUT']);
      const unknown = await http().post('/boards/b/items/x/increment').set(JSON_TYPE).send({ amount: 1, extra: 1 });
      expect(answerOf(unknown)).toEqual([400, 'INVALID_INPUT']);
      expect(answerOf(await http().get('/boards/nope/top'))).toEqual([404, 'BOARD_NOT_FOUND']);
    });

    it("issue #47: limits a client to RATE_LIMIT_PER_SEC writes on the mounted routes (429 RATE_LIMITED), not on the app's own", async () => {
      const clock = new FakeClock(Date.UTC(2026, 0, 1));
      const limited = await boot(
        hostWith(
          { ADMIN_TOKEN: LIB_ADMIN, KEY_PREFIX: 'lib3:', RATE_LIMIT_PER_SEC: '1', RATE_LIMIT_BURST: '2' },
          clock,
        ),
      );
      try {
        const write = () => request(limited.getHttpServer()).post('/boards/b/items/x/increment').set(JSON_TYPE);
        await request(limited.getHttpServer())
          .put('/admin/boards/b')
          .set({ ...JSON_TYPE, authorization: `Bearer ${LIB_ADMIN}` })
          .send({ windows: [{ period: '1h', interval: '1m' }] })
          .expect(201);
        expect([(await write()).status, (await write()).status]).toEqual([200, 200]);
        const refused = await write();
        expect([...answerOf(refused), refused.headers['retry-after']]).toEqual([429, 'RATE_LIMITED', '1']);
        for (let i = 0; i < 3; i++)
          await request(limited.getHttpServer()).post('/mine').set(JSON_TYPE).send({}).expect(200);
        clock.advanceSec(1);
        expect((await write()).status).toBe(200);
      } finally {
        await limited.close();
      }
    });

    it("leaves the app's own routes as they were: bodies untouched by the library's pipe, Nest's error answers", async () => {
      const echoed = await http()
        .post('/mine')
        .set(JSON_TYPE)
        .send({ any: 'field', deep: [1, 2] });
      expect(echoed.body).toEqual({ body: { any: 'field', deep: [1, 2] } });
      expect(echoed.headers['x-content-type-options']).toBeUndefined();
      const refused = await http().get('/mine/refusal');
      expect([refused.status, refused.body]).toEqual([
        400,
        { statusCode: 400, message: 'the app says no', error: 'Bad Request' },
      ]);
    });
  });

  it("issue #47: a call while Redis is away (not started yet, or stopped) rejects with RedisUnavailableError, not ioredis' words", async () => {
    const away = await startTestRedis('single', { own: true });
    await away.pause!();
    @Module({
      imports: [TrendboardModule.forRoot({ settings: { REDIS_URL: away.env.REDIS_URL, KEY_PREFIX: 'away:' } })],
    })
    class HostModule {}
    const app = await boot(HostModule);
    const ranking = app.get(RankingService);
    const counters = app.get(CountersService);
    const board = { name: 'b', windows: [{ name: 'm', period: '1h', interval: '1m' }] };
    const unavailable = {
      name: 'RedisUnavailableError',
      code: 'REDIS_UNAVAILABLE',
      status: 503,
      message: 'Redis is unreachable; try again shortly',
    };
    const refusals = async () => [
      await ranking.putBoard(board).catch((error: unknown) => error),
      await ranking.top('b', 'm', 0, 10).catch((error: unknown) => error),
      await counters.increment('c').catch((error: unknown) => error),
    ];
    try {
      for (const refusal of await refusals()) {
        expect(refusal).toBeInstanceOf(RedisUnavailableError);
        expect(refusal).toMatchObject(unavailable);
      }
      await away.resume!();
      expect(await app.get(RedisService).waitUntilReady(5000)).toBe(true);
      await ranking.putBoard(board);
      expect((await counters.increment('c')).body).toMatchObject({ name: 'c', count: 1 });
      await away.pause!();
      for (const refusal of await refusals()) expect(refusal).toMatchObject(unavailable);
      await away.resume!();
    } finally {
      await app.close();
      await away.stop();
    }
  });
});
