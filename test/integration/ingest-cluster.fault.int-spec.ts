import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Cluster } from 'ioredis';
import request from 'supertest';
import { SystemClock } from '../../src/common/clock';
import { progressName } from '../../src/ingest/ingest.store';
import { ADMIN, startTestApp } from '../support/app';
import { clusterClient, startRedisCluster } from '../support/cluster';
import {
  chaos,
  expectedBoards,
  FAULT_BOARDS,
  FAULT_MESSAGES,
  FAULT_TIMEOUT_MS,
  FAULT_WINDOW,
  faultMessages,
  sleep,
  stopWorker,
  storedBoards,
  waitFor,
} from '../support/ingest-fault';

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
  let app: NestFastifyApplication;
  const env = () => ({
    REDIS_CLUSTER_NODES: cluster.nodes,
    KEY_PREFIX: PREFIX,
    ADMIN_TOKEN: 'x'.repeat(32),
    SCHEDULER_ENABLED: 'false',
    INGEST_REFRESH_MS: '200',
    INGEST_LEASE_MS: '3000',
    INGEST_WAIT_MS: '100',
  });
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
    app = await startTestApp({ env: { REDIS_CLUSTER_NODES: cluster.nodes, KEY_PREFIX: PREFIX } }, new SystemClock(), {
      INGEST_ENABLED: 'false',
    });
  });
  afterAll(async () => {
    await app.close();
    client.disconnect();
    await cluster.stopServer();
  });

  it(
    'applies each shard part once, across crashes, a second instance and a script flush',
    async () => {
      for (const { name, shards } of FAULT_BOARDS)
        await request(app.getHttpServer())
          .put(`/admin/boards/${name}`)
          .set(ADMIN)
          .send({ windows: [{ name: FAULT_WINDOW, period: '1h', interval: '1m' }], shards })
          .expect(201);
      // The shards are on more than one node: a batch's parts are calls to different servers.
      const owners = new Set(
        await Promise.all(shardTags().map(async (tag) => (await nodeOf(client, `${tag}:cfg`)) ?? 'none')),
      );
      expect(owners.size).toBeGreaterThan(1);
      await request(app.getHttpServer())
        .put('/admin/ingest/events')
        .set(ADMIN)
        .send({ kind: 'redis-stream', stream: STREAM })
        .expect(201);

      const messages = faultMessages(FAULT_MESSAGES);
      const ids: string[] = [];
      const produce = (async () => {
        const chunk = Math.max(100, Math.ceil(messages.length / 60));
        for (let from = 0; from < messages.length; from += chunk) {
          const pipeline = client.multi();
          for (const m of messages.slice(from, from + chunk)) pipeline.xadd(STREAM, '*', 'event', m.payload);
          ids.push(...(await pipeline.exec())!.map(([, id]) => String(id)));
          await sleep(100);
        }
      })();
      const { workers, appliedAtKills } = await chaos(
        env(),
        produce,
        async () => {
          await Promise.all(client.nodes('master').map((node) => node.script('FLUSH')));
        },
        async () => Number(await client.hget(`{${PREFIX}ingest}:stats:events`, 'applied')),
      );

      await waitFor('the group to hold nothing pending or undelivered', () => drained(client), FAULT_TIMEOUT_MS);
      for (const worker of workers) await stopWorker(worker, 'SIGKILL');

      expect(await storedBoards(client, PREFIX)).toEqual(expectedBoards(messages));
      // Each shard's progress hash counts the events applied there: once each, summed over the shards.
      const perShard = await Promise.all(shardTags().map((tag) => appliedOn(client, tag)));
      expect(perShard.reduce((sum, count) => sum + count, 0)).toBe(messages.filter((m) => m.valid).length);
      expect(perShard.filter((count) => count > 0).length).toBe(shardTags().length);
      const dead = await client.xrange(`${STREAM}:dead`, '-', '+');
      const deadIds = dead.map(([, fields]) => fields[fields.indexOf('id') + 1]).sort();
      expect(deadIds).toEqual(ids.filter((_, i) => !messages[i].valid).sort());
      expect(appliedAtKills.some((count) => count > 0 && count < messages.length)).toBe(true);
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

async function drained(client: Cluster): Promise<boolean> {
  const groups = (await client.xinfo('GROUPS', STREAM)) as unknown[][];
  const info = Object.fromEntries(
    Array.from({ length: groups[0].length / 2 }, (_, i) => [groups[0][2 * i], groups[0][2 * i + 1]]),
  );
  return info.lag === 0 && info.pending === 0;
}

/** Events the source applied on one shard, from its progress hash there. */
async function appliedOn(client: Cluster, tag: string): Promise<number> {
  const progress = progressName('events', { kind: 'redis-stream', stream: STREAM });
  return Number((await client.hget(`${tag}:ingest:${progress}`, 'applied')) ?? 0);
}
