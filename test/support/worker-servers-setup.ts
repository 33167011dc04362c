import { spawnSync } from 'node:child_process';
import Redis from 'ioredis';
import { startRedisCluster } from '../../harness/cluster';
import { startRedisServer } from '../../harness/redis';
import { WORKER_SERVERS_ENV, WorkerServer } from '../../harness/worker-servers';

interface Started {
  /** host:port of every node. */
  addresses: string[];
  stop: () => Promise<void>;
}
const STARTED = Symbol.for('trendboard.workerServers');
const state = globalThis as { [STARTED]?: Started[] };

/**
 * Jest globalSetup (integration, e2e, client; once per run, as they name the same file): a redis-server
 * and a Cluster for each worker (harness/worker-servers.ts). Not when REDIS_URL / REDIS_CLUSTER_NODES
 * name servers to use, nor without redis-server: files then start their own.
 */
export default async function startWorkerServers({ maxWorkers }: { maxWorkers: number }): Promise<void> {
  if (state[STARTED] || spawnSync('redis-server', ['--version']).status !== 0) return;
  const started: Started[] = [];
  state[STARTED] = started;
  // A Jest that ends by an error, before its globalTeardown, still takes its servers along.
  process.once('exit', () => void started.map((server) => server.stop()));
  const servers = await Promise.all(
    Array.from({ length: maxWorkers }, async (): Promise<WorkerServer> => {
      const [single, cluster] = await Promise.all([
        process.env.REDIS_URL ? undefined : startRedisServer(),
        process.env.REDIS_CLUSTER_NODES ? undefined : startRedisCluster(),
      ]);
      if (single) started.push({ addresses: [single.url.replace('redis://', '')], stop: single.stopServer });
      if (cluster) started.push({ addresses: cluster.nodes.split(','), stop: cluster.stopServer });
      return { url: single?.url ?? '', nodes: cluster?.nodes ?? '' };
    }),
  );
  process.env[WORKER_SERVERS_ENV] = JSON.stringify(servers);
}

/**
 * Jest globalTeardown: stops what startWorkerServers started, and fails the run when the files left
 * keys there: each file must delete the keys of its prefix (TestRedis.stop) and write no others.
 */
export async function stopWorkerServers(): Promise<void> {
  const started = state[STARTED]?.splice(0) ?? [];
  const left = await Promise.all(started.flatMap((server) => server.addresses.map(someKeys)));
  await Promise.all(started.map((server) => server.stop()));
  const keys = left.flat();
  if (keys.length > 0) {
    throw new Error(`test files left keys on the workers' shared Redis servers: ${keys.slice(0, 20).join(', ')}`);
  }
}

/** Up to a hundred keys of one node. */
async function someKeys(address: string): Promise<string[]> {
  const [host, port] = address.split(':');
  const client = new Redis({ host, port: Number(port), maxRetriesPerRequest: 1 });
  try {
    const keys: string[] = [];
    let cursor = '0';
    do {
      const [next, page] = await client.scan(cursor, 'COUNT', 100);
      keys.push(...page);
      cursor = next;
    } while (cursor !== '0' && keys.length < 100);
    return keys;
  } finally {
    client.disconnect();
  }
}
