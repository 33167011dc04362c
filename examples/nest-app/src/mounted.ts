import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { TrendboardModule } from '@trendboard/nest';

/**
 * The service's ranking, counters and stats routes mounted in an app (`http: true`), guarded by
 * ADMIN_TOKEN: `REDIS_URL=redis://… ADMIN_TOKEN=<a long secret> node dist/src/mounted.js`.
 */
@Module({
  imports: [
    TrendboardModule.forRoot({
      settings: { REDIS_URL: process.env.REDIS_URL, ADMIN_TOKEN: process.env.ADMIN_TOKEN, KEY_PREFIX: 'mounted:' },
      http: true,
    }),
  ],
})
class MountedModule {}

async function main() {
  const app = await NestFactory.create(MountedModule, new FastifyAdapter());
  await app.listen(Number(process.env.PORT ?? 3000), '127.0.0.1');
  console.log(`listening on ${await app.getUrl()}`);
}

void main();
