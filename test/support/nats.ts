import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { connect as netConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, stopChild } from '../../harness/processes';

/** A nats-server with JetStream of this test file's own, on a free port (never 4222), its store in a temp dir. */
export interface TestNats {
  url: string;
  port: number;
  /** SIGKILL and start again on the same port and store (a crash: JetStream keeps what it had synced). */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export async function startTestNats(): Promise<TestNats> {
  requireNatsServer();
  // In memory where there is a tmpfs: a restart (SIGKILL) keeps the store, and writes cost no disk.
  const dir = mkdtempSync(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'tb-nats-'));
  const started = await spawnOnFreePort(dir);
  const port = started.port;
  let child = started.child;
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    restart: async () => {
      await stopChild(child);
      child = await spawnNats(port, dir);
    },
    stop: async () => {
      await stopChild(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A missing nats-server said in one line, not as a spawn error code. */
function requireNatsServer(): void {
  if (spawnSync('nats-server', ['--version']).status !== 0)
    throw new Error(
      'No nats-server for the NATS ingest tests: install it (apt-get install nats-server / brew install nats-server).',
    );
}

/** Starts attempts on free ports: another file's server may take a port between freePort() and the bind. */
const SPAWN_ATTEMPTS = 3;

async function spawnOnFreePort(dir: string): Promise<{ child: ChildProcess; port: number }> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    try {
      return { child: await spawnNats(port, dir), port };
    } catch (error) {
      if (attempt >= SPAWN_ATTEMPTS) throw error;
    }
  }
}

async function spawnNats(port: number, dir: string): Promise<ChildProcess> {
  const child = spawn('nats-server', ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', dir], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let said = '';
  child.stderr?.on('data', (chunk: Buffer) => (said = (said + chunk.toString()).slice(-500)));
  for (let attempt = 0; attempt < 200; attempt++) {
    if (child.exitCode !== null) throw new Error(`nats-server exited with ${child.exitCode}: ${said.trim()}`);
    if (await listening(port)) return child;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  await stopChild(child);
  throw new Error(`nats-server did not listen on ${port}`);
}

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = netConnect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
