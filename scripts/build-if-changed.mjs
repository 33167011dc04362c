/**
 * `npm start`'s prestart: builds (nest build) only when a file under src/, or a build setting, is newer
 * than the last build, so a second `npm start` starts at once. Prints one line either way.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');
const stamp = join(root, 'dist', '.built-at');
const inputs = ['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json', 'nest-cli.json'];

/** The newest modification time (ms) of the files under `dir`. */
function newestUnder(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestUnder(path) : statSync(path).mtimeMs);
  }
  return newest;
}

const builtAt = existsSync(stamp) && existsSync(join(root, 'dist', 'main.js')) ? statSync(stamp).mtimeMs : 0;
const changedAt = Math.max(newestUnder(join(root, 'src')), ...inputs.map((file) => statSync(join(root, file)).mtimeMs));
if (changedAt <= builtAt) {
  console.log('build: dist/ is up to date with src/ (delete dist/ to force a build)');
} else {
  console.log('build: src/ changed since the last build; building (nest build)…');
  execFileSync(process.execPath, [join(root, 'node_modules', '@nestjs', 'cli', 'bin', 'nest.js'), 'build'], {
    cwd: root,
    stdio: 'inherit',
  });
  writeFileSync(stamp, new Date().toISOString());
}
