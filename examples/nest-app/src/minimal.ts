import 'reflect-metadata';
import { Controller, Get, Module, Param, Post } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { RankingService, TrendboardModule } from '@trendboard/nest';

@Controller('posts')
class PostsController {
  constructor(private readonly ranking: RankingService) {}

  @Post(':post/views')
  async view(@Param('post') post: string) {
    const { body } = await this.ranking.increment('posts', post, 1);
    return body.windows.hour; // { score, rank, previousRank }
  }

  @Get('trending')
  async trending() {
    return (await this.ranking.top('posts', 'hour', 0, 10)).items; // [{ rank, item, score, previousRank }]
  }
}

@Module({
  imports: [TrendboardModule.forRoot({ settings: { REDIS_URL: process.env.REDIS_URL, KEY_PREFIX: 'app:' } })],
  controllers: [PostsController],
})
class AppModule {}

async function main() {
  const app = await NestFactory.create(AppModule, new FastifyAdapter());
  await app.init(); // connects to Redis: the services answer from here on
  const hour = { name: 'hour', period: '1h', interval: '5m' };
  await app.get(RankingService).putBoard({ name: 'posts', windows: [hour] }); // the same PUT again changes nothing
  await app.listen(Number(process.env.PORT ?? 3000), '127.0.0.1');
  console.log(`listening on ${await app.getUrl()}`);
}

void main();
