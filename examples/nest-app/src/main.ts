import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { AppModule } from './app.module';

/** `npm start`: the example app on PORT (3100; 0: a free one), Redis at EXAMPLE_REDIS_URL. */
async function main(): Promise<void> {
  const app = await NestFactory.create<NestFastifyApplication>(AppModule, new FastifyAdapter());
  app.enableShutdownHooks();
  await app.listen(Number(process.env.PORT ?? 3100), '127.0.0.1');
  console.log(`example app: listening on ${await app.getUrl()}`);
}

void main();
