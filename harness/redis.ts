import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import Redis, { Cluster } from 'ioredis';
import { clusterClient, startRedisCluster } from './cluster';
import { freePort, stopChild, waitForPing } from './processes';
import { workerServers } from './worker-servers';

export type Topology = 'single' | 'cluster';
/** The topologies every integration and e2e suite runs on. */
export const TOPOLOGIES: Topology[] = ['single', 'cluster'];
/**
 * The (topology, shards) cells a property spec checks its model in: one shard and three on one node
 * (where groupByNode puts every shard's keys in one call), and three on a Cluster (a call per node, each
 * shard's keys routed by its hash tag). One shard on a Cluster is no cell of its own: from the fixed
 * property seed (test/support/property-seed.ts) it would run the first of the one-node cell's inputs
 * again, as the same calls, on the keys of a three-shard board's shard 0 (the same hash tag); no Lua
 * branches on the board's shard count.
 */
export const SHARD_CELLS: ReadonlyArray<readonly [Topology, 1 | 3]> = [
  ['single', 1],
  ['single', 3],
  ['cluster', 3],
];

/** The shard counts SHARD_CELLS checks on `topology`: for a spec whose app is made once per topology. */
export const shardsOn = (topology: Topology): Array<1 | 3> =>
  SHARD_CELLS.filter(([cell]) => cell === topology).map(([, shards]) => shards);

/**
 * A Redis for this test file.
 * single:  REDIS_URL if set (never the machine's 127.0.0.1:6379), else the Jest worker's redis-server
 *          (harness/worker-servers.ts), else a testcontainers Redis when a Docker engine answers, else
 *          `redis-server` from PATH on a free port.
 * cluster: REDIS_CLUSTER_NODES if set, else the Jest worker's Cluster, else three
 *          `redis-server --cluster-enabled yes` on free ports.
 * Every file also gets its own key prefix, so files sharing one server never see each other's keys.
 * With `own` or `serverArgs` the server is always the file's own.
 */
export interface TestRedis {
  topology: Topology;
  /** Single node: its URL (empty for a Cluster). */
  url: string;
  /** What the app needs to reach it: REDIS_URL or REDIS_CLUSTER_NODES, and KEY_PREFIX. */
  env: Record<string, string>;
  prefix: string;
  /** A plain client for raw checks; closed by stop(). */
  client: Redis | Cluster;
  source: string;
  /** Deletes this file's keys (those of its prefix) on every master node; other files' keys stay. */
  clear(): Promise<void>;
  /**
   * This file's keys matching `pattern`, over every master node (SCAN). The pattern is matched right
   * after the prefix, which sits at the start of a key or just inside its opening brace:
   * keys('board:b}*') finds `{<prefix>board:b}:cfg`, keys('*') every key of the file.
   */
  keys(pattern: string): Promise<string[]>;
  /**
   * keys(pattern) without the stored answers of retry-safe writes (`…}:idem:<bucket>`): on a Cluster
   * every write leaves one for a minute (RESEND_GUARD_MS), so data checks look past them.
   */
  dataKeys(pattern: string): Promise<string[]>;
  /**
   * SCRIPT FLUSH and FUNCTION FLUSH on every node, as after a Redis restart without persistence: clients
   * must reload their scripts and function libraries.
   * Not on a server given by REDIS_URL: it would hit the pipelines of files running meanwhile (the
   * worker's server runs one file at a time, and the next file's app loads its libraries again).
   */
  flushScripts?(): Promise<void>;
  /** Clears this file's keys from a shared server, closes the client, stops a private server. */
  stop(): Promise<void>;
  /** Stops and restarts a private single-node server on the same port (outage tests). */
  pause?(): Promise<void>;
  resume?(): Promise<void>;
  /** SIGSTOP / SIGCONT of a private single-node server: it keeps its connections but answers nothing. */
  freeze?(): void;
  thaw?(): void;
}

