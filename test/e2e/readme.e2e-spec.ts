import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SystemClock } from '../../src/common/clock';
import { useSingleNodeApp } from '../support/e2e';
import { startTestNats, TestNats } from '../support/nats';

const ROOT = join(__dirname, '../..');
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
/** The token the README's examples use. */
const README_ADMIN_TOKEN = 'change-me-to-a-long-secret';

/** The README, then every page its documentation map links, in the map's order: how a reader goes. */
function pages(): Array<{ path: string; text: string }> {
  const linked = [...README.matchAll(/^\| \[(docs\/[a-z-]+\.md)\]/gm)].map((match) => match[1]);
  return ['README.md', ...linked].map((path) => ({ path, text: readFileSync(join(ROOT, path), 'utf8') }));
}

/** One command of an example block, and the answer the README shows after it (when it shows one). */
interface Command {
  text: string;
  shown?: string;
  /** The page it is on (set where one run spans pages). */
  page?: string;
}

/** The bash blocks of `text` that call the service (not the npm ones): what a reader pastes. */
function blocksOf(text: string): string[] {
  return [...text.matchAll(/^```bash\n([\s\S]*?)^```/gm)]
    .map((match) => match[1])
    .filter((block) => block.includes('curl') && !/\bnpm /.test(block));
}

/** Every page's examples, in reading order. */
function exampleBlocks(): string[] {
  return pages().flatMap((page) => blocksOf(page.text));
}

