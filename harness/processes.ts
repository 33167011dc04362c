import { ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import Redis from 'ioredis';

/** A port nobody listens on now (0: let the OS choose). */
export async function freePort(port = 0): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

/**
 * A free port below Linux's ephemeral range (32768–60999), for a server started long after the port
 * is chosen: an ephemeral port may meanwhile become the local end of some connection, and the server
 * could then not bind it.
 */
export async function freeFixedPort(): Promise<number> {
  for (let attempt = 0; ; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    try {
      return await freePort(port);
    } catch (error) {
      if (attempt >= 50) throw error;
    }
  }
}

/** A free port whose Cluster bus port (port + 10000) is free too. */
export async function freeClusterPort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 25_000);
    try {
      await freePort(port);
      await freePort(port + 10_000);
      return port;
    } catch {
      // taken: try another
    }
  }
  throw new Error('no free port pair for a cluster node');
}

export async function waitForPing(port: number, child: ChildProcess): Promise<boolean> {
  for (let attempt = 0; attempt < 100; attempt++) {
    if (child.exitCode !== null) return false;
    const probe = new Redis({
      port,
      host: '127.0.0.1',
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
      disconnectTimeout: 10,
    });
    probe.on('error', () => undefined); // refused while the server starts: expected, retried below
    try {
      await probe.connect();
      await probe.ping();
      return true;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 20));
    } finally {
      probe.disconnect();
    }
  }
  return false;
}

export function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}
