import { NestFastifyApplication } from '@nestjs/platform-fastify';
import request from 'supertest';
import { AppOptions, createApp } from '../src/bootstrap';
import { Clock } from '../src/common/clock';
import { TestRedis } from './redis';

export const ADMIN_TOKEN = 'test-admin-token-0123456789';
export const ADMIN = { Authorization: `Bearer ${ADMIN_TOKEN}` };

/** Boots the whole app on the test file's Redis, ready for supertest (not listening on a port). */
export async function startTestApp(
  redis: Pick<TestRedis, 'env'>,
  clock: Clock,
  env: Record<string, string | undefined> = {},
  options: Pick<AppOptions, 'spanExporter'> = {},
): Promise<NestFastifyApplication> {
  const cpuAtStart = process.cpuUsage();
  const app = await createApp({
    ...options,
    clock,
    // Through process.stdout, so the test environment holds the lines and prints them only for a failing test.
    logDestination: { write: (line: string) => void process.stdout.write(line) },
    env: {
      ...redis.env,
      ADMIN_TOKEN,
      SCHEDULER_ENABLED: 'false',
      LOG_LEVEL: 'error',
      REDIS_COMMAND_TIMEOUT_MS: '5000',
      ...env,
    },
  });
  await app.init();
  await app.getHttpAdapter().getInstance().ready();
  countBoot(process.cpuUsage(cpuAtStart));
  return app;
}

/** Counts a boot and its CPU in the global that TEST_COST_FILE reads (test/support/file-cost.ts). */
function countBoot(cpu: NodeJS.CpuUsage): void {
  const key = Symbol.for('trendboard.appBoots');
  const counted = globalThis as { [key]?: { count: number; cpuSec: number } };
  const boots = (counted[key] ??= { count: 0, cpuSec: 0 });
  boots.count += 1;
  boots.cpuSec += (cpu.user + cpu.system) / 1e6;
}

/** Creates a board over HTTP (one window: the last hour in 1-minute slots, unless `body` says otherwise). */
export async function createBoard(
  app: NestFastifyApplication,
  name: string,
  body: object = { windows: [{ period: '1h', interval: '1m' }] },
): Promise<void> {
  await request(app.getHttpServer()).put(`/admin/boards/${name}`).set(ADMIN).send(body).expect(201);
}
