import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Redis, { Cluster } from 'ioredis';
import { freeClusterPort, stopChild, waitForPing } from './processes';

/**
 * A real three-master Redis Cluster of this test file's own (`masters`: another count, for benches): redis-server --cluster-enabled yes on
 * three free ports, started side by side and joined by CLUSTER ADDSLOTSRANGE and MEET (about half a
 * second; `redis-cli --cluster create` waits in whole seconds, 4 to 7 s on a busy 2-core machine). With
 * `replicas`, each master gets that many replicas (failover tests) through `redis-cli --cluster create`,
 * and the start waits until every replica is in sync; `nodes` then lists every node, masters first as
 * redis-cli assigned them.
 */
export async function startRedisCluster(
  serverArgs: string[] = [],
  { replicas = 0, masters = 3 }: { replicas?: number; masters?: number } = {},
): Promise<{ nodes: string; stopServer: () => Promise<void>; pids: () => number[] }> {
  const total = masters * (1 + replicas);
  // A replica's first sync is diskless and would wait 5 s (repl-diskless-sync-delay) for more replicas;
  // a shorter node timeout makes nodes gossip more often, so all learn the replicas sooner (about 3 s
  // less to start). It also detects a dead node sooner: nothing here waits for that.
  const replicaArgs = ['--repl-diskless-sync-delay', '0', '--cluster-node-timeout', '3000'];
  const args = replicas > 0 ? [...replicaArgs, ...serverArgs] : serverArgs;
  const dir = mkdtempSync(join(tmpdir(), 'tb-cluster-'));
  const children: ChildProcess[] = [];
  const stopServer = async () => {
    await Promise.all(children.map(stopChild));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const ports = await startNodes(total, (port) => {
      const child = spawn('redis-server', [...nodeArgs(port, dir), ...args], { stdio: 'ignore' });
      children.push(child);
      return child;
    });
    if (replicas > 0) await createWithReplicas(ports, masters, replicas);
    else await joinMasters(ports);
    const pids = () => children.map((child) => child.pid).filter((pid) => pid !== undefined);
    return { nodes: ports.map((p) => `127.0.0.1:${p}`).join(','), stopServer, pids };
  } catch (error) {
    await stopServer();
    throw error;
  }
}

function nodeArgs(port: number, dir: string): string[] {
  return [
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
  ];
}

/** Starts `total` nodes at once on free port pairs (a port taken meanwhile: that node again elsewhere); their ports. */
async function startNodes(total: number, start: (port: number) => ChildProcess): Promise<number[]> {
  const ports: number[] = [];
  for (let attempt = 0; ports.length < total; attempt++) {
    if (attempt >= 10) throw new Error(`could not start ${total} cluster nodes`);
    const started = await Promise.all(
      Array.from({ length: total - ports.length }, async () => {
        const port = await freeClusterPort();
        const child = start(port);
        if (await waitForPing(port, child)) return port;
        await stopChild(child);
        return undefined;
      }),
    );
    ports.push(...started.filter((port) => port !== undefined));
  }
  return ports;
}

const CLUSTER_SLOTS = 16_384;
/** How long the nodes may take to agree that the cluster is whole. */
const JOIN_BUDGET_MS = 30_000;

/**
 * What `redis-cli --cluster create` does for masters alone: the slots split evenly in ranges (as it
 * splits them), a distinct config epoch each, every node met; then waits until each node sees every
 * slot served (cluster_state:ok) by all the nodes.
 */
async function joinMasters(ports: number[]): Promise<void> {
  const clients = ports.map((port) => new Redis({ port, host: '127.0.0.1', maxRetriesPerRequest: 1 }));
  try {
    const bound = (i: number) => Math.round((i * CLUSTER_SLOTS) / ports.length);
    await Promise.all(
      clients.map(async (client, i) => {
        await client.call('CLUSTER', 'ADDSLOTSRANGE', String(bound(i)), String(bound(i + 1) - 1));
        await client.call('CLUSTER', 'SET-CONFIG-EPOCH', String(i + 1));
      }),
    );
    await Promise.all(ports.slice(1).map((port) => clients[0].call('CLUSTER', 'MEET', '127.0.0.1', String(port))));
    const whole = (info: string) =>
      info.includes('cluster_state:ok') && info.includes(`cluster_known_nodes:${ports.length}\r`);
    const deadline = performance.now() + JOIN_BUDGET_MS;
    while (!(await Promise.all(clients.map((c) => c.call('CLUSTER', 'INFO')))).every((i) => whole(String(i)))) {
      if (performance.now() > deadline) throw new Error('the test cluster never reached cluster_state:ok');
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  } finally {
    for (const client of clients) client.disconnect();
  }
}

async function createWithReplicas(ports: number[], masters: number, replicas: number): Promise<void> {
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
  await waitForReplicasInSync(ports, masters * replicas);
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
