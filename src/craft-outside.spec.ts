import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/**
 * The house rules outside src/ (issue #46): the benchmarks import nothing from test/ (what both use
 * lives in harness/), so a benchmark never depends on a test's internals.
 */
const ROOT = join(__dirname, '..');
const IMPORT = /(?:import|export)\s[^;]*?from\s+'(\.{1,2}\/[^']+)'|(?:import|require)\(\s*'(\.{1,2}\/[^']+)'\s*\)/g;

/** Every TypeScript file under a top-level folder, as a path relative to the repository. */
function tsFilesUnder(folder: string): string[] {
  return readdirSync(join(ROOT, folder), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .map((file) => join(folder, file));
}

/** The repository-relative targets of a file's relative imports. */
function importsOf(file: string): string[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  return [...text.matchAll(IMPORT)].map((match) =>
    relative(ROOT, resolve(dirname(join(ROOT, file)), match[1] ?? match[2])),
  );
}

describe('house rules outside src/ (issue #46)', () => {
  it('no file under bench/ or harness/ imports from test/', () => {
    const upward = [...tsFilesUnder('bench'), ...tsFilesUnder('harness')].flatMap((file) =>
      importsOf(file)
        .filter((target) => target === 'test' || target.startsWith('test/'))
        .map((target) => `${file} imports ${target}`),
    );
    expect(upward).toEqual([]);
  });
});
