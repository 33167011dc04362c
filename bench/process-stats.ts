import { ChildProcess, fork, spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, stopChild, waitForPing } from '../harness/processes';

/** Linux's USER_HZ: /proc/<pid>/stat counts CPU time in these ticks. */
const CLOCK_TICKS_PER_SEC = 100;

/** A service boots in about a second; on a machine shared with other work it may take many more. */
const BOOT_TIMEOUT_MS = 120_000;

export async function waitForHttp(url: string): Promise<void> {
  for (const deadlineMs = Date.now() + BOOT_TIMEOUT_MS; Date.now() < deadlineMs;) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not up yet
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`${url} never answered`);
}

/** User + system CPU seconds of a process so far (Linux /proc; 0 elsewhere or without a pid). */
export function cpuSeconds(pid: number | undefined): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after "pid (name) "; the name itself may hold spaces and parentheses.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SEC;
  } catch {
    return 0;
  }
}

/**
 * A process's context switches so far (Linux /proc; zeros elsewhere or without a pid). For
 * redis-server, `voluntary` counts its wake-ups (each time it found no input and waited in epoll) and
 * `involuntary` the times the kernel took the CPU from it while it had work: on a shared machine a
 * preempted call resumes with caches another process has filled.
 */
export function contextSwitches(pid: number | undefined): { voluntary: number; involuntary: number } {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const count = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0);
    return { voluntary: count('voluntary_ctxt_switches'), involuntary: count('nonvoluntary_ctxt_switches') };
  } catch {
    return { voluntary: 0, involuntary: 0 };
  }
}

/** A private redis-server on a free port (nothing kept on disk), answering PING. */
/** A private redis-server on a free port; `extraArgs`: settings beyond the defaults (`--name`, `value`, ...). */
export async function startRedisServer(
  extraArgs: string[] = [],
): Promise<{ child: ChildProcess; port: number; url: string }> {
  const port = await freePort();
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...extraArgs],
    {
      stdio: 'ignore',
    },
  );
  if (!(await waitForPing(port, child))) {
    await stopChild(child);
    throw new Error('redis-server did not start');
  }
  if (process.env.BENCH_REDIS_REALTIME === '1') runRealtime(child.pid);
  return { child, port, url: `redis://127.0.0.1:${port}` };
}

/**
 * BENCH_REDIS_REALTIME=1: redis-server's main thread (the one that runs every command) under SCHED_FIFO
 * (`chrt`, root only), so no other process of the machine takes its CPU while a call runs. SLOWLOG
 * times a call by the wall clock: on a shared 2-core machine an ordinary redis-server is taken off the
 * CPU for milliseconds at a time, and SLOWLOG then times the machine, not the call. Under SCHED_FIFO it
 * times the call (interrupts aside). The kernel still leaves other processes 5 % of each second
 * (`sched_rt_runtime_us`), and Redis waits in epoll when idle, so nothing starves.
 */
export function runRealtime(pid: number | undefined): void {
  const chrt = spawnSync('chrt', ['--fifo', '--pid', '50', String(pid)], { encoding: 'utf8' });
  if (chrt.status !== 0)
    throw new Error(`BENCH_REDIS_REALTIME=1: chrt failed (${chrt.stderr || chrt.error}); run as root`);
}

/**
 * The service as `npm start` runs it (dist/main.js, or the build at `main`) on a free port of
 * 127.0.0.1, with `env` over this process's environment (`nodeArgs` to its node); its stderr shows in the bench's output unless
 * `quiet`. Not waited for: see waitForHttp.
 */
export async function startService(
  env: Record<string, string>,
  quiet = false,
  main = join(__dirname, '..', 'dist', 'main.js'),
  nodeArgs: string[] = [],
): Promise<{ child: ChildProcess; url: string }> {
  const port = await freePort();
  const child = spawn(process.execPath, [...nodeArgs, main], {
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', ...env },
    stdio: quiet ? 'ignore' : ['ignore', 'ignore', 'inherit'],
  });
  return { child, url: `http://127.0.0.1:${port}` };
}

/** The bare floor server (bench/bare-server.ts) on a free port, once it says it listens; `nodeArgs` go to its node. */
export async function startBareServer(
  env: Record<string, string>,
  nodeArgs: string[] = [],
): Promise<{ child: ChildProcess; url: string }> {
  const port = await freePort();
  const child = fork(join(__dirname, 'bare-server.ts'), [], {
    execArgv: ['-r', 'ts-node/register/transpile-only', ...nodeArgs],
    env: { ...process.env, PORT: String(port), ...env },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  await new Promise<void>((resolve, reject) => {
    child.once('message', () => resolve());
    child.once('exit', (code) => reject(new Error(`bare server exited with ${code}`)));
  });
  return { child, url: `http://127.0.0.1:${port}` };
}
