/**
 * The hot-path benches' board (bench/hot-path.ts, bench/allocations.ts): 10 000 items on a service's
 * board and the same items and scores in the hand-rolled server's keys (bench/bare-server.ts), and a
 * service instance that did not seed them.
 */
import { join } from 'node:path';
import Redis from 'ioredis';
import { stopChild } from '../harness/processes';
import { startService, waitForHttp } from './process-stats';

export const BENCH_ADMIN_TOKEN = 'bench-admin-token-0123456789';
export const PREFIX = 'hot:';
export const BOARD = 'hot';
export const ITEMS = 10_000;

async function seed(serviceUrl: string, redis: Redis, prefix: string): Promise<void> {
  const put = await fetch(`${serviceUrl}/admin/boards/${BOARD}`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${BENCH_ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ windows: [{ period: '24h', interval: '1h' }] }),
  });
  if (put.status !== 201) throw new Error(`creating the board failed: ${put.status}`);
  for (let first = 0; first < ITEMS; first += 500) {
    const items = Array.from({ length: 500 }, (_, i) => ({
      item: `seed-${first + i}`,
      amount: 1 + ((first + i) % 97),
    }));
    const seeded = await fetch(`${serviceUrl}/boards/${BOARD}/increments`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ items }),
    });
    if (seeded.status !== 200) throw new Error(`seeding the board failed: ${seeded.status}`);
  }
  if (prefix !== PREFIX) return;
  // The hand-rolled server's keys (bare-server.ts), holding the same items and scores.
  const hourStartSec = Math.floor(Date.now() / 3_600_000) * 3600;
  const pipeline = redis.pipeline();
  for (let i = 0; i < ITEMS; i++) {
    pipeline.hincrby(`{${PREFIX}minimal}:slot:${hourStartSec}`, `seed-${i}`, 1 + (i % 97));
    pipeline.zincrby(`{${PREFIX}minimal}:top`, 1 + (i % 97), `seed-${i}`);
  }
  await pipeline.exec();
}

/**
 * A service instance (the build at `dist`, default this checkout's) on a board seeded by another
 * instance, stopped before it starts: growth quotas are per process, so the measured instance's one
 * client (autocannon's address) has its whole budget, as a client that did not just create the
 * 10 000 seeded items; its increments then carry the allowance a client with budget sends.
 */
export async function seededService(
  env: Record<string, string>,
  redis: Redis,
  prefix: string,
  { dist, nodeArgs = [] }: { dist?: string; nodeArgs?: string[] } = {},
) {
  const main = dist === undefined ? undefined : join(dist, 'main.js');
  const seeder = await startService(env, true, main);
  try {
    await waitForHttp(`${seeder.url}/health/ready`);
    await seed(seeder.url, redis, prefix);
  } finally {
    await stopChild(seeder.child);
  }
  const service = await startService(env, true, main, nodeArgs);
  await waitForHttp(`${service.url}/health/ready`);
  return service;
}
