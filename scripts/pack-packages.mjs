/**
 * `npm run packages:pack`: builds and packs @trendboard/nest and @trendboard/client into
 * packages/tarballs/ (what examples/nest-app installs, and what a team installs until they are on a
 * registry). Each package's prepack builds it.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');
const tarballs = join(root, 'packages', 'tarballs');
mkdirSync(tarballs, { recursive: true });
for (const dir of ['packages/nest', 'clients/typescript']) {
  const out = execFileSync('npm', ['pack', '--pack-destination', tarballs], { cwd: join(root, dir), encoding: 'utf8' });
  console.log(join(tarballs, out.trim().split('\n').at(-1)));
}