const MACHINE_REDIS = /^rediss?:\/\/(localhost|127\.0\.0\.1|\[::1\])(:6379)?(\/|$)/;

interface Server {
  stopServer: () => Promise<void>;
  /**
   * concurrent: given by REDIS_URL / REDIS_CLUSTER_NODES, other test files may be using it right now.
   * worker: the Jest worker's, used by the files that worker runs, one after another.
   */
  shared?: 'concurrent' | 'worker';
  pause?: () => Promise<void>;
  resume?: () => Promise<void>;
  freeze?: () => void;
  thaw?: () => void;
  source: string;
}

export interface TestRedisOptions {
  /** redis-server arguments (e.g. maxmemory): such options are never set on a server others use. */
  serverArgs?: readonly string[];
  /**
   * A server of the file's own even without serverArgs: for files that stop, restart or freeze it
   * (pause, freeze), or that write keys outside their prefix.
   */
  own?: boolean;
  /** The key prefix to use instead of a fresh random one: keys a reloaded RDB file holds (a private server's). */
  prefix?: string;
}

export async function startTestRedis(
  topology: Topology = 'single',
  { serverArgs, own, prefix = `t${randomBytes(4).toString('hex')}:` }: TestRedisOptions = {},
): Promise<TestRedis> {
  const ownServer = own || serverArgs !== undefined;
  if (topology === 'cluster') {
    const server = ownServer ? await ownCluster(serverArgs) : await clusterServer();
    const client = clusterClient(server.nodes);
    await client.connect();
    const env = { REDIS_CLUSTER_NODES: server.nodes, KEY_PREFIX: prefix };
    return assemble({ topology: 'cluster', url: '', env, prefix, client, server });
  }
  const url = ownServer ? (requireRedisServer(), await startRedisServer(serverArgs)) : await singleServer();
  // A stream closed by a paused server would otherwise hold the process for ioredis' 2 s disconnect timer.
  const client = new Redis(url.url, { maxRetriesPerRequest: 1, lazyConnect: true, disconnectTimeout: 100 });
  await client.connect();
  const env = { REDIS_URL: url.url, KEY_PREFIX: prefix };
  return assemble({ topology: 'single', url: url.url, env, prefix, client, server: url });
}

async function ownCluster(serverArgs: readonly string[] = []): Promise<Server & { nodes: string }> {
  requireRedisServer();
  return { ...(await startRedisCluster([...serverArgs])), source: 'redis-server cluster' };
}

async function clusterServer(): Promise<Server & { nodes: string }> {
  const given = process.env.REDIS_CLUSTER_NODES;
  if (given) return { nodes: given, source: 'REDIS_CLUSTER_NODES', shared: 'concurrent', stopServer: noStop };
  const worker = workerServers()?.nodes;
  if (worker) return { nodes: worker, source: 'worker redis-server cluster', shared: 'worker', stopServer: noStop };
  return ownCluster();
}

const noStop = async (): Promise<void> => undefined;

/** Unlinks every key of `prefix` on each of the nodes. */
async function clearPrefixed(nodes: Redis[], prefix: string): Promise<void> {
  await Promise.all(
    nodes.map(async (node) => {
      const keys = await prefixedKeys(node, prefix, '*');
      // One key per command: on a Cluster node a multi-key UNLINK must not span slots.
      if (keys.length > 0) await keys.reduce((pipeline, key) => pipeline.unlink(key), node.pipeline()).exec();
    }),
  );
}

/** A started server and its client, as the tests use them. */
interface Assembly {
  topology: Topology;
  url: string;
  env: Record<string, string>;
  prefix: string;
  client: Redis | Cluster;
  server: Server;
}

