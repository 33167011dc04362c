/**
 * `node test/support/cached-ts.mjs <file.ts>` runs a TypeScript file as CommonJS, for the fault tests'
 * worker processes (test/support/ingest-worker.ts):
 * TypeScript transpiled as ts-node's transpile-only mode does (the tsconfig's emit options), but kept
 * on disk by content hash, so only the first worker of a run pays for the transpile (and for loading
 * TypeScript): each later one, a SIGKILLed instance started again, boots from plain JavaScript.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import Module, { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const CACHE_DIR = join(tmpdir(), 'tb-ts-cache');
/** tsconfig.json's options that change the emitted code (the rest only check types). */
const COMPILER_OPTIONS = {
  module: 'commonjs',
  target: 'ES2022',
  emitDecoratorMetadata: true,
  experimentalDecorators: true,
  esModuleInterop: true,
  allowSyntheticDefaultImports: true,
  removeComments: true,
  isolatedModules: true,
};
const load = createRequire(import.meta.url);
let typescript;

function transpile(source, filename) {
  typescript ??= load('typescript');
  return typescript.transpileModule(source, { compilerOptions: COMPILER_OPTIONS, fileName: filename }).outputText;
}

Module._extensions['.ts'] = function compileCached(module, filename) {
  const source = readFileSync(filename, 'utf8');
  const key = createHash('sha1').update(JSON.stringify(COMPILER_OPTIONS)).update(filename).update(source).digest('hex');
  const cached = join(CACHE_DIR, `${key}.js`);
  let code;
  try {
    code = readFileSync(cached, 'utf8');
  } catch {
    code = transpile(source, filename);
    mkdirSync(CACHE_DIR, { recursive: true });
    // Written aside, then renamed: a worker killed mid-write leaves no half file under the key.
    const partial = `${cached}.${process.pid}`;
    writeFileSync(partial, code);
    renameSync(partial, cached);
  }
  module._compile(code, filename);
};

if (process.argv[1] === fileURLToPath(import.meta.url)) load(process.argv[2]);
