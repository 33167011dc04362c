import { spawn } from 'node:child_process';
import Redis from 'ioredis';
import { freePort, stopChild, waitForPing } from './processes';

/**
 * A redis-server of this test's own with server options of its own (e.g. a small maxmemory), even
 * when REDIS_URL names a shared server: such options must never be set on a server others use.
 */
export async function startPrivateRedis(
  serverArgs: string[],
): Promise<{ url: string; env: Record<string, string>; client: Redis; stop: () => Promise<void> }> {
  const port = await freePort();
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...serverArgs],
    { stdio: 'ignore' },
  );
  if (!(await waitForPing(port, child))) {
    await stopChild(child);
    throw new Error(`redis-server ${serverArgs.join(' ')} did not start`);
  }
  const url = `redis://127.0.0.1:${port}`;
  const client = new Redis(url);
  return {
    url,
    env: { REDIS_URL: url, KEY_PREFIX: 'tb:' },
    client,
    stop: async () => {
      client.disconnect();
      await stopChild(child);
    },
  };
}