function assemble({ topology, url, env, prefix, client, server }: Assembly): TestRedis {
  const nodes = () => (client instanceof Cluster ? client.nodes('master') : [client]);
  const clear = () => clearPrefixed(nodes(), prefix);
  const keys = async (pattern: string) =>
    (await Promise.all(nodes().map((node) => prefixedKeys(node, prefix, pattern)))).flat();
  return {
    topology,
    url,
    env,
    prefix,
    client,
    source: server.source,
    pause: server.pause,
    resume: server.resume,
    freeze: server.freeze,
    thaw: server.thaw,
    clear,
    keys,
    dataKeys: async (pattern) => (await keys(pattern)).filter((key) => !/\}:idem:\d+$/.test(key)),
    flushScripts:
      server.shared === 'concurrent'
        ? undefined
        : async () => {
            await Promise.all(nodes().flatMap((node) => [node.script('FLUSH'), node.function('FLUSH')]));
          },
    stop: async () => {
      if (server.shared) await clear(); // a private server goes away with its keys
      client.disconnect();
      await server.stopServer();
    },
  };
}

/** SCAN of one node for `<prefix><pattern>` and `{<prefix><pattern>`. */
export async function prefixedKeys(node: Redis, prefix: string, pattern: string): Promise<string[]> {
  const found = new Set<string>();
  for (const match of [`${prefix}${pattern}`, `{${prefix}${pattern}`]) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', match, 'COUNT', 1000);
      for (const key of keys) found.add(key);
      cursor = next;
    } while (cursor !== '0');
  }
  return [...found];
}

function requireRedisServer(): void {
  if (spawnSync('redis-server', ['--version']).status !== 0) {
    throw new Error(
      'No redis-server for the tests: install it (apt-get install redis-server / brew install redis), or set REDIS_URL and REDIS_CLUSTER_NODES.',
    );
  }
}

async function singleServer(): Promise<Server & { url: string }> {
  const given = process.env.REDIS_URL;
  if (given && !MACHINE_REDIS.test(given))
    return { url: given, source: 'REDIS_URL', shared: 'concurrent', stopServer: noStop };
  const worker = workerServers()?.url;
  if (worker) return { url: worker, source: 'worker redis-server', shared: 'worker', stopServer: noStop };
  if (process.env.DOCKER_HOST || existsSync('/var/run/docker.sock')) {
    const started = await tryTestcontainers();
    if (started) return started;
  }
  requireRedisServer();
  return startRedisServer();
}

async function tryTestcontainers(): Promise<(Server & { url: string }) | undefined> {
  try {
    const { GenericContainer, Wait } = await import('testcontainers');
    const container = await new GenericContainer('redis:7.4-alpine')
      .withExposedPorts(6379)
      .withWaitStrategy(Wait.forLogMessage('Ready to accept connections'))
      .start();
    return {
      url: `redis://${container.getHost()}:${container.getMappedPort(6379)}`,
      source: 'testcontainers',
      stopServer: async () => {
        await container.stop();
      },
    };
  } catch {
    return undefined;
  }
}

function spawnServer(port: number, serverArgs: readonly string[]): ChildProcess {
  return spawn(
    'redis-server',
    [
      ...['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--loglevel', 'warning'],
      ...serverArgs,
    ],
    {
      stdio: 'ignore',
    },
  );
}

export async function startRedisServer(serverArgs: readonly string[] = []): Promise<Server & { url: string }> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const port = await freePort();
    let child = spawnServer(port, serverArgs);
    if (!(await waitForPing(port, child))) {
      await stopChild(child);
      continue;
    }
    return {
      url: `redis://127.0.0.1:${port}`,
      source: 'redis-server',
      stopServer: () => stopChild(child),
      pause: () => stopChild(child),
      resume: async () => {
        child = spawnServer(port, serverArgs);
        if (!(await waitForPing(port, child))) throw new Error(`redis-server did not restart on port ${port}`);
      },
      freeze: () => void child.kill('SIGSTOP'),
      thaw: () => void child.kill('SIGCONT'),
    };
  }
  throw new Error('could not start redis-server on a free port');
}
