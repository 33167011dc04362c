import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { readLuaModule } from './redis/lua-modules';
import { KEPT_LOADED_WITHIN_MS, KEPT_OTHER_VERSIONS, RESTAMP_AFTER_MS } from './redis/library-versions';
import { PARTS } from '../bench/parts';
import { MAX_TS_FUNCTION_LINES, oversizedIn } from '../harness/code-size';

/**
 * The house rules outside src/ (issue #46): the benchmarks import nothing from test/ (what both use
 * lives in harness/), so a benchmark never depends on a test's internals; they, the scripts and the
 * packages keep src/'s size limits (of files, and past the tests of functions); every benchmark is a
 * part of `npm run bench` (bench/parts/), none runs on its own; docs/benchmarks.md stays a reference,
 * not a notebook; the reading paths of docs/architecture.md name files that exist; and a link to a
 * heading of another page finds that heading.
 */
const ROOT = join(__dirname, '..');
/** A relative import: `import … from`, `export … from`, `import()` and `require()`, or one for its effects (`import '…'`). */
const IMPORT =
  /(?:import|export)\s[^;]*?from\s+'(\.{1,2}\/[^']+)'|(?:import|require)\(\s*'(\.{1,2}\/[^']+)'\s*\)|^import\s+'(\.{1,2}\/[^']+)'/gm;
const MAX_BENCHMARKS_LINES = 400;
/** The size limit of src/'s files (src/craft.spec.ts), held by the tests, the benchmarks and what they share. */
const MAX_FILE_LINES = 400;
const CODE = /\.(ts|js|mjs|lua)$/;

/** Every file under a top-level folder with the given ending, as a path relative to the repository. */
function filesUnder(folder: string, ending: string): string[] {
  return readdirSync(join(ROOT, folder), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith(ending))
    .map((file) => join(folder, file));
}

/** The repository-relative targets of a file's relative imports. */
function importsOf(file: string): string[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  return [...text.matchAll(IMPORT)].map((match) =>
    relative(ROOT, resolve(dirname(join(ROOT, file)), match[1] ?? match[2] ?? match[3])),
  );
}

