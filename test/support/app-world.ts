import { NestFastifyApplication } from '@nestjs/platform-fastify';
import request from 'supertest';
import { startTestApp } from '../../harness/app';
import { FakeClock } from '../../harness/clock';
import { startTestRedis, TestRedis, Topology } from '../../harness/redis';

/** The HTTP app of a property spec: its fields are set once the describe's beforeAll ran (useTestApp). */
export interface TestAppWorld {
  redis: TestRedis;
  app: NestFastifyApplication;
  clock: FakeClock;
  http(): ReturnType<typeof request>;
}

/**
 * Registers, in the calling describe block, a Redis of its own (`topology`) and the app on it, driven by
 * a FakeClock from `startMs`, with EXPIRE_CHUNK 3 (so expiry drains in several calls); closes both afterAll.
 */
export function useTestApp(topology: Topology, startMs: number): TestAppWorld {
  const world = {
    clock: new FakeClock(startMs),
    http: () => request(world.app.getHttpServer()),
  } as TestAppWorld;
  beforeAll(async () => {
    world.redis = await startTestRedis(topology);
    world.app = await startTestApp(world.redis, world.clock, { EXPIRE_CHUNK: '3' });
  });
  afterAll(async () => {
    await world.app.close();
    await world.redis.stop();
  });
  return world;
}
