/**
 * Two builds of the service, one route, alternating
 * (`AB_BEFORE_DIST=<other build>/dist npm run bench -- --part service-ab`, about 2 minutes):
 * a small change to the request path moves the service's CPU per request by a few per cent,
 * less than bench/hot-path.ts's rounds tell apart, where each server always runs at the same place of
 * the round. Here two instances of each build run on one private redis-server and board (10 000 items,
 * seeded by an instance of its own, so the measured ones' clients have their quotas' whole budget),
 * in the order now, before, before, now in every round (so neither build always runs first or after a
 * given one), AB_ROUNDS rounds (7) of AB_SEC seconds (3) at 50 connections. Printed: the median req/s
 * and service CPU µs per request of each instance, and redis-server's CPU µs per request during its
 * runs. AB_ROUTE: increment (default), top, or batch (AB_BATCH_ENTRIES increments per request, 100). A build
 * older than its dependencies may need NODE_PATH pointing at a node_modules that still has them.
 * AB_BEFORE_ENV (JSON) adds settings to the "before" instances: `AB_BEFORE_DIST=dist
 * AB_BEFORE_ENV='{"FAST_ROUTES":"false"}'` measures one build with a setting off against its defaults.
 */
import { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { stopChild } from '../harness/processes';
import { loadAverage } from './call-rounds';
import { cannon, fmt, median } from './load';
import { cpuSeconds, startRedisServer, startService, waitForHttp } from './process-stats';

const ADMIN_TOKEN = 'bench-admin-token-0123456789';
const ITEMS = 10_000;
const ROUNDS = Number(process.env.AB_ROUNDS ?? 7);
const SECONDS = Number(process.env.AB_SEC ?? 3);
/** Entries of one request of the batch route (AB_BATCH_ENTRIES, 100). */
const BATCH_ENTRIES = Number(process.env.AB_BATCH_ENTRIES ?? 100);
const ROUTES = {
  increment: {
    method: 'POST' as const,
    path: '/boards/ab/items/[<item>]/increment',
    body: '{"amount":1}',
    randomItems: ITEMS,
  },
  top: { method: 'GET' as const, path: '/boards/ab/top?limit=10' },
  batch: {
    method: 'POST' as const,
    path: '/boards/ab/increments',
    body: JSON.stringify({
      items: Array.from({ length: BATCH_ENTRIES }, (_, i) => ({ item: `seed-${(i * 97) % ITEMS}`, amount: 1 })),
    }),
  },
};

interface Instance {
  name: string;
  child: ChildProcess;
  url: string;
  reqPerSec: number[];
  cpuMicros: number[];
  /** redis-server's CPU µs per request during the instance's runs (the instances take turns on it). */
  redisMicros: number[];
  /** Answers that were not 2xx over every run. */
  non2xx: number;
}

async function seed(env: Record<string, string>): Promise<void> {
  const seeder = await startService(env, true);
  try {
    await waitForHttp(`${seeder.url}/health/ready`);
    const headers = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };
    const board = JSON.stringify({ windows: [{ period: '1h', interval: '1m' }] });
    await fetch(`${seeder.url}/admin/boards/ab`, { method: 'PUT', headers, body: board });
    for (let first = 0; first < ITEMS; first += 1000) {
      const items = Array.from({ length: 1000 }, (_, i) => ({ item: `seed-${first + i}`, amount: 1 + (i % 97) }));
      await fetch(`${seeder.url}/boards/ab/increments`, { method: 'POST', headers, body: JSON.stringify({ items }) });
    }
  } finally {
    await stopChild(seeder.child);
  }
}

async function start(name: string, env: Record<string, string>, main?: string): Promise<Instance> {
  const service = await startService(env, true, main);
  await waitForHttp(`${service.url}/health/ready`);
  return { name, ...service, reqPerSec: [], cpuMicros: [], redisMicros: [], non2xx: 0 };
}

export async function serviceAbBench(): Promise<void> {
  const before = process.env.AB_BEFORE_DIST;
  if (!before) throw new Error('AB_BEFORE_DIST=<dir>/dist names the build to compare with');
  const route = ROUTES[(process.env.AB_ROUTE ?? 'increment') as keyof typeof ROUTES];
  if (!route) throw new Error(`AB_ROUTE: one of ${Object.keys(ROUTES).join(', ')}`);
  const redis = await startRedisServer();
  const instances: Instance[] = [];
  try {
    const env = { REDIS_URL: redis.url, ADMIN_TOKEN, KEY_PREFIX: 'ab:' };
    await seed(env);
    const beforeMain = join(before, 'main.js');
    const beforeEnv = { ...env, ...(JSON.parse(process.env.AB_BEFORE_ENV ?? '{}') as Record<string, string>) };
    instances.push(await start('now', env), await start('before', beforeEnv, beforeMain));
    instances.push(await start('before (2)', beforeEnv, beforeMain), await start('now (2)', env));
    for (const instance of instances) await cannon(instance.url, route, instance.child.pid, 1);
    const loads = [loadAverage()];
    for (let round = 0; round < ROUNDS; round++) {
      for (const instance of instances) {
        const redisCpuBefore = cpuSeconds(redis.child.pid);
        const run = await cannon(instance.url, route, instance.child.pid, SECONDS);
        // A loaded machine times out a few Redis calls (503): counted and shown, a run is void past 1 %.
        if (run.non2xx > run.ok / 100) throw new Error(`${instance.name}: ${run.non2xx} answers were not 2xx`);
        instance.non2xx += run.non2xx;
        instance.reqPerSec.push(run.reqPerSec);
        instance.cpuMicros.push(run.cpuMicrosPerRequest);
        instance.redisMicros.push(((cpuSeconds(redis.child.pid) - redisCpuBefore) * 1e6) / Math.max(1, run.ok));
      }
    }
    loads.push(loadAverage());
    report(route.path, instances, loads);
  } finally {
    for (const instance of instances) await stopChild(instance.child);
    await stopChild(redis.child);
  }
}

function report(path: string, instances: Instance[], loads: string[]): void {
  console.log(`${ROUNDS} rounds x ${SECONDS} s of ${path}, 50 connections; load average ${loads.join(' → ')}.\n`);
  console.log(
    '| build | req/s, median | service CPU µs per request, median | per round (µs) | Redis CPU µs per request, median | not 2xx |',
  );
  console.log('| --- | ---: | ---: | --- | ---: | ---: |');
  for (const i of instances) {
    const rounds = i.cpuMicros.map((v) => Math.round(v)).join(', ');
    const redis = median(i.redisMicros).toFixed(1);
    console.log(
      `| ${i.name} | ${fmt(median(i.reqPerSec))} | ${Math.round(median(i.cpuMicros))} | ${rounds} | ${redis} | ${i.non2xx} |`,
    );
  }
}
