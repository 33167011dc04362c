/**
 * `node test/support/cached-ts.mjs <file.ts>` runs a TypeScript file as CommonJS, for the tests that start the
 * service in a child process (run-ts.ts), such as the fault tests'
 * worker processes (test/support/ingest-worker.ts):
 * TypeScript transpiled as ts-node's transpile-only mode does (the tsconfig's emit options), but kept
 * on disk by content hash, so only the first worker of a run pays for the transpile (and for loading
 * TypeScript): each later one, a SIGKILLed instance started again, boots from plain JavaScript.
 *
 * Every edit of a source file leaves its old entry behind, so the cache is pruned: an entry's mtime is
 * its last use (touched when used and a day old), and at most once an hour (a `.pruned` marker's
 * mtime) a boot removes the entries unused for MAX_AGE_DAYS, then the least recently used ones while
 * the rest exceed MAX_BYTES, and the half-written files of killed workers. `TB_TS_CACHE_DIR` moves
 * the cache, `TB_TS_CACHE_MAX_BYTES` sets its cap (tests: test/integration/ingest-ts-cache.int-spec.ts).
 */
import { createHash } from 'node:crypto';
import {
  closeSync,
  fstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import Module, { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const CACHE_DIR = process.env.TB_TS_CACHE_DIR || join(tmpdir(), 'tb-ts-cache');
const DAY_MS = 24 * 3600 * 1000;
export const MAX_AGE_DAYS = 7;
export const MAX_BYTES = Number(process.env.TB_TS_CACHE_MAX_BYTES) || 64 * 1024 * 1024;
const PRUNE_EVERY_MS = 3600 * 1000;
const MARKER = '.pruned';
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

/** An entry's code, its mtime moved to now when a day old (its last use, as pruning reads it); undefined: none. */
function readEntry(path, nowMs) {
  let fd;
  try {
    fd = openSync(path, 'r');
  } catch {
    return undefined;
  }
  try {
    if (nowMs - fstatSync(fd).mtimeMs > DAY_MS) utimesSync(path, nowMs / 1000, nowMs / 1000);
    return readFileSync(fd, 'utf8');
  } finally {
    closeSync(fd);
  }
}

/**
 * Removes the entries of `dir` unused (mtime) for `maxAgeMs`, then the least recently used while the
 * rest hold more than `maxBytes`, and partial files (`<key>.js.<pid>`) an hour old. Another process
 * may prune or read at the same time: an entry gone meanwhile is skipped, a reader transpiles again.
 * Answers the names removed.
 */
export function pruneCache(dir, { nowMs, maxAgeMs = MAX_AGE_DAYS * DAY_MS, maxBytes = MAX_BYTES }) {
  const entries = [];
  for (const name of readdirSync(dir)) {
    if (name === MARKER) continue;
    try {
      const { mtimeMs, size } = statSync(join(dir, name));
      entries.push({ name, mtimeMs, size, partial: !name.endsWith('.js') });
    } catch {
      // removed by another process meanwhile
    }
  }
  entries.sort((a, b) => b.mtimeMs - a.mtimeMs);
  const removed = [];
  let kept = 0;
  let full = false;
  for (const entry of entries) {
    const age = nowMs - entry.mtimeMs;
    // Newest first: once one entry does not fit, every older one goes too.
    full ||= !entry.partial && kept + entry.size > maxBytes;
    const keep = entry.partial ? age < PRUNE_EVERY_MS : age < maxAgeMs && !full;
    if (keep) kept += entry.size;
    else if (unlinked(join(dir, entry.name))) removed.push(entry.name);
  }
  return removed;
}

function unlinked(path) {
  try {
    unlinkSync(path);
    return true;
  } catch {
    return false;
  }
}

/** Prunes the cache when the last pruning (the marker's mtime) is an hour old or was never done. */
function pruneWhenDue(nowMs) {
  try {
    if (nowMs - statSync(join(CACHE_DIR, MARKER)).mtimeMs < PRUNE_EVERY_MS) return;
  } catch {
    // never pruned (or no cache yet)
  }
  mkdirSync(CACHE_DIR, { recursive: true });
  writeFileSync(join(CACHE_DIR, MARKER), '');
  pruneCache(CACHE_DIR, { nowMs });
}

Module._extensions['.ts'] = function compileCached(module, filename) {
  const source = readFileSync(filename, 'utf8');
  const key = createHash('sha1').update(JSON.stringify(COMPILER_OPTIONS)).update(filename).update(source).digest('hex');
  const cached = join(CACHE_DIR, `${key}.js`);
  let code = readEntry(cached, Date.now());
  if (code === undefined) {
    code = transpile(source, filename);
    mkdirSync(CACHE_DIR, { recursive: true });
    // Written aside, then renamed: a worker killed mid-write leaves no half file under the key.
    const partial = `${cached}.${process.pid}`;
    writeFileSync(partial, code);
    renameSync(partial, cached);
  }
  module._compile(code, filename);
};

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  pruneWhenDue(Date.now());
  // V8's compiled code of every module (Nest's and the service's) kept too: a worker's boot takes 1.9-2.0
  // s of CPU, not 2.2-2.4 (Node checks each entry against its source, and keeps one per file).
  Module.enableCompileCache?.(`${CACHE_DIR}-v8`);
  load(process.argv[2]);
}
