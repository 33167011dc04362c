import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { SystemClock } from '../../src/common/clock';
import { useSingleNodeApp } from '../support/e2e';
import { runTs } from '../support/run-ts';

/**
 * The script transpiled as `npm run demo`'s ts-node --transpile-only does, from run-ts' cache: seven runs
 * here, and only the first pays for loading TypeScript.
 */
const DEMO = runTs(join(__dirname, '../../scripts/demo.ts'));
/** The Quick start's token: the service runs with it, and the demo uses it unless ADMIN_TOKEN says otherwise. */
const QUICK_START_TOKEN = 'change-me-to-a-long-secret';
const ADMIN = { Authorization: `Bearer ${QUICK_START_TOKEN}` };

interface DemoRun {
  code: number | null;
  output: string;
}

/**
 * Runs `npm run demo`'s script against a service that is already up, as copied from the README: no
 * ADMIN_TOKEN or API_KEY in its environment unless `env` gives them; in a folder with no `.env`.
 */
function runDemo(base: string, args: string[] = [], env: Record<string, string> = {}): Promise<DemoRun> {
  const inherited: Record<string, string | undefined> = { ...process.env, ADMIN_TOKEN: '', API_KEY: '' };
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...DEMO, ...args], {
      cwd: tmpdir(),
      env: {
        ...inherited,
        DEMO_URL: base,
        DEMO_SECONDS: '2',
        DEMO_TICK_MS: '100',
        DEMO_PROGRESS_MS: '500',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('exit', (code) => resolve({ code, output }));
  });
}

describe('npm run demo (scripts/demo.ts), as the Quick start runs it', () => {
  const e2e = useSingleNodeApp({ clock: new SystemClock(), env: { ADMIN_TOKEN: QUICK_START_TOKEN } });
  let base: string;
  const http = () => request(e2e.app().getHttpServer());

  beforeAll(async () => {
    base = (await e2e.app().getUrl()).replace('[::1]', '127.0.0.1');
  });

  it('open mode: feeds a live board with progress lines, says how to stop and clean up; --clean deletes it', async () => {
    const run = await runDemo(base);
    expect(run.output).toMatch(/open .*\/dashboard\?board=demo\.posts/);
    expect(run.output).toMatch(/Ctrl-C stops it early; npm run demo -- --clean then deletes/);
    expect(run.output).toMatch(/\d+ of 2 s: \d+ increments sent, leading: post-\d\d \(\d+ in the last hour\)/);
    expect(run.code).toBe(0);
    const top = await http().get('/boards/demo.posts/top?window=hour&limit=5').expect(200);
    expect(top.body.items.length).toBeGreaterThan(0);
    for (const view of ['fading', 'hot']) {
      const listing = await http().get(`/boards/demo.posts/top?window=${view}`).expect(200);
      expect(listing.body.items.length).toBeGreaterThan(0);
    }
    expect((await http().get('/counters/demo.pageviews?precision=1').expect(200)).body.samples.length).toBeGreaterThan(
      0,
    );

    const cleaned = await runDemo(base, ['--clean']);
    expect([cleaned.code, cleaned.output]).toEqual([0, 'board demo.posts: deleted\ncounter demo.pageviews: deleted\n']);
    await http().get('/boards/demo.posts').set(ADMIN).expect(404);
    const again = await runDemo(base, ['--clean']);
    expect(again.code).toBe(0);
    expect(again.output).toContain('board demo.posts: not there');
  });

  it('--clean with another admin token fails non-zero and says which variable to set', async () => {
    const run = await runDemo(base, ['--clean'], { ADMIN_TOKEN: 'not-the-services-token-0123' });
    expect(run.code).toBe(1);
    expect(run.output).toContain(
      'deleting board demo.posts refused (403 ADMIN_TOKEN_INVALID): ADMIN_TOKEN is not the token',
    );
  });

  it("keyed mode: without API_KEY it stops at once naming API_KEY; with the README's API_KEY it runs", async () => {
    const made = await http()
      .post('/admin/keys')
      .set(ADMIN)
      .send({ name: 'demo', scopes: ['read', 'write'] });
    expect(made.status).toBe(201);

    const unkeyed = await runDemo(base);
    expect(unkeyed.code).toBe(1);
    expect(unkeyed.output).toMatch(/refused \(401 API_KEY_MISSING\): the service at .* is keyed: export API_KEY=/);

    const keyed = await runDemo(base, [], { API_KEY: made.body.key });
    expect(keyed.output).toMatch(/\d+ increments sent, leading: post-/);
    expect(keyed.code).toBe(0);
    const cleaned = await runDemo(base, ['--clean'], { API_KEY: made.body.key });
    expect(cleaned.code).toBe(0);
  });
});
