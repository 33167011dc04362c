import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { startTestApp } from '../../harness/app';
import { FakeClock } from '../../harness/clock';
import { startTestRedis, TestRedis, Topology } from '../../harness/redis';
import { ListeningHttp, listenForTests, TestHttp } from '../../harness/test-http';

/** The HTTP app of a property spec: its fields are set once the describe's beforeAll ran (useTestApp). */
export interface TestAppWorld {
  redis: TestRedis;
  app: NestFastifyApplication;
  clock: FakeClock;
  /** Requests to the app, over kept-alive connections to its listening port. */
  http(): TestHttp;
  listening?: ListeningHttp;
}

/** A world whose app is not booted yet (boot sets it), driven by a FakeClock from `startMs`. */
function newWorld(startMs: number): TestAppWorld {
  const world = { clock: new FakeClock(startMs), http: () => world.listening!.http() } as TestAppWorld;
  return world;
}

/** EXPIRE_CHUNK 3: expiry drains in several calls. */
const DRAINING_APART = { EXPIRE_CHUNK: '3' };

/**
 * The world's Redis (`topology`; `own`: a server of its own, whose SLOWLOG holds only its commands) and
 * its app on it, with `env` (by default DRAINING_APART).
 */
async function boot(
  world: TestAppWorld,
  topology: Topology,
  own = false,
  env: Record<string, string> = DRAINING_APART,
): Promise<void> {
  world.redis = await startTestRedis(topology, { own });
  world.app = await startTestApp(world.redis, world.clock, env);
  world.listening = await listenForTests(world.app);
}

async function close(world: TestAppWorld): Promise<void> {
  world.listening?.close();
  await world.app?.close();
  await world.redis?.stop();
}

/** Registers, in the calling describe block, a world of its own (`topology`): booted beforeAll, closed afterAll. */
export function useTestApp(topology: Topology, startMs: number, own = false): TestAppWorld {
  const world = newWorld(startMs);
  beforeAll(() => boot(world, topology, own));
  afterAll(() => close(world));
  return world;
}

/**
 * useTestApp shared by a file's describe blocks: call it at the file's top level, then ask it for a
 * topology's world inside each block. The first block of a topology boots its Redis and app, the
 * file's end closes them. For a describe.each over board options, whose boards are named apart: an app
 * booted per block took about a seventh of such a file's CPU. The blocks share the clock, so they must
 * read time relative to it (the clock only moves forward). `env`: the apps' settings (by default DRAINING_APART).
 */
export function useSharedTestApps(
  startMs: number,
  env: Record<string, string> = DRAINING_APART,
): (topology: Topology) => TestAppWorld {
  const worlds = new Map<Topology, TestAppWorld>();
  afterAll(async () => {
    for (const world of worlds.values()) await close(world);
  });
  return (topology) => {
    const world = worlds.get(topology) ?? newWorld(startMs);
    worlds.set(topology, world);
    beforeAll(async () => {
      if (!world.app) await boot(world, topology, false, env);
    });
    return world;
  };
}
