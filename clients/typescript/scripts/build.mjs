/**
 * Builds @trendboard/client into dist/ (npm pack's prepack): dist/ emptied, then tsconfig.build.json
 * compiled with the repository's TypeScript.
 */
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';

const here = join(import.meta.dirname, '..');
const tsc = join(here, '..', '..', 'node_modules', 'typescript', 'bin', 'tsc');

rmSync(join(here, 'dist'), { recursive: true, force: true });
// CLIENT_BUILD_NO_CHECK=1 (the consumer test, run by `npm test` after its `tsc -p clients/typescript/tsconfig.json`
// checked these sources and the examples): emit only, the same output without a second type check.
const noCheck = process.env.CLIENT_BUILD_NO_CHECK === '1' ? ['--noCheck'] : [];
execFileSync(process.execPath, [tsc, '-p', join(here, 'tsconfig.build.json'), ...noCheck], { stdio: 'inherit' });
