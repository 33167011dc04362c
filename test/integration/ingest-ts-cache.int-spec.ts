import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const DAY_S = 24 * 3600;
const CACHED_TS = join(__dirname, '..', 'support', 'cached-ts.mjs');

/**
 * The ingest fault tests' transpile cache (test/support/cached-ts.mjs) is pruned as a worker boots:
 * entries unused for a week, the least recently used beyond its size cap, half-written files of killed
 * workers; at most once an hour. Runs the real script on a cache of its own, the entries' ages set by
 * their mtimes (days apart: nothing here depends on how long the test takes).
 */
describe('ingest workers: transpile cache pruning', () => {
  let dir: string;
  let cache: string;
  let program: string;
  const nowS = Math.floor(Date.now() / 1000);

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tb-ts-cache-test-'));
    cache = join(dir, 'cache');
    program = join(dir, 'program.ts');
    writeFileSync(program, 'const answer: number = 42;\nprocess.stdout.write(String(answer));\n');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** Runs program.ts through the cache: its output. */
  async function boot(env: Record<string, string> = {}): Promise<string> {
    const { stdout } = await promisify(execFile)(process.execPath, [CACHED_TS, program], {
      env: { ...process.env, TB_TS_CACHE_DIR: cache, ...env },
    });
    return stdout;
  }

  /** An entry of `bytes` last used `daysAgo` days ago. */
  function entry(name: string, daysAgo: number, bytes = 10): void {
    writeFileSync(join(cache, name), 'x'.repeat(bytes));
    utimesSync(join(cache, name), nowS - daysAgo * DAY_S, nowS - daysAgo * DAY_S);
  }

  const names = () => readdirSync(cache).sort();
  const entries = () => names().filter((name) => name.endsWith('.js'));

  it('drops entries unused for a week and partial files, keeps recent ones, adds the booted file', async () => {
    expect(await boot()).toBe('42');
    const [own] = entries();
    entry('old.js', 8);
    entry('recent.js', 6);
    entry('partial.js.123', 1);
    // The first boot pruned an hour ago at most: nothing removed now.
    expect(await boot()).toBe('42');
    expect(names()).toEqual(['.pruned', own, 'old.js', 'partial.js.123', 'recent.js'].sort());

    utimesSync(join(cache, '.pruned'), nowS - 2 * 3600, nowS - 2 * 3600);
    expect(await boot()).toBe('42');
    expect(names()).toEqual(['.pruned', own, 'recent.js'].sort());
  });

  it('marks an entry it uses, so a week-old entry still in use stays', async () => {
    expect(await boot()).toBe('42');
    const [own] = entries();
    utimesSync(join(cache, own), nowS - 8 * DAY_S, nowS - 8 * DAY_S);
    utimesSync(join(cache, '.pruned'), nowS - 2 * 3600, nowS - 2 * 3600);
    // Pruned before the program is loaded: the entry goes, is transpiled again and kept.
    expect(await boot()).toBe('42');
    expect(entries()).toEqual([own]);
    utimesSync(join(cache, own), nowS - 3 * DAY_S, nowS - 3 * DAY_S);
    expect(await boot()).toBe('42');
    expect(statSync(join(cache, own)).mtimeMs).toBeGreaterThan((nowS - DAY_S) * 1000);
  });

  it('keeps the most recently used entries within its size cap', async () => {
    expect(await boot()).toBe('42');
    const [own] = entries();
    const ownBytes = statSync(join(cache, own)).size;
    entry('a.js', 1, 1000);
    entry('b.js', 2, 1000);
    entry('c.js', 3, 1000);
    utimesSync(join(cache, '.pruned'), nowS - 2 * 3600, nowS - 2 * 3600);
    expect(await boot({ TB_TS_CACHE_MAX_BYTES: String(ownBytes + 2500) })).toBe('42');
    expect(entries()).toEqual(['a.js', 'b.js', own].sort());
  });
});
