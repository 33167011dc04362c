/**
 * Builds @trendboard/nest into dist/ (npm pack's prepack): the library's TypeScript under src/, compiled
 * with the repository's own TypeScript and packages (tsconfig.build.json here), the Lua files the
 * Redis functions read from disk next to their modules, and @nestjs/swagger made optional
 * (optional-swagger.cjs).
 */
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';

const here = import.meta.dirname;
const src = join(here, '..', '..', 'src');
const dist = join(here, 'dist');
const tsc = join(here, '..', '..', 'node_modules', 'typescript', 'bin', 'tsc');

rmSync(dist, { recursive: true, force: true });
// NEST_BUILD_NO_CHECK=1 (the consumer test, run by `npm test` after its `tsc -p tsconfig.json` checked these
// sources): emit only, the same output without a second type check of src/.
const noCheck = process.env.NEST_BUILD_NO_CHECK === '1' ? ['--noCheck'] : [];
execFileSync(process.execPath, [tsc, '-p', join(here, 'tsconfig.build.json'), ...noCheck], { stdio: 'inherit' });
for (const entry of readdirSync(src, { recursive: true, withFileTypes: true })) {
  if (!entry.isFile() || !entry.name.endsWith('.lua')) continue;
  const from = relative(src, join(entry.parentPath, entry.name));
  // Only a compiled feature's (src/<feature>/…): the library's, not the standalone service's ingest.
  if (existsSync(join(dist, from.split(sep)[0]))) cpSync(join(src, from), join(dist, from));
}

const SWAGGER = /\b(\w+) = require\("@nestjs\/swagger"\)/;
const OPTIONAL_SWAGGER = join(dist, 'optional-swagger.js');
cpSync(join(here, 'optional-swagger.cjs'), OPTIONAL_SWAGGER);
for (const entry of readdirSync(dist, { recursive: true, withFileTypes: true })) {
  const file = join(entry.parentPath, entry.name);
  if (!entry.isFile() || !entry.name.endsWith('.js') || file === OPTIONAL_SWAGGER) continue;
  const code = readFileSync(file, 'utf8');
  const name = SWAGGER.exec(code)?.[1];
  if (!name) continue;
  // Its stand-in is a no-op decorator factory for every name but the mapped types (@nestjs/mapped-types'):
  // anything else of @nestjs/swagger would break.
  const used = [...code.matchAll(new RegExp(`\\b${name}\\.(\\w+)`, 'g'))].map((match) => match[1]);
  const others = used.filter((export_) => !/^Api[A-Z]|^(Intersection|Partial|Pick|Omit)Type$/.test(export_));
  if (others.length)
    throw new Error(
      `${relative(dist, file)} uses @nestjs/swagger's ${others.join(', ')}: only its Api* decorators and mapped types are optional`,
    );
  const target = relative(dirname(file), OPTIONAL_SWAGGER).split(sep).join('/');
  writeFileSync(file, code.replace(SWAGGER, `${name} = require("${target.startsWith('.') ? target : `./${target}`}")`));
}
