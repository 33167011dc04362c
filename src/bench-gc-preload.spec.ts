import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ts from 'typescript';

const PRELOAD = join(__dirname, '..', 'bench', 'gc-on-signal.ts');
const POLL_MS = 20;

/** bench/gc-on-signal.ts as JavaScript in `dir`, as bench/process-instructions.ts preloads it. */
function preloadIn(dir: string): string {
  const { outputText } = ts.transpileModule(readFileSync(PRELOAD, 'utf8'), {
    compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 },
  });
  const script = join(dir, 'gc-on-signal.js');
  writeFileSync(script, outputText);
  return script;
}

/**
 * The process-instructions bench starts each counted round after a collection in the server (a scavenge,
 * or a full one with PROC_GC=major): the preload must run it on SIGUSR2 and then say so through
 * GC_DONE_FILE, or the bench waits forever.
 */
describe('the bench GC preload (bench/gc-on-signal.ts)', () => {
  it.each(['minor', 'major'])(
    'runs a %s collection on SIGUSR2 and then writes GC_DONE_FILE',
    async (type) => {
      const dir = mkdtempSync(join(tmpdir(), 'gc-preload-'));
      const done = join(dir, 'gc-done');
      const child = spawn(
        process.execPath,
        ['--expose-gc', '-r', preloadIn(dir), '-e', "console.log('up'); setInterval(() => {}, 1000)"],
        { env: { ...process.env, GC_DONE_FILE: done, GC_TYPE: type }, stdio: ['ignore', 'pipe', 'inherit'] },
      );
      try {
        await new Promise((resolve) => child.stdout.once('data', resolve));
        child.kill('SIGUSR2');
        while (!existsSync(done)) await new Promise((resolve) => setTimeout(resolve, POLL_MS));
        expect(Number(readFileSync(done, 'utf8'))).toBeGreaterThan(0);
      } finally {
        child.kill('SIGTERM');
        rmSync(dir, { recursive: true, force: true });
      }
    },
    60_000,
  );
});
