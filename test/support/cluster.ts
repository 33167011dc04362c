import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cluster } from 'ioredis';
import { freeClusterPort, stopChild, waitForPing } from './processes';

/**
 * A real three-master Redis Cluster of this test file's own: redis-server --cluster-enabled yes on
 * three free ports, joined with `redis-cli --cluster create` (about a second).
 */
export async function startRedisCluster(
  serverArgs: string[] = [],
): Promise<{ nodes: string; stopServer: () => Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'tb-cluster-'));
  const children: ChildProcess[] = [];
  const ports: number[] = [];
  const stopServer = async () => {
    await Promise.all(children.map(stopChild));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (let attempt = 0; ports.length < 3; attempt++) {
      if (attempt >= 10) throw new Error('could not start three cluster nodes');
      const port = await freeClusterPort();
      const child = spawn(
        'redis-server',
        [
          '--port',
          String(port),
          '--bind',
          '127.0.0.1',
          '--cluster-enabled',
          'yes',
          '--cluster-config-file',
          `nodes-${port}.conf`,
          '--dir',
          dir,
          '--save',
          '',
          '--appendonly',
          'no',
          '--loglevel',
          'warning',
          ...serverArgs,
        ],
        { stdio: 'ignore' },
      );
      children.push(child);
      if (await waitForPing(port, child)) ports.push(port);
      else await stopChild(child);
    }
    const create = spawnSync(
      'redis-cli',
      ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '0', '--cluster-yes'],
      { encoding: 'utf8', timeout: 30_000 },
    );
    if (create.status !== 0) throw new Error(`redis-cli --cluster create failed: ${create.stdout}${create.stderr}`);
    await waitForClusterOk(ports);
    return { nodes: ports.map((p) => `127.0.0.1:${p}`).join(','), stopServer };
  } catch (error) {
    await stopServer();
    throw error;
  }
}

async function waitForClusterOk(ports: number[]): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const states = ports.map(
      (port) => spawnSync('redis-cli', ['-p', String(port), 'cluster', 'info'], { encoding: 'utf8' }).stdout ?? '',
    );
    if (states.every((info) => info.includes('cluster_state:ok'))) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error('the test cluster never reached cluster_state:ok');
}

export function clusterClient(nodes: string): Cluster {
  return new Cluster(
    nodes.split(',').map((node) => {
      const [host, port] = node.split(':');
      return { host, port: Number(port) };
    }),
    { lazyConnect: true },
  );
}