/** A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces as hyphens. */
function anchorOf(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function anchorsIn(path: string): Set<string> {
  const headings = readFileSync(join(ROOT, path), 'utf8').matchAll(/^#{1,6} (.+)$/gm);
  return new Set([...headings].map((match) => anchorOf(match[1].trim())));
}

/** The repository paths a section of docs/architecture.md names (backquoted, with an extension). */
function pathsInSection(heading: string): string[] {
  const doc = readFileSync(join(ROOT, 'docs', 'architecture.md'), 'utf8');
  const start = doc.indexOf(`\n## ${heading}\n`);
  if (start === -1) throw new Error(`docs/architecture.md has no section "${heading}"`);
  const end = doc.indexOf('\n## ', start + 1);
  const section = doc.slice(start, end === -1 ? undefined : end);
  return [...section.matchAll(/`((?:src|test|harness|bench)\/[\w./-]+\.(?:ts|lua))`/g)].map((match) => match[1]);
}

/** Each reading path of docs/architecture.md (its `###` subsections): its numbered files, in order. */
function readingPaths(): Array<[string, string[]]> {
  const doc = readFileSync(join(ROOT, 'docs', 'architecture.md'), 'utf8');
  const section = doc.slice(
    doc.indexOf('\n## Reading paths\n'),
    doc.indexOf('\n## ', doc.indexOf('\n## Reading paths\n') + 1),
  );
  return section
    .split('\n### ')
    .slice(1)
    .map((part) => [part.split('\n')[0], [...part.matchAll(/^\d+\. `([^`]+)`/gm)].map((match) => match[1])]);
}

/** The most files a reading path may list (issue #46): a request's route to Redis read in one sitting. */
const READING_PATH_MOST = 15;

/** The tables of the Lua modules `handler` requires, and those they require in turn. */
function requiredTables(handler: string): Set<string> {
  const byTable = new Map(
    filesUnder('src', '.lua')
      .map((file) => readLuaModule(join(ROOT, file)))
      .flatMap((module) => (module.table === undefined ? [] : [[module.table, module] as const])),
  );
  const found = new Set<string>();
  const visit = (tables: readonly string[]): void => {
    for (const table of tables.filter((name) => !found.has(name))) {
      found.add(table);
      visit(byTable.get(table)?.requires ?? []);
    }
  };
  visit(readLuaModule(join(ROOT, handler)).requires);
  return found;
}

/** The one file under bench/ that runs on its own: `npm run bench`, which runs the registered parts. */
const BENCH_RUNNER = 'bench/run.ts';
/** Processes a part starts (by file name), not benchmarks: the floor server, a heap sampler, seeding workers. */
const BENCH_CHILD_SCRIPTS = new Set(['bench/bare-server.ts', 'bench/heap-sampler.ts', 'bench/idle-seed.ts']);
/** A file that runs when started: `require.main`, or a top-level call of a main, a part or runWhenMain. */
const RUNS_ON_ITS_OWN = /require\.main|^(?:void\s+)?(?:main|run|bench|runWhenMain|\w+Bench|\w+Abuse)\s*\(/m;

/** The bench/ files bench/run.ts reaches: by its imports (the registry's too) and the scripts they start by name. */
function reachedFromBenchRunner(): Set<string> {
  const files = new Set(filesUnder('bench', '.ts'));
  const reached = new Set<string>();
  const visit = (file: string): void => {
    if (reached.has(file)) return;
    reached.add(file);
    const started = [...readFileSync(join(ROOT, file), 'utf8').matchAll(/'([\w-]+\.ts)'/g)].map((match) =>
      join(dirname(file), match[1]),
    );
    const imported = importsOf(file).map((target) =>
      files.has(`${target}.ts`) ? `${target}.ts` : `${target}/index.ts`,
    );
    for (const next of [...imported, ...started].filter((path) => files.has(path))) visit(next);
  };
  visit(BENCH_RUNNER);
  return reached;
}

describe('house rules outside src/ (issue #46)', () => {
  it('no file under bench/ or harness/ imports from test/', () => {
    const upward = [...filesUnder('bench', '.ts'), ...filesUnder('harness', '.ts')].flatMap((file) =>
      importsOf(file)
        .filter((target) => target === 'test' || target.startsWith('test/'))
        .map((target) => `${file} imports ${target}`),
    );
    expect(upward).toEqual([]);
  });

  it('no file under bench/ but bench/run.ts runs on its own: a benchmark is a part of `npm run bench`', () => {
    const standalone = filesUnder('bench', '.ts').filter(
      (file) =>
        file !== BENCH_RUNNER &&
        !BENCH_CHILD_SCRIPTS.has(file) &&
        RUNS_ON_ITS_OWN.test(readFileSync(join(ROOT, file), 'utf8')),
    );
    expect(standalone).toEqual([]);
  });

  it('every file under bench/ is reached from bench/run.ts, so each benchmark is registered in bench/parts/', () => {
    const reached = reachedFromBenchRunner();
    expect(filesUnder('bench', '.ts').filter((file) => !reached.has(file))).toEqual([]);
  });

  it('every part has a name of its own, a capability, what it measures, and the default set is not empty', () => {
    const names = PARTS.map((part) => part.name);
    expect(names.filter((name, i) => names.indexOf(name) !== i)).toEqual([]);
    expect(PARTS.filter((part) => !/^[a-z][a-z-]*$/.test(part.name) || part.measures.trim() === '')).toEqual([]);
    expect(PARTS.some((part) => part.byDefault)).toBe(true);
  });

  it('docs/benchmarks.md\'s "How to reproduce" names every part, the default set in bold', () => {
    const doc = readFileSync(join(ROOT, 'docs', 'benchmarks.md'), 'utf8');
    const section = doc.slice(doc.indexOf('\n## How to reproduce\n'), doc.indexOf('\n## Current figures\n'));
    const unnamed = PARTS.filter(
      (part) => !section.includes(part.byDefault ? `**\`${part.name}\`**` : `\`${part.name}\``),
    ).map((part) => part.name);
    const boldNotDefault = PARTS.filter((part) => !part.byDefault && section.includes(`**\`${part.name}\`**`));
    expect([...unnamed, ...boldNotDefault.map((part) => part.name)]).toEqual([]);
  });

  it(`no file under test/, bench/, harness/, scripts/, packages/ or clients/ is over ${MAX_FILE_LINES} lines`, () => {
    const long = ['test', 'bench', 'harness', 'scripts', 'packages', 'clients']
      .flatMap((folder) => filesUnder(folder, ''))
      // Written by tools, not read as code: the client's generated types, installs and builds.
      .filter((file) => CODE.test(file) && !/(^|\/)(generated|node_modules|dist)\//.test(file))
      .map((file) => [file, readFileSync(join(ROOT, file), 'utf8').split('\n').length] as const)
      .filter(([, lines]) => lines > MAX_FILE_LINES);
    expect(long).toEqual([]);
  });

  it(`no function under bench/, harness/, scripts/ or packages/ is over ${MAX_TS_FUNCTION_LINES} lines, as in src/`, () => {
    const long = ['bench', 'harness', 'scripts', 'packages']
      .flatMap((folder) => filesUnder(folder, ''))
      .filter((file) => /\.(ts|js|mjs|cjs)$/.test(file) && !/(^|\/)(node_modules|dist)\//.test(file))
      .flatMap((file) => oversizedIn(join(ROOT, file), ROOT));
    expect(long).toEqual([]);
  });

  it(`docs/benchmarks.md is a reference of at most ${MAX_BENCHMARKS_LINES} lines`, () => {
    const lines = readFileSync(join(ROOT, 'docs', 'benchmarks.md'), 'utf8').split('\n').length;
    expect(lines).toBeLessThanOrEqual(MAX_BENCHMARKS_LINES);
  });

  it('every file the reading paths of docs/architecture.md list exists', () => {
    const listed = pathsInSection('Reading paths');
    expect(listed.length).toBeGreaterThan(20);
    expect(listed.filter((path) => !existsSync(join(ROOT, path)))).toEqual([]);
  });

  it.each(readingPaths())(
    `the reading path "%s" lists at most ${READING_PATH_MOST} files, each reached from one listed before it`,
    (_, files) => {
      expect(files.length).toBeLessThanOrEqual(READING_PATH_MOST);
      // Past the controller (the fast route calls it as Nest's router would), a TypeScript file is
      // imported by one listed before it; past the function's own file, a Lua file is a module it requires.
      const ts = files.filter((file) => file.endsWith('.ts'));
      const unreached = ts
        .slice(2)
        .filter(
          (file) => !ts.slice(0, ts.indexOf(file)).some((before) => importsOf(before).includes(file.slice(0, -3))),
        );
      const [handler, ...modules] = files.filter((file) => file.endsWith('.lua'));
      const required = requiredTables(handler);
      const unrequired = modules.filter((file) => !required.has(readLuaModule(join(ROOT, file)).table ?? ''));
      expect([...unreached, ...unrequired]).toEqual([]);
    },
  );

  // The figures docs/architecture.md states of what these checks and the loader hold are theirs.
  it("docs/architecture.md states the reading paths' bound and the library versions' figures as the code holds them", () => {
    const doc = readFileSync(join(ROOT, 'docs', 'architecture.md'), 'utf8').replace(/\s+/g, ' ');
    const hours = (ms: number) => ms / 3_600_000;
    expect(hours(RESTAMP_AFTER_MS)).toBe(1); // "an hour" below
    for (const stated of [
      `a path lists at most ${READING_PATH_MOST} files`,
      `past the ${KEPT_OTHER_VERSIONS} newest by stamp`,
      `loaded more than ${hours(KEPT_LOADED_WITHIN_MS)} h ago`,
      'a stamp younger than an hour (`RESTAMP_AFTER_MS`)',
      `a version stays at least ${hours(KEPT_LOADED_WITHIN_MS - RESTAMP_AFTER_MS)} h after any instance's start`,
    ])
      expect(doc).toContain(stated);
  });

  it("every link to another page's heading (README.md, docs/) finds the heading", () => {
    const pages = ['README.md', ...filesUnder('docs', '.md')];
    const broken = pages.flatMap((page) =>
      [...readFileSync(join(ROOT, page), 'utf8').matchAll(/\]\(([\w./-]+\.md)#([^)\s]+)\)/g)]
        .map(([, target, anchor]) => ({ target: relative(ROOT, resolve(dirname(join(ROOT, page)), target)), anchor }))
        .filter(({ target, anchor }) => !anchorsIn(target).has(anchor))
        .map(({ target, anchor }) => `${page} links ${target}#${anchor}`),
    );
    expect(broken).toEqual([]);
  });
});
