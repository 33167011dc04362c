import Redis from 'ioredis';
import {
  DurableRedis,
  FAULT_MESSAGES,
  FAULT_TIMEOUT_MS,
  faultWorkerEnv,
  runFaultScenario,
  sleep,
  startDurableRedis,
} from '../support/ingest-fault';
import { groupDrained, groupState, rewindGroup } from '../support/ingest-redis-group';

const PREFIX = 'fault:';
const STREAM = 'events';
/** The milliseconds part of every message's stream id: the run's start (ids `<ms>-<index + 1>`). */
const ID_MS = Date.now();
const TAKEN_ID = /equal or smaller than the target stream top item/;

/**
 * Stores a chunk in one MULTI, sent again whole until Redis (restarted meanwhile) takes it, under ids
 * of its own: Redis writes a transaction to its AOF (fsync always) before it answers, so a SIGKILL in
 * between keeps the chunk and loses the answer; sent again under `*` it would be stored twice (seen in
 * CI: every item of both boards over by a chunk's share). With its ids taken, the resend's XADDs all
 * fail and the chunk is known stored.
 */
async function storeOnce(client: Redis, payloads: string[], first: number): Promise<string[]> {
  const ids = payloads.map((_, k) => `${ID_MS}-${first + k + 1}`);
  for (;;) {
    let replies: [Error | null, unknown][];
    try {
      const pipeline = client.multi();
      payloads.forEach((payload, k) => pipeline.xadd(STREAM, ids[k], 'event', payload));
      replies = (await pipeline.exec())!;
    } catch {
      await sleep(100);
      continue;
    }
    if (replies.every(([error]) => error === null)) return ids;
    if (replies.every(([error]) => TAKEN_ID.test(String(error)))) return ids;
    throw new Error(`chunk from ${first} stored in part: ${JSON.stringify(replies.slice(0, 3))}`);
  }
}

/**
 * Exactly once from a Redis stream through crashes (runFaultScenario): FAULT_MESSAGES messages, the
 * consuming instance SIGKILLed three times, a second instance joining and leaving, Redis itself
 * killed and restarted once (AOF, fsync always). The boards must equal a brute-force count, and each
 * invalid message be in the dead-letter stream exactly once.
 */
describe('Redis stream ingest under faults', () => {
  let redis: DurableRedis;
  let client: Redis;

  beforeAll(async () => {
    redis = await startDurableRedis();
    client = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    client.on('error', () => undefined); // while the test restarts Redis
  });
  afterAll(async () => {
    client.disconnect();
    await redis.stop();
  });

  it(
    'counts every message once and dead-letters every invalid one once',
    async () => {
      await runFaultScenario({
        client,
        prefix: PREFIX,
        env: { REDIS_URL: redis.url, ...faultWorkerEnv(PREFIX) },
        source: {
          declaration: { kind: 'redis-stream', stream: STREAM },
          send: (payloads, first) => storeOnce(client, payloads, first),
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

  it('stores each message once (the scenario above sent each chunk until Redis took it)', async () => {
    expect(await client.xlen(STREAM)).toBe(FAULT_MESSAGES);
  });
});
