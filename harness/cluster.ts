import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cluster } from 'ioredis';
import { freeClusterPort, stopChild, waitForPing } from './processes';

/**
 * A real three-master Redis Cluster of this test file's own: redis-server --cluster-enabled yes on
 * three free ports, joined with `redis-cli --cluster create` (about a second). With `replicas`, each
 * master gets that many replicas (failover tests), and the start waits until every replica is in
 * sync; `nodes` then lists every node, masters first as redis-cli assigned them.
 */
export async function startRedisCluster(
  serverArgs: string[] = [],
  { replicas = 0 }: { replicas?: number } = {},
): Promise<{ nodes: string; stopServer: () => Promise<void> }> {
  const total = 3 * (1 + replicas);
  // A replica's first sync is diskless and would wait 5 s (repl-diskless-sync-delay) for more replicas;
  // a shorter node timeout makes nodes gossip more often, so all learn the replicas sooner (about 3 s
  // less to start). It also detects a dead node sooner: nothing here waits for that.
  const replicaArgs = ['--repl-diskless-sync-delay', '0', '--cluster-node-timeout', '3000'];
  const args = replicas > 0 ? [...replicaArgs, ...serverArgs] : serverArgs;
  const dir = mkdtempSync(join(tmpdir(), 'tb-cluster-'));
  const children: ChildProcess[] = [];
  const ports: number[] = [];
  const stopServer = async () => {
    await Promise.all(children.map(stopChild));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (let attempt = 0; ports.length < total; attempt++) {
      if (attempt >= 10 + total) throw new Error(`could not start ${total} cluster nodes`);
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
          ...args,
        ],
        { stdio: 'ignore' },
      );
      children.push(child);
      if (await waitForPing(port, child)) ports.push(port);
      else await stopChild(child);
    }
    const create = spawnSync(
      'redis-cli',
      [
        '--cluster',
        'create',
        ...ports.map((p) => `127.0.0.1:${p}`),
        '--cluster-replicas',
        String(replicas),
        '--cluster-yes',
      ],
      { encoding: 'utf8', timeout: 30_000 },
    );
    if (create.status !== 0) throw new Error(`redis-cli --cluster create failed: ${create.stdout}${create.stderr}`);
    await waitForClusterOk(ports);
    if (replicas > 0) await waitForReplicasInSync(ports, 3 * replicas);
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

/** Polls every node (bounded) until each replica reports its link to its master up and every node knows it. */
async function waitForReplicasInSync(ports: number[], expected: number): Promise<void> {
  for (let attempt = 0; attempt < 400; attempt++) {
    const infos = ports.map(
      (port) => spawnSync('redis-cli', ['-p', String(port), 'info', 'replication'], { encoding: 'utf8' }).stdout ?? '',
    );
    const replicas = infos.filter((info) => info.includes('role:slave'));
    // Every node must also know them as replicas (gossip lags): a failover needs that view.
    const views = ports.map(
      (port) => spawnSync('redis-cli', ['-p', String(port), 'cluster', 'nodes'], { encoding: 'utf8' }).stdout ?? '',
    );
    const replicaLines = (view: string) => view.split('\n').filter((line) => /^\S+ \S+ (myself,)?slave /.test(line));
    const known = views.every((view) => replicaLines(view).length === expected);
    if (known && replicas.length === expected && replicas.every((info) => info.includes('master_link_status:up'))) {
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error('the test cluster replicas never got in sync with their masters');
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
