import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freeFixedPort, freePort, stopChild } from '../../harness/processes';
import { startTestRedis, TestRedis } from '../../harness/redis';
import { runTs } from '../support/run-ts';

const MAIN = runTs(join(__dirname, '../../src/main.ts'));

type Line = Record<string, unknown> & { level: number; msg: string };
const LEVEL = { info: 30, warn: 40, error: 50, fatal: 60 };

/** Waits until `found` holds, checking every 50 ms. */
async function until(found: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!found()) {
    if (performance.now() > deadline) throw new Error('timed out waiting for a log line');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Settings of the services this file starts: ioredis tries again every 10-100 ms while Redis is away,
 * and the access-time flush runs every 100 ms, so an outage shows many failed attempts within a second.
 */
const QUICK = { REDIS_RECONNECT_MAX_MS: '100', STATS_FLUSH_INTERVAL_MS: '100' };

/** Failures the service counts (its /metrics): connection errors, and failed passes of two of its jobs. */
async function failures(base: string): Promise<{ connection: number; scheduler: number; flush: number }> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const value = (series: string) =>
    Number(/ (\S+)$/.exec(text.split('\n').find((line) => line.startsWith(`${series} `)) ?? '')?.[1] ?? 0);
  return {
    connection: value('trendboard_redis_errors_total'),
    scheduler: value('trendboard_job_failures_total{job="ranking-expiry"}'),
    flush: value('trendboard_job_failures_total{job="stats-flush"}'),
  };
}

/** Runs the service until it exits by itself (a failed boot); answers its exit code and output. */
function runToExit(env: Record<string, string>): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, MAIN, {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  return new Promise((resolve) =>
    child.on('exit', (status) => {
      clearTimeout(killer);
      resolve({ status, stdout, stderr });
    }),
  );
}

