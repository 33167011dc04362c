/**
 * Builds @trendboard/nest into dist/ (npm pack's prepack): the library's TypeScript under src/, compiled
 * with the repository's own TypeScript and packages (tsconfig.build.json here), and the Lua files the
 * Redis functions read from disk next to their modules.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, readdirSync, rmSync } from 'node:fs';
import { join, relative, sep } from 'node:path';

const here = import.meta.dirname;
const src = join(here, '..', '..', 'src');
const dist = join(here, 'dist');
const tsc = join(here, '..', '..', 'node_modules', 'typescript', 'bin', 'tsc');

rmSync(dist, { recursive: true, force: true });
execFileSync(process.execPath, [tsc, '-p', join(here, 'tsconfig.build.json')], { stdio: 'inherit' });
for (const entry of readdirSync(src, { recursive: true, withFileTypes: true })) {
  if (!entry.isFile() || !entry.name.endsWith('.lua')) continue;
  const from = relative(src, join(entry.parentPath, entry.name));
  // Only a compiled feature's (src/<feature>/…): the library's, not the standalone service's ingest.
  if (existsSync(join(dist, from.split(sep)[0]))) cpSync(join(src, from), join(dist, from));
}
