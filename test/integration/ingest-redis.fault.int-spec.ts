import { NestFastifyApplication } from '@nestjs/platform-fastify';
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

const PREFIX = 'fault:';
const STREAM = 'events';

/**
 * Exactly once from a Redis stream through crashes: FAULT_MESSAGES messages (INGEST_FAULT_MESSAGES;
 * 200 000 for the full run), the consuming instance SIGKILLed three times, a second instance joining
 * and leaving, Redis itself killed and restarted once (AOF, fsync always). The boards must equal a
 * brute-force count, and each invalid message be in the dead-letter stream exactly once.
 */
describe('Redis stream ingest under faults', () => {
  let redis: DurableRedis;
  let client: Redis;
  let app: NestFastifyApplication;
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
    redis = await startDurableRedis();
    client = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    client.on('error', () => undefined); // while the test restarts Redis
    app = await startTestApp({ env: { REDIS_URL: redis.url, KEY_PREFIX: PREFIX } }, new SystemClock(), {
      INGEST_ENABLED: 'false',
    });
  });
  afterAll(async () => {
    await app.close();
    client.disconnect();
    await redis.stop();
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
        .send({ kind: 'redis-stream', stream: STREAM })
        .expect(201);

      const messages = faultMessages(FAULT_MESSAGES);
      const ids: string[] = [];
      // Sent over ~6 s in chunks, each chunk retried until Redis takes it (it is restarted meanwhile).
      const produce = (async () => {
        const chunk = Math.max(100, Math.ceil(messages.length / 60));
        for (let from = 0; from < messages.length; from += chunk) {
          const part = messages.slice(from, from + chunk);
          for (;;) {
            try {
              const pipeline = client.multi();
              for (const m of part) pipeline.xadd(STREAM, '*', 'event', m.payload);
              const replies = (await pipeline.exec())!;
              ids.push(...replies.map(([, id]) => String(id)));
              break;
            } catch {
              await sleep(100); // a MULTI is all or nothing: sent again whole
            }
          }
          await sleep(100);
        }
      })();
      const { workers, appliedAtKills } = await chaos(
        env(),
        produce,
        () => redis.restart(),
        async () => Number(await client.hget(`{${PREFIX}ingest}:stats:events`, 'applied')),
      );

      await waitFor(
        'the group to hold nothing pending or undelivered',
        async () => {
          const groups = (await client.xinfo('GROUPS', STREAM)) as unknown[][];
          const info = Object.fromEntries(
            Array.from({ length: groups[0].length / 2 }, (_, i) => [groups[0][2 * i], groups[0][2 * i + 1]]),
          );
          return info.lag === 0 && info.pending === 0;
        },
        FAULT_TIMEOUT_MS,
      );
      for (const worker of workers) await stopWorker(worker, 'SIGKILL');

      expect(await storedBoards(client, PREFIX)).toEqual(expectedBoards(messages));
      const dead = await client.xrange(`${STREAM}:dead`, '-', '+');
      const deadIds = dead.map(([, fields]) => fields[fields.indexOf('id') + 1]).sort();
      const invalidIds = ids.filter((_, i) => !messages[i].valid).sort();
      expect(deadIds).toEqual(invalidIds);
      // The kills fell while messages were being applied, not before the first or after the last.
      expect(appliedAtKills.some((count) => count > 0 && count < messages.length)).toBe(true);
    },
    FAULT_TIMEOUT_MS,
  );
});
