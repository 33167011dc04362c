import { spawn } from 'node:child_process';
import { join } from 'node:path';
import request from 'supertest';
import { SystemClock } from '../../src/common/clock';
import { ADMIN, ADMIN_TOKEN } from '../../harness/app';
import { useSingleNodeApp } from '../support/e2e';

const DEMO = join(__dirname, '../../scripts/demo.ts');

/** Runs `npm run demo`'s script against a service that is already up; answers its exit code and output. */
function runDemo(base: string, args: string[] = []): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['-r', 'ts-node/register/transpile-only', DEMO, ...args], {
      env: { ...process.env, DEMO_URL: base, ADMIN_TOKEN, DEMO_SECONDS: '2', DEMO_TICK_MS: '100' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('exit', (code) => resolve({ code, output }));
  });
}

describe('npm run demo (scripts/demo.ts)', () => {
  const e2e = useSingleNodeApp({ clock: new SystemClock(), listen: true });
  let base: string;

  beforeAll(async () => {
    base = (await e2e.app().getUrl()).replace('[::1]', '127.0.0.1');
  });

  it('feeds a live board, a counter and a stat, then cleans up with --clean', async () => {
    const run = await runDemo(base);
    expect(run.output).toMatch(/open .*\/dashboard\?board=demo\.posts/);
    expect(run.code).toBe(0);
    const http = request(e2e.app().getHttpServer());
    const top = await http.get('/boards/demo.posts/top?window=hour&limit=5').expect(200);
    expect(top.body.items.length).toBeGreaterThan(0);
    for (const view of ['fading', 'hot']) {
      const listing = await http.get(`/boards/demo.posts/top?window=${view}`).expect(200);
      expect(listing.body.items.length).toBeGreaterThan(0);
    }
    expect((await http.get('/counters/demo.pageviews?precision=1').expect(200)).body.samples.length).toBeGreaterThan(0);
    expect(run.output).toMatch(/npm run demo -- --clean/);

    const cleaned = await runDemo(base, ['--clean']);
    expect(cleaned.code).toBe(0);
    await http.get('/boards/demo.posts').set(ADMIN).expect(404);
  });
});
