import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { FakeClock } from '../support/clock';
import { createApp } from '../../src/bootstrap';
import { startTestApp } from '../support/app';
import { startTestRedis } from '../support/redis';

describe('configuration at boot', () => {
  it('refuses to build the app when a variable is bad, naming it', async () => {
    await expect(createApp({ env: { PORT: 'not-a-port', REDIS_URL: 'redis://127.0.0.1:1' } })).rejects.toThrow(
      /PORT must/,
    );
  });

  it('names every bad variable at once, whichever module reads it', async () => {
    const env = { PORT: 'x', TRUST_PROXY: 'proxy.example', API_KEYS: 'short', REDIS_URL: 'redis://127.0.0.1:1' };
    const refusal = createApp({ env });
    await expect(refusal).rejects.toThrow(/^Invalid configuration:\n/);
    await expect(refusal).rejects.toThrow(/PORT[\s\S]*API_KEYS[\s\S]*TRUST_PROXY/);
  });

  it('stops the process at once with exit code 1 and the variable in the message', () => {
    const main = join(__dirname, '../../src/main.ts');
    const run = spawnSync(process.execPath, ['-r', 'ts-node/register/transpile-only', main], {
      env: { ...process.env, LOG_LEVEL: 'shout', REDIS_URL: 'redis://127.0.0.1:1' },
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/LOG_LEVEL must be one of/);
  });

  it('never writes its settings into process.env (a second app in the same process gets its own)', async () => {
    const redis = await startTestRedis();
    try {
      const before = { ...process.env };
      const app = await startTestApp(redis, new FakeClock(1_700_000_000_000));
      await app.close();
      expect(process.env).toEqual(before);
    } finally {
      await redis.stop();
    }
  });
});
