import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { createApp } from '../../src/bootstrap';
import { useSingleNodeApp } from '../support/e2e';
import { runTs } from '../support/run-ts';

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
    const run = spawnSync(process.execPath, runTs(join(__dirname, '../../src/main.ts')), {
      env: { ...process.env, LOG_LEVEL: 'shout', REDIS_URL: 'redis://127.0.0.1:1' },
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/LOG_LEVEL must be one of/);
  });

  describe('with a Redis', () => {
    const { startApp } = useSingleNodeApp({ noApp: true });

    it('never writes its settings into process.env (a second app in the same process gets its own)', async () => {
      const before = { ...process.env };
      await startApp();
      expect(process.env).toEqual(before);
    });
  });
});
