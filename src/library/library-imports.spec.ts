import { existsSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, resolve } from 'node:path';

const ENTRY = join(__dirname, 'index.ts');
/** An import or re-export that stays in the compiled JavaScript (`import type` is erased). */
const IMPORT = /(?:^|\n)\s*(?:import|export)\s+(?!type\s)[^;]*?from\s+'([^']+)'|(?:^|\n)\s*import\s+'([^']+)'/g;

function resolveFile(from: string, specifier: string): string {
  const base = resolve(dirname(from), specifier);
  return [`${base}.ts`, join(base, 'index.ts')].find((file) => existsSync(file)) ?? base;
}

/** The packages the library's compiled files load: every file src/library/index.ts reaches, and what each imports by name. */
function packagesLoadedBy(entry: string): Map<string, string> {
  const packages = new Map<string, string>();
  const seen = new Set<string>();
  const queue = [entry];
  for (let file = queue.pop(); file !== undefined; file = queue.pop()) {
    if (seen.has(file)) continue;
    seen.add(file);
    for (const [, from, bare] of readFileSync(file, 'utf8').matchAll(IMPORT)) {
      const specifier = from ?? bare;
      if (specifier.startsWith('.')) queue.push(resolveFile(file, specifier));
      else if (!packages.has(specifier)) packages.set(specifier, file);
    }
  }
  return packages;
}

describe('the packages @trendboard/nest loads', () => {
  it('issue #47: loads no OpenTelemetry SDK or exporter (only the API: a tracer the app starts, else nothing)', () => {
    const loaded = [...packagesLoadedBy(ENTRY)].filter(([name]) => name.startsWith('@opentelemetry/'));
    expect(loaded.filter(([name]) => name !== '@opentelemetry/api')).toEqual([]);
    expect(loaded.map(([name]) => name)).toContain('@opentelemetry/api');
  });
});

describe('the packages @trendboard/nest declares', () => {
  /** `@scope/name/sub` and `name/sub` to the package's name. */
  const packageOf = (specifier: string) =>
    specifier
      .split('/')
      .slice(0, specifier.startsWith('@') ? 2 : 1)
      .join('/');

  it('every package a library file loads is a dependency or a peer of packages/nest (a host app installs no other)', () => {
    const manifest = JSON.parse(
      readFileSync(join(__dirname, '..', '..', 'packages', 'nest', 'package.json'), 'utf8'),
    ) as {
      dependencies: Record<string, string>;
      peerDependencies: Record<string, string>;
    };
    const declared = new Set([...Object.keys(manifest.dependencies), ...Object.keys(manifest.peerDependencies)]);
    const undeclared = [...packagesLoadedBy(ENTRY)]
      .map(([specifier, file]) => [packageOf(specifier), file] as const)
      .filter(([name]) => !name.startsWith('node:') && !builtinModules.includes(name) && !declared.has(name));
    expect(undeclared).toEqual([]);
  });
});
