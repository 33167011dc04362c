import calculateSlot from 'cluster-key-slot';
import type { Cluster } from 'ioredis';
import { startTestRedis, TestRedis } from '../../../harness/redis';
import { clusterConnection, natMapOf, nodeOptions } from '../../../src/redis/redis-options';
import { FaultProxy } from '../../support/fault-proxy';

/**
 * The service's Cluster connection reaching its nodes through a NAT map (one proxy a node): a node's
 * connection cut while commands are in flight sends them again, and each must reach its node however
 * ioredis redirects it meanwhile (clusterConnection).
 */
describe('a Cluster reached through REDIS_CLUSTER_NAT_MAP', () => {
  let redis: TestRedis;
  let cluster: Cluster;
  const proxies = new Map<string, FaultProxy>();

  beforeAll(async () => {
    redis = await startTestRedis('cluster');
    for (const node of redis.env.REDIS_CLUSTER_NODES.split(','))
      proxies.set(node, await FaultProxy.start(Number(node.split(':')[1])));
    const through = [...proxies].map(([node, proxy]) => [node, `127.0.0.1:${proxy.port}`]);
    const natMap = natMapOf(through.map(([node, proxied]) => `${node}=${proxied}`).join(','));
    const nodes = through.map(([, proxied]) => ({ host: '127.0.0.1', port: Number(proxied.split(':')[1]) }));
    cluster = clusterConnection(
      nodes,
      nodeOptions({ commandTimeoutMs: 10_000, autoPipelining: false, reconnectMaxMs: 1000 }),
      natMap,
    );
    await new Promise((resolve) => cluster.once('ready', resolve));
  });
  afterAll(async () => {
    cluster.disconnect();
    for (const proxy of proxies.values()) await proxy.close();
    await redis.stop();
  });

  /** The proxy in front of the node serving `key`: the slot map names it by its mapped or its announced address. */
  const proxyOf = (key: string) => {
    const address = cluster.slots[calculateSlot(key)][0];
    const port = Number(address.split(':')[1]);
    return proxies.get(address) ?? [...proxies.values()].find((proxy) => proxy.port === port);
  };

  it('gets every command in flight through a lost connection, however often it is redirected', async () => {
    const failures: string[] = [];
    for (let round = 0; round < 20; round++) {
      const tag = `{${redis.prefix}nat${round}}`;
      proxyOf(tag)?.dropNextReply();
      const sameNode = Array.from({ length: 20 }, (_, i) => cluster.incr(`${tag}:${i}`));
      const elsewhere = Array.from({ length: 8 }, (_, i) => cluster.incr(`{${redis.prefix}nat${round}.${i}}:x`));
      for (const outcome of await Promise.allSettled([...sameNode, ...elsewhere]))
        if (outcome.status === 'rejected') failures.push(String(outcome.reason));
    }
    expect(failures).toEqual([]);
  });
});
