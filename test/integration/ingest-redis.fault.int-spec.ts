import { NestFastifyApplication } from '@nestjs/platform-fastify';
import Redis from 'ioredis';
import { SystemClock } from '../../src/common/clock';
import { startTestApp } from '../support/app';
import {
  DurableRedis,
  FAULT_TIMEOUT_MS,
  faultWorkerEnv,
  runFaultScenario,
  sleep,
  startDurableRedis,
} from '../support/ingest-fault';
import { groupDrained, groupState, rewindGroup } from '../support/ingest-redis-group';

const PREFIX = 'fault:';
const STREAM = 'events';

/**
 * Exactly once from a Redis stream through crashes (runFaultScenario): 200 000 messages, the
 * consuming instance SIGKILLed three times, a second instance joining and leaving, Redis itself
 * killed and restarted once (AOF, fsync always). The boards must equal a brute-force count, and each
 * invalid message be in the dead-letter stream exactly once.
 */
describe('Redis stream ingest under faults', () => {
  let redis: DurableRedis;
  let client: Redis;
  let app: NestFastifyApplication;

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
      await runFaultScenario({
        app,
        client,
        prefix: PREFIX,
        env: { REDIS_URL: redis.url, ...faultWorkerEnv(PREFIX) },
        source: {
          declaration: { kind: 'redis-stream', stream: STREAM },
          send: async (payloads) => {
            // A MULTI is all or nothing: sent again whole until Redis (restarted meanwhile) takes it.
            for (;;) {
              try {
                const pipeline = client.multi();
                for (const payload of payloads) pipeline.xadd(STREAM, '*', 'event', payload);
                return (await pipeline.exec())!.map(([, id]) => String(id));
              } catch {
                await sleep(100);
              }
            }
          },
          fault: () => redis.restart(),
          drained: () => groupDrained(client, STREAM),
          state: () => groupState(client, STREAM),
          rewind: (from, ids) => rewindGroup(client, STREAM, from, ids),
          deadLetterIds: async () =>
            (await client.xrange(`${STREAM}:dead`, '-', '+')).map(([, fields]) => fields[fields.indexOf('id') + 1]),
        },
      });
    },
    FAULT_TIMEOUT_MS,
  );
});
