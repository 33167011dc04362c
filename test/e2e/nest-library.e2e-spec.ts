import { Controller, Get, Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import Redis from 'ioredis';
import request from 'supertest';
import { AppModule } from '../../examples/nest-app/src/app.module';
import { DigestJob } from '../../examples/nest-app/src/digest.job';
import { CountersService } from '../../src/counters/counters.service';
import { TrendboardModule } from '../../src/library/trendboard.module';
import { RankingService } from '../../src/ranking/ranking.service';
import { StatsService } from '../../src/stats/stats.service';
import { startTestRedis, TestRedis } from '../support/redis';

const JSON_TYPE = { 'content-type': 'application/json' };

async function boot(module: unknown): Promise<NestFastifyApplication> {
  const app = await NestFactory.create<NestFastifyApplication>(module as never, new FastifyAdapter(), {
    logger: false,
  });
  await app.init();
  await app.getHttpAdapter().getInstance().ready();
  return app;
}

/** trendboard as a Nest library: the example app (forRootAsync, a controller, a @Cron job), and forRoot. */
describe('TrendboardModule in a Nest app of its own', () => {
  let redis: TestRedis;

  beforeAll(async () => {
    redis = await startTestRedis();
    process.env.EXAMPLE_REDIS_URL = redis.env.REDIS_URL;
  });
  afterAll(async () => {
    delete process.env.EXAMPLE_REDIS_URL;
    await redis.stop();
  });

  it('the example app ranks its posts in process, from a controller and a scheduled job', async () => {
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
      imports: [TrendboardModule.forRoot({ redis: own, settings: { KEY_PREFIX: 'lib:' }, http: true })],
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
});
