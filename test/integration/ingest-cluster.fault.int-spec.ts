import { Cluster } from 'ioredis';
import { progressName } from '../../src/ingest/ingest.store';
import { clusterClient, startRedisCluster } from '../../harness/cluster';
import { FAULT_BOARDS, FAULT_TIMEOUT_MS, faultWorkerEnv, runFaultScenario } from '../support/ingest-fault';
import { groupDrained, groupState, rewindGroup } from '../support/ingest-redis-group';

const PREFIX = 'cfault:';
/** A hash tag: the stream and its default dead-letter stream (`{events}:dead`) share a slot, as a Cluster needs. */
const STREAM = '{events}';

/**
 * Exactly once on a real three-master Cluster: every batch spans both boards and the four shards of
 * one of them, which live on different nodes, so each batch is split into one script call per shard
 * (each atomic with the source's progress on that shard). The consuming instance is SIGKILLed three
 * times, a second one joins and leaves, and every node's script cache is flushed once (as after a
 * failover): the boards must equal a brute-force count, the shards' own `applied` counts must add up to
 * the valid messages, and each invalid message be dead-lettered exactly once.
 */
describe('Redis stream ingest on a Cluster, batches split per shard, under faults', () => {
  let cluster: { nodes: string; stopServer: () => Promise<void> };
  let client: Cluster;
  const shardTags = () =>
    FAULT_BOARDS.flatMap(({ name, shards }) =>
      Array.from({ length: shards }, (_, k) =>
        k === 0 ? `{${PREFIX}board:${name}}` : `{${PREFIX}board:${name}/${k}}`,
      ),
    );

  beforeAll(async () => {
    cluster = await startRedisCluster();
    client = clusterClient(cluster.nodes);
    await client.connect();
  });
  afterAll(async () => {
    client.disconnect();
    await cluster.stopServer();
  });

  it(
    'applies each shard part once, across crashes, a second instance and a script flush',
    async () => {
      const { messages } = await runFaultScenario({
        client,
        prefix: PREFIX,
        env: { REDIS_CLUSTER_NODES: cluster.nodes, ...faultWorkerEnv(PREFIX) },
        source: {
          declaration: { kind: 'redis-stream', stream: STREAM },
          send: async (payloads) => {
            const pipeline = client.multi();
            for (const payload of payloads) pipeline.xadd(STREAM, '*', 'event', payload);
            return (await pipeline.exec())!.map(([, id]) => String(id));
          },
          fault: async () => {
            await Promise.all(client.nodes('master').map((node) => node.script('FLUSH')));
          },
          drained: () => groupDrained(client, STREAM),
          state: () => groupState(client, STREAM),
          rewind: (from, ids) => rewindGroup(client, STREAM, from, ids),
          deadLetterIds: async () =>
            (await client.xrange(`${STREAM}:dead`, '-', '+')).map(([, fields]) => fields[fields.indexOf('id') + 1]),
        },
        // The shards are on more than one node: a batch's parts are calls to different servers.
        declared: async () => {
          const owners = new Set(
            await Promise.all(shardTags().map(async (tag) => (await nodeOf(client, `${tag}:cfg`)) ?? 'none')),
          );
          expect(owners.size).toBeGreaterThan(1);
        },
      });
      // Each shard's progress hash counts the events applied there: once each, summed over the shards.
      const perShard = await Promise.all(shardTags().map((tag) => appliedOn(client, tag)));
      expect(perShard.reduce((sum, count) => sum + count, 0)).toBe(messages.filter((m) => m.valid).length);
      expect(perShard.filter((count) => count > 0).length).toBe(shardTags().length);
    },
    FAULT_TIMEOUT_MS,
  );
});

/** The master serving a key's slot ("host:port"). */
async function nodeOf(client: Cluster, key: string): Promise<string | undefined> {
  const slot = Number(await client.cluster('KEYSLOT', key));
  const range = (await client.cluster('SLOTS')).find(([from, to]) => slot >= from && slot <= to);
  const master = range?.[2];
  return master ? `${master[0]}:${master[1]}` : undefined;
}

/** Events the source applied on one shard, from its progress hash there. */
async function appliedOn(client: Cluster, tag: string): Promise<number> {
  const progress = progressName('events', { kind: 'redis-stream', stream: STREAM });
  return Number((await client.hget(`${tag}:ingest:${progress}`, 'applied')) ?? 0);
}