/** Runs commands as one bash script against `base`; answers the exit status, output per command and stderr. */
async function runCommands(
  commands: Command[],
  base: string,
  env: Record<string, string> = {},
): Promise<{ status: number; stderr: string; lastRun?: string; outputOf: Map<number, string> }> {
  const script = [
    'set -euo pipefail',
    'curl() { command curl --fail-with-body --show-error "$@"; }',
    ...commands.map((command, i) => `printf '\\n@@%d@@\\n' ${i}\n${command.text}`),
  ]
    .join('\n')
    .replaceAll('http://localhost:3000', base.replace('[::1]', '127.0.0.1'));
  // Not spawnSync: the service answering the examples runs in this process.
  const run = await new Promise<{ status: number; stdout: string; stderr: string }>((resolve) =>
    execFile(
      'bash',
      ['-c', script],
      { encoding: 'utf8', timeout: 60_000, env: { ...process.env, ...env } },
      (error, stdout, stderr) => resolve({ status: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    ),
  );
  const outputs = run.stdout.split(/\n@@(\d+)@@\n/);
  const outputOf = new Map<number, string>();
  for (let i = 1; i < outputs.length; i += 2) outputOf.set(Number(outputs[i]), outputs[i + 1].trim());
  return {
    status: run.status,
    stderr: run.stderr,
    lastRun: commands[Number(outputs[outputs.length - 2])]?.text,
    outputOf,
  };
}

/**
 * Splits a block into commands (continuation lines joined) and the answers shown after them: a comment
 * starting with `{`, `[` or a status and `{` opens one, indented comment lines continue it.
 */
function commandsOf(block: string): Command[] {
  const commands: Command[] = [];
  let open: Command | undefined;
  let continued = '';
  for (const line of block.split('\n')) {
    if (continued !== '') {
      continued += `\n${line}`;
      if (!line.endsWith('\\')) {
        commands.push({ text: continued });
        continued = '';
      }
      continue;
    }
    const comment = /^# ?(.*)$/.exec(line);
    if (comment) {
      const shown = /^(\d{3} )?([{[].*)$/.exec(comment[1]);
      const last = commands[commands.length - 1];
      if (shown && last) open = Object.assign(last, { shown: shown[2] });
      else if (open && /^\s+\S/.test(comment[1])) open.shown += comment[1].trim();
      else open = undefined;
      continue;
    }
    open = undefined;
    if (line.trim() === '') continue;
    if (line.endsWith('\\')) continued = line;
    else commands.push({ text: line });
  }
  return commands;
}

/**
 * Pages whose shown answers are checked value by value, not only by shape: the answers there are
 * deterministic but for their times.
 */
const EXACT_PAGES = ['docs/trending.md', 'docs/counters.md', 'docs/stats.md'];
/** Fields holding a unix time (s): they vary from run to run. */
const TIME_FIELDS = new Set(['at', 'from', 'to', 'since', 'hourStart', 't']);
/** Shown times look current: none before 2025 (the samples once said 2023). */
const EARLIEST_SHOWN_SEC = Date.UTC(2025, 0, 1) / 1000;

/** `value` with every time field's number replaced by a marker. */
function untimed(value: unknown, key = ''): unknown {
  if (Array.isArray(value)) return value.map((entry) => untimed(entry));
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, untimed(v, k)]));
  return TIME_FIELDS.has(key) && typeof value === 'number' ? 'a unix time' : value;
}

/** Every time field's number in `value`. */
function shownTimes(value: unknown, key = ''): number[] {
  if (Array.isArray(value)) return value.flatMap((entry) => shownTimes(entry));
  if (typeof value === 'object' && value !== null) return Object.entries(value).flatMap(([k, v]) => shownTimes(v, k));
  return TIME_FIELDS.has(key) && typeof value === 'number' ? [value] : [];
}

/**
 * The README's examples, run as written by bash and curl against the service, in README order: every
 * call answers 2xx (curl --fail-with-body), and every answer the README shows as JSON has the shape
 * (the top-level fields) of the real one. So the README cannot drift from the service again.
 */
describe('the README examples, run as written', () => {
  // The real clock: the examples compute times with `date +%s`.
  // Its own Redis: the examples' redis-cli writes keys outside the file's prefix.
  const e2e = useSingleNodeApp({
    ownRedis: true,
    clock: new SystemClock(),
    env: { ADMIN_TOKEN: README_ADMIN_TOKEN, STATS_FLUSH_INTERVAL_MS: '50' },
  });
  let base: string;
  let nats: TestNats;
  beforeAll(async () => {
    base = await e2e.app().getUrl();
    nats = await startTestNats();
  });
  afterAll(() => nats.stop());

  it('finds the walk-through, retry-safe writes, counters, stats and access examples on the pages', () => {
    expect(pages().length).toBeGreaterThanOrEqual(10);
    expect(exampleBlocks().length).toBeGreaterThanOrEqual(5);
  });

  it('every example call succeeds and answers the shape the README shows', async () => {
    const commands = pages().flatMap((page) =>
      blocksOf(page.text)
        .flatMap(commandsOf)
        .map((command) => ({ ...command, page: page.path })),
    );
    // The ingest page's examples write their streams: with redis-cli to the service's own Redis
    // (REDIS_URL), with scripts/nats-publish.mjs to a nats-server of this test's (NATS_URL).
    const { status, stderr, lastRun, outputOf } = await runCommands(commands, base, {
      REDIS_URL: e2e.redis().url,
      NATS_URL: nats.url,
    });
    // On a failure: the command that failed, its answer (--fail-with-body prints it) and curl's error.
    expect({ status, stderr, lastRun }).toEqual({ status: 0, stderr: '', lastRun: commands.at(-1)?.text });
    let checked = 0;
    commands.forEach((command, i) => {
      if (command.shown === undefined) return;
      let shown: unknown;
      try {
        shown = JSON.parse(command.shown);
      } catch {
        return; // an abridged answer ("...", "…"): shown for the reader, not checkable
      }
      const real: unknown = JSON.parse(outputOf.get(i) ?? '');
      expect([command.text, Object.keys(real as object).sort()]).toEqual([
        command.text,
        Object.keys(shown as object).sort(),
      ]);
      if (EXACT_PAGES.includes(command.page)) {
        // Every figure as the service sends it (no rounding), times aside: those are of the run.
        expect([command.text, untimed(real)]).toEqual([command.text, untimed(shown)]);
        expect([command.text, shownTimes(shown).filter((sec) => sec < EARLIEST_SHOWN_SEC)]).toEqual([command.text, []]);
      }
      checked++;
    });
    expect(checked).toBeGreaterThanOrEqual(8);
  });
});

/** The walk-through as a compose user runs it: a keyed service, ADMIN_TOKEN and API_KEY exported. */
describe('the README walk-through on a keyed service', () => {
  const API_KEY = 'walk-through-key-0123456789abcdef';
  const ADMIN_TOKEN = 'walk-through-admin-0123456789abcdef';
  const e2e = useSingleNodeApp({
    clock: new SystemClock(),
    env: { ADMIN_TOKEN, API_KEYS: API_KEY, ACCESS_MODE: 'keyed' },
  });
  let base: string;
  const walkThrough = () => commandsOf(blocksOf(README)[0]);

  beforeAll(async () => {
    base = await e2e.app().getUrl();
  });

  it('runs as written with the admin token and a key', async () => {
    const commands = walkThrough();
    const run = await runCommands(commands, base, { ADMIN_TOKEN, API_KEY });
    expect({ status: run.status, stderr: run.stderr, lastRun: run.lastRun }).toEqual({
      status: 0,
      stderr: '',
      lastRun: commands.at(-1)?.text,
    });
  });

  it('stops at the first write without the key (the key is what opens it)', async () => {
    const run = await runCommands(walkThrough(), base, { ADMIN_TOKEN, API_KEY: '' });
    expect(run.status).not.toBe(0);
    expect(run.lastRun).toMatch(/^tb -X POST .*\/increment/);
    expect(run.stderr).toMatch(/401/);
  });
});

/** The contract lives in the repository: a file the pages cite is one a reader can open. */
describe('files the README and docs/ cite', () => {
  it('exist in the repository (build output aside)', () => {
    const texts = [
      'README.md',
      ...readdirSync(join(ROOT, 'docs'))
        .filter((name) => name.endsWith('.md'))
        .map((name) => `docs/${name}`),
    ];
    const cited = texts.flatMap((path) =>
      [
        ...readFileSync(join(ROOT, path), 'utf8').matchAll(/`([\w./-]+\/[\w.-]+\.(?:md|ts|mjs|js|json|ya?ml|sh))`/g),
      ].map((match) => `${path}: ${match[1]}`),
    );
    expect(cited.length).toBeGreaterThan(10);
    const missing = cited.filter((entry) => {
      const file = entry.split(': ')[1];
      return !file.startsWith('dist/') && !existsSync(join(ROOT, file));
    });
    expect(missing).toEqual([]);
  });
});
