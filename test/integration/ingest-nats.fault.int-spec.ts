import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { jetstreamManager, JetStreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import Redis from 'ioredis';
import request from 'supertest';
import { SystemClock } from '../../src/common/clock';
import { ADMIN, startTestApp } from '../support/app';
import {
  chaos,
  DurableRedis,
  expectedBoards,
  FAULT_BOARDS,
  FAULT_MESSAGES,
  FAULT_TIMEOUT_MS,
  faultMessages,
  sleep,
  startDurableRedis,
  stopWorker,
  storedBoards,
  waitFor,
} from '../support/ingest-fault';
import { startTestNats, TestNats } from '../support/nats';

const PREFIX = 'fault:';

/**
 * Exactly once from JetStream through crashes: as the Redis stream fault test, with nats-server
 * (file store) killed and restarted once instead of Redis. Dead letters go to a stream of their own,
 * which drops a second copy by its message id.
 */
describe('NATS JetStream ingest under faults', () => {
  let redis: DurableRedis;
  let nats: TestNats;
  let client: Redis;
  let app: NestFastifyApplication;
  let connection: Awaited<ReturnType<typeof connect>>;
  let jsm: JetStreamManager;
  const env = () => ({
    REDIS_URL: redis.url,
    KEY_PREFIX: PREFIX,
    ADMIN_TOKEN: 'x'.repeat(32),
    SCHEDULER_ENABLED: 'false',
    INGEST_REFRESH_MS: '200',
    INGEST_LEASE_MS: '3000',
    INGEST_WAIT_MS: '100',
  });

  beforeAll(async () => {
    [redis, nats] = await Promise.all([startDurableRedis(), startTestNats()]);
    client = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    app = await startTestApp({ env: { REDIS_URL: redis.url, KEY_PREFIX: PREFIX } }, new SystemClock(), {
      INGEST_ENABLED: 'false',
    });
    connection = await connect({ servers: nats.url, reconnect: true, maxReconnectAttempts: -1 });
    jsm = await jetstreamManager(connection);
    await jsm.streams.add({ name: 'EVENTS', subjects: ['events.>'] });
    await jsm.streams.add({ name: 'DEAD', subjects: ['dead.events'] });
  });
  afterAll(async () => {
    await app.close();
    await connection.close();
    client.disconnect();
    await Promise.all([redis.stop(), nats.stop()]);
  });

  it(
    'counts every message once and dead-letters every invalid one once',
    async () => {
      for (const { name, shards } of FAULT_BOARDS)
        await request(app.getHttpServer())
          .put(`/admin/boards/${name}`)
          .set(ADMIN)
          .send({ windows: [{ period: '1h', interval: '1m' }], shards })
          .expect(201);
      await request(app.getHttpServer())
        .put('/admin/ingest/events')
        .set(ADMIN)
        .send({ kind: 'nats', servers: nats.url, stream: 'EVENTS', deadLetter: 'dead.events' })
        .expect(201);

      const messages = faultMessages(FAULT_MESSAGES);
      const sequences = new Array<number>(messages.length);
      const js = jsm.jetstream();
      // Each message published until JetStream stores it; its id makes a resend after a lost answer a duplicate.
      const produce = (async () => {
        const chunk = Math.max(100, Math.ceil(messages.length / 60));
        for (let from = 0; from < messages.length; from += chunk) {
          await Promise.all(
            messages.slice(from, from + chunk).map(async (m, i) => {
              for (;;) {
                try {
                  const ack = await js.publish('events.x', m.payload, { msgID: `m${from + i}`, timeout: 2000 });
                  sequences[from + i] = ack.seq;
                  return;
                } catch {
                  await sleep(200);
                }
              }
            }),
          );
          await sleep(100);
        }
      })();
      const { workers, appliedAtKills } = await chaos(
        env(),
        produce,
        () => nats.restart(),
        async () => Number(await client.hget(`{${PREFIX}ingest}:stats:events`, 'applied')),
      );

      await waitFor(
        'the consumer to hold nothing pending or unacknowledged',
        async () => {
          const info = await jsm.consumers.info('EVENTS', 'trendboard');
          return info.num_pending === 0 && info.num_ack_pending === 0 && info.delivered.stream_seq >= messages.length;
        },
        FAULT_TIMEOUT_MS,
      );
      for (const worker of workers) await stopWorker(worker, 'SIGKILL');

      expect(await storedBoards(client, PREFIX)).toEqual(expectedBoards(messages));
      const dead = await jsm.streams.info('DEAD');
      const deadIds: string[] = [];
      for (let seq = 1; seq <= dead.state.last_seq; seq++) {
        const stored = await jsm.streams.getMessage('DEAD', { seq });
        if (stored) deadIds.push((JSON.parse(stored.string()) as { id: string }).id);
      }
      const invalidIds = sequences.filter((_, i) => !messages[i].valid).map((seq) => `${seq}-0`);
      expect(deadIds.sort()).toEqual(invalidIds.sort());
      expect(appliedAtKills.some((count) => count > 0 && count < messages.length)).toBe(true);
    },
    FAULT_TIMEOUT_MS,
  );
});
