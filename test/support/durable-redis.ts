import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, stopChild, waitForPing } from '../../harness/processes';

/** A Redis that keeps every acknowledged write across a crash (AOF, fsync always), on a free port. */
export interface DurableRedis {
  url: string;
  restart(): Promise<void>;
  /** Kills the server (SIGKILL) and leaves it down, its data kept for `start`. */
  kill(): Promise<void>;
  /** Starts the killed server again on the same port, with its data. */
  start(): Promise<void>;
  stop(): Promise<void>;
}

export async function startDurableRedis(): Promise<DurableRedis> {
  const port = await freePort();
  // In memory where there is a tmpfs: a SIGKILL loses nothing written there (the test kills processes,
  // not the machine), and fsync always costs nothing.
  const dir = mkdtempSync(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'tb-redis-'));
  const start = async () => {
    const child = spawn(
      'redis-server',
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--dir',
        dir,
        '--appendonly',
        'yes',
        '--appendfsync',
        'always',
        '--save',
        '',
      ],
      { stdio: 'ignore' },
    );
    if (!(await waitForPing(port, child))) throw new Error('redis-server did not start');
    return child;
  };
  let child = await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    restart: async () => {
      await stopChild(child);
      child = await start();
    },
    kill: () => stopChild(child),
    start: async () => {
      child = await start();
    },
    stop: async () => {
      await stopChild(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
