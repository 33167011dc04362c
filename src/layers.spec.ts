import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/**
 * Keeps the import graph of src/ layered: the order is the `layers` block of docs/architecture.md
 * (highest first; peers share a line), so the document and the check cannot drift apart. The ranking
 * wing is layered inside too, by the `ranking-layers` block.
 */
const SRC = __dirname;
/** A relative import or export `… from '…'`, or an import for its effects (`import '…'`). */
const IMPORT = /(?:^|\n)\s*(?:(?:import|export)\s[^;]*?from\s+|import\s+)'(\.{1,2}\/[^']+)'/g;

/**
 * Each folder of a block's order and its rank (higher ranks are higher layers); the files at the root
 * of the folder it orders are one layer, `root`, whose line (`<root>: <files>`) names them.
 */
function declaredLayers(name: string, root: string): { rank: Map<string, number>; rootFiles: string[] } {
  const doc = readFileSync(join(SRC, '..', 'docs', 'architecture.md'), 'utf8');
  const block = new RegExp(`\`\`\`${name}\n([\\s\\S]*?)\`\`\``).exec(doc);
  if (!block) throw new Error(`docs/architecture.md has no \`\`\`${name} block`);
  const lines = block[1].trim().split('\n').reverse();
  const rank = new Map<string, number>();
  let rootFiles: string[] = [];
  lines.forEach((line, i) => {
    if (line.startsWith(`${root}:`)) {
      rootFiles = line
        .slice(root.length + 1)
        .trim()
        .split(/\s+/);
      rank.set(root, i);
    } else for (const folder of line.trim().split(/\s+/)) rank.set(folder, i);
  });
  return { rank, rootFiles };
}

/** Every source file of src/ (tests excluded), by its path relative to src/ without `.ts`. */
function sourceFiles(dir = SRC): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    if (!entry.name.endsWith('.ts') || entry.name.endsWith('.spec.ts')) return [];
    return [relative(SRC, path).replace(/\.ts$/, '')];
  });
}

/** The files of src/ a file imports (relative imports only). */
function importsOf(file: string): string[] {
  const text = readFileSync(join(SRC, `${file}.ts`), 'utf8');
  return [...text.matchAll(IMPORT)].map((match) => relative(SRC, resolve(SRC, dirname(file), match[1])));
}

/** Each of `files` and the files among them it imports. */
function importGraph(files: string[]): Map<string, string[]> {
  return new Map(files.map((file) => [file, importsOf(file).filter((target) => files.includes(target))]));
}

/**
 * The orders: the top-level folders of src/ (`dir` ''), and the slices inside the ranking wing, whose
 * imports leaving the wing the first order checks.
 */
const ORDERS = [
  { block: 'layers', dir: '', root: 'app' },
  { block: 'ranking-layers', dir: 'ranking', root: 'ranking' },
];

/** A file's layer in the order of `dir`'s folders: the folder under `dir` holding it, or `root`. */
function layerIn(dir: string, root: string): (file: string) => string {
  return (file) => {
    const below = dir ? file.slice(dir.length + 1) : file;
    return below.includes('/') ? below.split('/')[0] : root;
  };
}

/** The first circle of imports found (a list of files, the first repeated last), or undefined. */
function findCycle(graph: Map<string, string[]>): string[] | undefined {
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (file: string): string[] | undefined => {
    if (state.get(file) === 'done') return undefined;
    if (state.get(file) === 'open') return [...path.slice(path.indexOf(file)), file];
    state.set(file, 'open');
    path.push(file);
    for (const next of graph.get(file) ?? []) {
      const cycle = visit(next);
      if (cycle) return cycle;
    }
    path.pop();
    state.set(file, 'done');
    return undefined;
  };
  for (const file of graph.keys()) {
    const cycle = visit(file);
    if (cycle) return cycle;
  }
  return undefined;
}

describe.each(ORDERS)('the $block of docs/architecture.md', ({ block, dir, root }) => {
  const { rank, rootFiles } = declaredLayers(block, root);
  const layerOf = layerIn(dir, root);
  const files = sourceFiles().filter((file) => !dir || file.startsWith(`${dir}/`));
  const graph = importGraph(files);

  it(`places every folder and root file of src/${dir} in the order`, () => {
    const unplaced = [...new Set(files.map(layerOf))].filter((layer) => !rank.has(layer));
    expect(unplaced).toEqual([]);
    const roots = files
      .filter((file) => layerOf(file) === root)
      .map((file) => `${file.slice(dir ? dir.length + 1 : 0)}.ts`);
    expect(roots.sort()).toEqual([...rootFiles].sort());
  });

  it('has no import running up the order or between peers', () => {
    const wrong: string[] = [];
    for (const [file, targets] of graph)
      for (const target of targets) {
        const [from, to] = [layerOf(file), layerOf(target)];
        if (from !== to && rank.get(to)! >= rank.get(from)!) wrong.push(`${file} -> ${target}`);
      }
    expect(wrong).toEqual([]);
  });
});

describe('the imports of src/', () => {
  it('has no circle of imports between files', () => {
    expect(findCycle(importGraph(sourceFiles()))).toBeUndefined();
  });
});

/**
 * The files outside src/ranking/options that import from an option's own folder, per option (the
 * registry and the BoardOption interface aside). Issue #46 asks that adding an option be one folder
 * plus a registry line, so that the slices ask the registry and name no option: these counts only
 * go down as the slices move to the registry.
 */
const OPTION_NAMED_OUTSIDE: Record<string, number> = {
  'actor-caps': 2,
  actors: 2,
  aggregate: 2,
  calendar: 6,
  'group-of': 7,
  groups: 9,
  'item-data': 8,
  leagues: 5,
  metrics: 10,
  segments: 13,
  tail: 3,
  tiebreak: 9,
  views: 14,
};

describe('the board options', () => {
  it('are named outside their folders by the files OPTION_NAMED_OUTSIDE counts (the counts only go down)', () => {
    const named: Record<string, number> = {};
    for (const file of sourceFiles().filter((path) => !path.startsWith('ranking/options/'))) {
      const options = importsOf(file).flatMap((target) => /^ranking\/options\/([^/]+)\//.exec(target)?.[1] ?? []);
      for (const option of new Set(options)) named[option] = (named[option] ?? 0) + 1;
    }
    expect(named).toEqual(OPTION_NAMED_OUTSIDE);
  });

  // docs/architecture.md's figures of them ("(124 file-option pairs; `views` 16 files, ...)") are these counts.
  it('are counted in docs/architecture.md as OPTION_NAMED_OUTSIDE counts them', () => {
    const doc = readFileSync(join(SRC, '..', 'docs', 'architecture.md'), 'utf8');
    const [, total, each] = /\((\d+) file-option pairs; ([^)]*)\)/.exec(doc) ?? [];
    expect(Number(total)).toBe(Object.values(OPTION_NAMED_OUTSIDE).reduce((sum, n) => sum + n, 0));
    const stated = [...(each ?? '').matchAll(/`([\w-]+)` (\d+)/g)];
    expect(stated.length).toBeGreaterThan(0);
    for (const [, option, count] of stated)
      expect([option, Number(count)]).toEqual([option, OPTION_NAMED_OUTSIDE[option]]);
  });
});
