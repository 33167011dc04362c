import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const NATS_SUPPORT = join(__dirname, '../support/nats.ts');

/**
 * The README's test prerequisites, each missing one said in one line naming what to install (issue
 * #47: a missing nats-server failed three files with "nats-server exited with -2"). The support code
 * runs in a process whose PATH is an empty folder: nothing can be found on it. (redis-server's line is
 * test/support/redis.ts's requireRedisServer; chromium's and promtool's tests skip saying why, and fail
 * in CI: REQUIRE_CHROMIUM, REQUIRE_PROMTOOL.)
 */
describe('a missing test prerequisite fails with a one-line reason', () => {
  const empty = mkdtempSync(join(tmpdir(), 'tb-no-path-'));
  afterAll(() => rmSync(empty, { recursive: true, force: true }));

  it('nats-server', () => {
    const script = `require(${JSON.stringify(NATS_SUPPORT)}).startTestNats().then(
      () => process.exit(0), (error) => { console.error(error.message); process.exit(1); })`;
    const run = spawnSync(process.execPath, ['-r', require.resolve('ts-node/register/transpile-only'), '-e', script], {
      env: { ...process.env, PATH: empty },
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect([run.status, run.stderr]).toEqual([
      1,
      'No nats-server for the NATS ingest tests: install it (apt-get install nats-server / brew install nats-server).\n',
    ]);
  });
});

describe('the test prerequisites are named alike in .ci/run, the README and docs/development.md', () => {
  const read = (file: string) => readFileSync(join(__dirname, '../..', file), 'utf8');

  it("every package .ci/run installs is on the README's install line and in docs/development.md", () => {
    const installed = [...read('.ci/run').matchAll(/apt-get install -y -qq (?:--no-install-recommends )?(\S+)/g)].map(
      (match) => match[1],
    );
    expect(installed.sort()).toEqual(['chromium', 'nats-server', 'prometheus', 'redis-server']);
    const readmeLine = /On Debian or Ubuntu: `apt-get install ([\w -]+)`/.exec(read('README.md'))?.[1].split(' ');
    expect(readmeLine?.sort()).toEqual(installed);
    const development = read('docs/development.md').replace(/\s+/g, ' ');
    for (const name of installed) expect([name, development.includes(`\`${name}\``)]).toEqual([name, true]);
  });
});