describe('logs of the running service (src/main.ts, LOG_LEVEL=info)', () => {
  let redis: TestRedis;
  let service: ChildProcess;
  let base: string;
  const lines: Line[] = [];
  const withMsg = (pattern: RegExp) => lines.filter((line) => pattern.test(line.msg));

  beforeAll(async () => {
    redis = await startTestRedis('single', { own: true }); // stopped and restarted below
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    service = spawn(process.execPath, MAIN, {
      env: { ...process.env, ...redis.env, ...QUICK, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let pending = '';
    service.stdout!.on('data', (chunk: Buffer) => {
      const text = pending + chunk.toString();
      const complete = text.split('\n');
      pending = complete.pop()!;
      for (const line of complete.filter(Boolean)) lines.push(JSON.parse(line) as Line);
    });
    await until(() => withMsg(/^trendboard ready on/).length > 0, 30_000);
  });
  afterAll(async () => {
    await stopChild(service);
    await redis.stop();
  });

  it('boots in a few lines at info, saying it is ready only once the port is bound', () => {
    // Fastify's listening line, Nest's start line, ours, and the warning that no API key is configured.
    expect(lines.length).toBeLessThanOrEqual(5);
    expect(lines.every((line) => line.level < LEVEL.error)).toBe(true);
    expect(withMsg(/successfully started/)).toEqual([]);
    const listening = lines.findIndex((line) => /^Server listening at http:\/\/127\.0\.0\.1:\d+$/.test(line.msg));
    const ready = lines.findIndex(
      (line) => line.msg === `trendboard ready on ${base} (dashboard at /dashboard, API at /docs)`,
    );
    expect([listening >= 0, ready > listening]).toEqual([true, true]);
  });

  it('a port already in use: one fatal line naming PORT and HOST, no start line', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as AddressInfo).port;
    try {
      const run = await runToExit({ ...redis.env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info' });
      expect(run.status).toBe(1);
      expect(run.stdout).not.toMatch(/successfully started|ready on/);
      const written = run.stderr.split('\n').filter(Boolean);
      expect(written).toHaveLength(1);
      expect(JSON.parse(written[0])).toMatchObject({
        level: LEVEL.fatal,
        msg: `PORT=${port} on HOST=127.0.0.1 is already in use by another process: stop it, or set PORT (or HOST) to another`,
      });
    } finally {
      taken.close();
    }
  });

  it('writes one line per request: method, route pattern, status, duration, request id', async () => {
    const answer = await fetch(`${base}/boards/nope/items/a%2Fb`, { headers: { 'X-Request-Id': 'log-test-1' } });
    expect(answer.status).toBe(404);
    await until(() => lines.some((line) => line.reqId === 'log-test-1'));
    // A later request's line: a second line of the first would have been written before it.
    await fetch(`${base}/health/live`, { headers: { 'X-Request-Id': 'log-test-1-after' } });
    await until(() => lines.some((line) => line.reqId === 'log-test-1-after'));
    const mine = lines.filter((line) => line.reqId === 'log-test-1');
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({
      level: LEVEL.info,
      msg: 'request',
      method: 'GET',
      route: '/boards/:board/items/:item',
      status: 404,
    });
    expect(typeof mine[0].durationMs).toBe('number');
  });

  it('logs a Redis outage once when it starts (5xx answers at error) and once when Redis is back', async () => {
    if (!redis.pause || !redis.resume) return; // a shared REDIS_URL cannot be stopped from here
    await redis.pause();
    const answer = await fetch(`${base}/boards`, { headers: { 'X-Request-Id': 'log-test-503' } });
    expect(answer.status).toBe(503);
    await until(() => lines.some((line) => line.reqId === 'log-test-503'));
    expect(lines.find((line) => line.reqId === 'log-test-503')).toMatchObject({ level: LEVEL.error, status: 503 });
    await until(() => withMsg(/Redis connection lost/).length > 0);
    // Meanwhile ioredis tries again, each attempt failing, and the scheduler (every second) and the
    // access-time flush fail: waited for until ten attempts, a scheduler pass and two flushes failed.
    const start = await failures(base);
    for (let now = start; ; now = await failures(base)) {
      if (now.connection >= start.connection + 10 && now.scheduler > start.scheduler && now.flush >= start.flush + 2)
        break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const outage = lines.slice(lines.findIndex((line) => /Redis connection lost/.test(line.msg)));
    await redis.resume();
    await until(() => withMsg(/Redis connection back/).length > 0);
    expect(withMsg(/Redis connection lost/).map((line) => line.level)).toEqual([LEVEL.error]);
    expect(withMsg(/Redis connection lost/)[0].msg).toMatch(
      /^Redis connection lost: (nothing accepts connections at \S+|the connection was closed); requests that need Redis answer 503 until it is back$/,
    );
    expect(withMsg(/Redis connection back/)).toHaveLength(1);
    expect(withMsg(/Redis/).length).toBe(2);
    // The scheduler (every second) and the access-time flush fail all along: neither says so each time.
    const loud = outage.filter((line) => line.level >= LEVEL.warn && line.msg !== 'request');
    expect(loud.map((line) => line.msg)).toEqual([withMsg(/Redis connection lost/)[0].msg]);
    expect(JSON.stringify(outage)).not.toMatch(/enableOfflineQueue|Stream isn't writeable|ECONNREFUSED/);
  });

  it('reports a bad configuration at boot as one JSON line naming the variable', () => {
    const run = spawnSync(process.execPath, MAIN, {
      env: { ...process.env, LOG_LEVEL: 'shout', REDIS_URL: 'redis://127.0.0.1:1' },
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(run.status).toBe(1);
    const written = run.stderr.split('\n').filter(Boolean);
    expect(written).toHaveLength(1);
    const line = JSON.parse(written[0]) as Line;
    expect(line).toMatchObject({ level: LEVEL.fatal, msg: 'Invalid configuration:' });
    expect(String(line.problems)).toMatch(/LOG_LEVEL must be one of/);
  });

  it('reads a .env file of the working directory, under the environment', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tb-env-'));
    writeFileSync(join(dir, '.env'), 'LOG_LEVEL=whisper\nEXPIRE_CHUNK=0\n');
    const run = spawnSync(process.execPath, MAIN, {
      cwd: dir,
      env: {
        ...process.env,
        EXPIRE_CHUNK: '100',
        REDIS_URL: 'redis://127.0.0.1:1',
      },
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(run.status).toBe(1);
    const problems = String((JSON.parse(run.stderr.split('\n').filter(Boolean)[0]) as Line).problems);
    expect(problems).toMatch(/LOG_LEVEL must be one of/); // from .env
    expect(problems).not.toMatch(/EXPIRE_CHUNK/); // the environment's 100 wins over .env's 0
  });
});

describe('a boot with PORT=0 while Redis is away (issue #47)', () => {
  let service: ChildProcess;
  let redisServer: ChildProcess | undefined;
  const lines: Line[] = [];
  const withMsg = (pattern: RegExp) => lines.filter((line) => pattern.test(line.msg));
  afterAll(async () => {
    await stopChild(service);
    if (redisServer) await stopChild(redisServer);
  });

  it('says where it listens (the real port) and that it is not ready; "ready" once Redis answers', async () => {
    // Redis starts seconds later: a port outside the ephemeral range stays free until then.
    const redisPort = await freeFixedPort();
    service = spawn(process.execPath, MAIN, {
      env: {
        ...process.env,
        REDIS_URL: `redis://127.0.0.1:${redisPort}`,
        ...QUICK,
        PORT: '0',
        HOST: '127.0.0.1',
        LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let pending = '';
    service.stdout!.on('data', (chunk: Buffer) => {
      const complete = (pending + chunk.toString()).split('\n');
      pending = complete.pop()!;
      for (const line of complete.filter(Boolean)) lines.push(JSON.parse(line) as Line);
    });
    await until(() => withMsg(/^listening on/).length > 0, 30_000);
    const [waiting] = withMsg(/^listening on/);
    const port = Number(
      /^listening on http:\/\/127\.0\.0\.1:(\d+), not ready: Redis does not answer yet/.exec(waiting.msg)?.[1],
    );
    expect(port).toBeGreaterThan(0);
    expect(waiting.level).toBe(LEVEL.warn);
    expect(withMsg(/ready on/)).toEqual([]);
    expect(JSON.stringify(lines)).not.toMatch(/enableOfflineQueue|Stream isn't writeable/);

    redisServer = spawn('redis-server', ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', ''], {
      stdio: 'ignore',
    });
    await until(() => withMsg(/^trendboard ready on/).length > 0, 30_000);
    expect(withMsg(/^trendboard ready on/)[0].msg).toBe(
      `trendboard ready on http://127.0.0.1:${port} (dashboard at /dashboard, API at /docs)`,
    );
    expect((await fetch(`http://127.0.0.1:${port}/health/live`)).status).toBe(200);
  });
});
