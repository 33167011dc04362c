import { AckPolicy, DeliverPolicy, jetstreamManager, JetStreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import Redis from 'ioredis';
import { NATS_ACK_WAIT_MS } from '../../src/ingest/ingest.limits';
import {
  DurableRedis,
  FAULT_TIMEOUT_MS,
  faultWorkerEnv,
  runFaultScenario,
  sleep,
  startDurableRedis,
} from '../support/ingest-fault';
import { publishStored, startTestNats, TestNats } from '../support/nats';

const PREFIX = 'nfault:';

/**
 * Exactly once from JetStream through crashes (runFaultScenario): as the Redis stream fault test, with
 * nats-server (file store) killed and restarted once instead of Redis, and the durable consumer made
 * again from an earlier sequence at the end (the Redis test's rewind). Dead letters go to a stream of
 * their own, which drops a second copy by its message id.
 */
describe('NATS JetStream ingest under faults', () => {
  let redis: DurableRedis;
  let nats: TestNats;
  let client: Redis;
  let connection: Awaited<ReturnType<typeof connect>>;
  let jsm: JetStreamManager;

  beforeAll(async () => {
    [redis, nats] = await Promise.all([startDurableRedis(), startTestNats()]);
    client = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    connection = await connect({ servers: nats.url, reconnect: true, maxReconnectAttempts: -1 });
    jsm = await jetstreamManager(connection);
    await jsm.streams.add({ name: 'EVENTS', subjects: ['events.>'] });
    // A duplicate window longer than the test (2 min by default): the rewind's dead letters are dropped.
    await jsm.streams.add({ name: 'DEAD', subjects: ['dead.events'], duplicate_window: 15 * 60 * 1e9 });
  });
  afterAll(async () => {
    await connection.close();
    client.disconnect();
    await Promise.all([redis.stop(), nats.stop()]);
  });

  /** Each message published until JetStream stores it; its id makes a resend after a lost answer a duplicate. */
  async function publish(payloads: string[], first: number): Promise<string[]> {
    const messages = payloads.map((payload, i) => ({ payload, id: `m${first + i}` }));
    return (await publishStored(connection, 'events.x', messages)).map((sequence) => `${sequence}-0`);
  }

  /**
   * The durable consumer made again from the stream sequence of `ids[from]`: JetStream delivers every
   * message from there again, all applied and acknowledged already. The running instance finds its
   * consumer gone (or its deliveries renumbered) and opens again; should it make the consumer itself
   * in between (from the start of the stream: a deeper rewind), it is replaced.
   */
  async function rewind(from: number, ids: string[]): Promise<void> {
    const config = {
      durable_name: 'trendboard',
      ack_policy: AckPolicy.Explicit,
      ack_wait: NATS_ACK_WAIT_MS * 1_000_000,
      deliver_policy: DeliverPolicy.StartSequence,
      opt_start_seq: Number(ids[from].split('-')[0]),
    };
    for (let attempt = 1; ; attempt++) {
      await jsm.consumers.delete('EVENTS', 'trendboard').catch(() => false);
      try {
        await jsm.consumers.add('EVENTS', config);
        return;
      } catch (error) {
        if (attempt === 20) throw error;
        await sleep(100);
      }
    }
  }

  /**
   * Every dead letter's id, read in one ordered pass over the stream: a request per stored message (about
   * 6 000 of them, read twice) cost more than the rest of the checks.
   */
  async function deadLetterIds(): Promise<string[]> {
    const held = (await jsm.streams.info('DEAD')).state.messages;
    const ids: string[] = [];
    if (held === 0) return ids;
    const messages = await (await jsm.jetstream().consumers.get('DEAD')).consume();
    for await (const message of messages) {
      ids.push(message.json<{ id: string }>().id);
      if (ids.length === held) break;
    }
    await messages.close();
    return ids;
  }

  it(
    'counts every message once and dead-letters every invalid one once',
    async () => {
      await runFaultScenario({
        client,
        prefix: PREFIX,
        env: { REDIS_URL: redis.url, ...faultWorkerEnv(PREFIX) },
        source: {
          declaration: { kind: 'nats', servers: nats.url, stream: 'EVENTS', deadLetter: 'dead.events' },
          send: publish,
          fault: () => nats.restart(),
          drained: async (count) => {
            const info = await jsm.consumers.info('EVENTS', 'trendboard');
            return info.num_pending === 0 && info.num_ack_pending === 0 && info.delivered.stream_seq >= count;
          },
          rewind,
          deadLetterIds,
          deadLettersOnceAfterRewind: true,
        },
      });
    },
    FAULT_TIMEOUT_MS,
  );
});
