/**
 * What tracing costs: the built service with tracing off, and on (OTLP over HTTP to a local sink that
 * accepts and drops every export), interleaved rounds of top-10 reads and item increments on one
 * private redis-server. Prints req/s and the service's CPU µs per request, and the on/off ratios.
 * `npm run bench -- --part tracing`; BENCH_DURATION_SEC, BENCH_REPEATS.
 */
import { ChildProcess } from 'node:child_process';
import { createServer } from 'node:http';
import { AddressInfo } from 'node:net';
import { stopChild } from '../harness/processes';
import { traceRedisCall } from '../src/tracing/tracing';
import { cannon, fmt, median, RunFigures } from './load';
import { startRedisServer, startService, waitForHttp } from './process-stats';

const ADMIN_TOKEN = 'bench-admin-token-0123456789';
const REPEATS = Number(process.env.BENCH_REPEATS ?? 3);
const DURATION_SEC = Number(process.env.BENCH_DURATION_SEC ?? 4);
const ROUTES = {
  top: { method: 'GET' as const, path: '/boards/b/top?limit=10' },
  increment: { method: 'POST' as const, path: '/boards/b/items/[<item>]/increment', body: '{}', randomItems: 10_000 },
};

/** What tracing off adds to a Redis call in process: ns per call, traced wrapper vs the bare call. */
async function offPathCost(): Promise<void> {
  const calls = 2_000_000;
  const answered = Promise.resolve(1);
  const bare = () => answered;
  const timeNs = async (call: () => Promise<number>) => {
    const started = process.hrtime.bigint();
    for (let i = 0; i < calls; i++) await call();
    return Number(process.hrtime.bigint() - started) / calls;
  };
  const rounds = [0, 1, 2].map(() => ({ bare: 0, off: 0 }));
  for (const round of rounds) {
    round.bare = await timeNs(bare);
    round.off = await timeNs(() => traceRedisCall('script', () => '{tag}', bare));
  }
  const bareNs = median(rounds.map((r) => r.bare));
  const offNs = median(rounds.map((r) => r.off));
  console.log(
    `Tracing off, in process: a Redis call's wrapper ${offNs.toFixed(1)} ns vs ${bareNs.toFixed(1)} ns bare (median of 3 × ${calls} calls)\n`,
  );
}

type Services = Record<'off' | 'on', { child: ChildProcess; url: string }>;

/** Each route on both services, their rounds interleaved: the median figures, and tracing's cost in req/s. */
async function routeRows(services: Services): Promise<void> {
  console.log('| route | tracing | req/s (median) | p99 ms | CPU µs/request | on/off req/s |');
  console.log('| --- | --- | --- | --- | --- | --- |');
  for (const [name, route] of Object.entries(ROUTES)) {
    const runs: Record<'off' | 'on', RunFigures[]> = { off: [], on: [] };
    for (let round = 0; round < REPEATS; round++)
      for (const mode of ['off', 'on'] as const)
        runs[mode].push(await cannon(services[mode].url, route, services[mode].child.pid, DURATION_SEC));
    const rate = (mode: 'off' | 'on') => median(runs[mode].map((run) => run.reqPerSec));
    for (const mode of ['off', 'on'] as const)
      console.log(
        `| ${name} | ${mode} | ${fmt(rate(mode))} | ${median(runs[mode].map((r) => r.p99))} | ${fmt(median(runs[mode].map((r) => r.cpuMicrosPerRequest)))} | ${mode === 'on' ? (rate('on') / rate('off')).toFixed(2) : ''} |`,
      );
  }
}

export async function tracingBench(): Promise<void> {
  await offPathCost();
  const sink = createServer((request, response) => request.resume().on('end', () => response.end('{}')));
  await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve));
  const sinkUrl = `http://127.0.0.1:${(sink.address() as AddressInfo).port}`;
  const redis = await startRedisServer();
  const children: ChildProcess[] = [redis.child];
  try {
    const services: Services = {
      off: await startService({ REDIS_URL: redis.url, ADMIN_TOKEN, KEY_PREFIX: 'off:', LOG_LEVEL: 'warn' }, true),
      on: await startService(
        {
          REDIS_URL: redis.url,
          ADMIN_TOKEN,
          KEY_PREFIX: 'on:',
          LOG_LEVEL: 'warn',
          OTEL_EXPORTER_OTLP_ENDPOINT: sinkUrl,
        },
        true,
      ),
    };
    // Both stopped at the end whatever fails after this point (a service that never answers included).
    children.push(services.off.child, services.on.child);
    for (const service of Object.values(services)) {
      await waitForHttp(`${service.url}/health/live`);
      await fetch(`${service.url}/admin/boards/b`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ windows: [{ period: '1h', interval: '1m' }] }),
      });
    }
    await routeRows(services);
  } finally {
    for (const child of children.reverse()) await stopChild(child);
    sink.close();
  }
}
