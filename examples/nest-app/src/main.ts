import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { AppModule } from './app.module';

/** `npx ts-node examples/nest-app/src/main.ts`: the example app on port 3100 (Redis: EXAMPLE_REDIS_URL). */
async function main(): Promise<void> {
  const app = await NestFactory.create<NestFastifyApplication>(AppModule, new FastifyAdapter());
  app.enableShutdownHooks();
  await app.listen(Number(process.env.PORT ?? 3100), '127.0.0.1');
}

void main();
