import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { Redis } from 'ioredis';
import request from 'supertest';
import { ADMIN, createBoard, startTestApp } from '../../../harness/app';
import { FakeClock } from '../../../harness/clock';
import { startTestRedis, TestRedis } from '../../../harness/redis';
import { WRITE_CALL_COMMANDS } from '../../../harness/worst-case/harness';
import { validateConfig } from '../../../src/common/config';
import { batchCost, costliestWrite } from '../../../src/ranking/core/write-cost';
import { SEGMENTED_SPLIT_BOARD, SEGMENTED_SPLIT_COSTED } from '../../support/boards';
import { scriptCallCommands } from '../../support/script-calls';

/**
 * A batch of entries with actors and segments at the write bound on the costliest segmented board (4
 * windows, a unique view, `ties: first`, capped actors; issue #45) goes in calls of bounded work
 * (write-cost.ts entryWork, callEntries): each call runs at most half WRITE_CALL_COMMANDS, as its
 * single write of 8 segments does (714). Before, the 25 entries with a new actor each were one call of
 * 1 658 commands, the 6 in one segment each one of 884. Each entry is applied once, and the batch's
 * retry with its Idempotency-Key replays every call (counted from each FCALL's script commands:
 * SLOWLOG at 0 µs on every node).
 */
const T0 = 1_700_006_400_000;
const BOUND = validateConfig({}).WRITE_COST_PER_CALL;
const CALL_COMMANDS = WRITE_CALL_COMMANDS / 2;
/** id, time, µs, arguments, client address, client name. */

describe.each(['single', 'cluster'] as const)('a segmented batch at the write bound, in calls (%s)', (topology) => {
  const clock = new FakeClock(T0);
  let redis: TestRedis;
  let app: NestFastifyApplication;
  let nodes: Redis[];
  const http = () => request(app.getHttpServer());

  beforeAll(async () => {
    redis = await startTestRedis(topology, { own: true });
    app = await startTestApp(redis, clock);
    const client = redis.client as Redis & { nodes?: (role: string) => Redis[] };
    nodes = topology === 'cluster' && client.nodes ? client.nodes('master') : [client];
  });
  afterAll(async () => {
    await app.close();
    await redis.stop();
  });

  /** The commands each batch FCALL's script ran since the last reset, on every node. */
  async function batchCalls(): Promise<number[]> {
    return scriptCallCommands(nodes, /_increment_batch$/);
  }

  async function measured(send: () => Promise<unknown>): Promise<number[]> {
    for (const node of nodes) {
      await node.config('SET', 'slowlog-log-slower-than', '0');
      await node.config('SET', 'slowlog-max-len', '100000');
      await node.slowlog('RESET');
    }
    await send();
    const calls = await batchCalls();
    for (const node of nodes) await node.config('SET', 'slowlog-log-slower-than', '10000');
    return calls;
  }

  it.each([0, 1, 2])(
    'entries with a new actor in %i segment(s): calls within the bound, each entry once',
    async (named) => {
      const name = `seg${named}`;
      await createBoard(app, name, SEGMENTED_SPLIT_BOARD);
      expect(costliestWrite(SEGMENTED_SPLIT_COSTED)).toBeLessThanOrEqual(BOUND);
      const segments = Array.from({ length: named }, (_, k) => `s${k}`);
      const taken = batchCost([[{ actor: 'a', segments }]], SEGMENTED_SPLIT_COSTED, BOUND).entriesWithin;
      const items = Array.from({ length: taken }, (_, n) => ({
        ...{ item: `i${n}`, amount: n + 1, actor: `a${n}` },
        ...(named > 0 && { segments }),
      }));
      const send = () => http().post(`/boards/${name}/increments`).set('Idempotency-Key', `k${named}`).send({ items });
      let answer: unknown;
      const calls = await measured(async () => (answer = (await send().expect(200)).body));
      expect({ most: Math.max(...calls), calls: calls.length > 1 || taken === 1 }).toEqual({
        most: Math.min(Math.max(...calls), CALL_COMMANDS),
        calls: true,
      });
      expect((await send().expect(200)).body).toEqual(answer);
      const scores = async (read: string) =>
        Object.fromEntries(
          (
            (await http().get(`/boards/${name}/top?window=w0&limit=100${read}`).expect(200)).body.items as Array<{
              item: string;
              score: number;
            }>
          ).map((row) => [row.item, row.score]),
        );
      const sent = Object.fromEntries(items.map((entry) => [entry.item, entry.amount]));
      expect(await scores('')).toEqual(sent);
      for (const segment of segments) expect(await scores(`&segment=${segment}`)).toEqual(sent);
    },
  );

  it("answers BATCH_PARTIAL when a later call is refused, the earlier calls' entries applied once", async () => {
    await createBoard(app, 'partial', SEGMENTED_SPLIT_BOARD);
    await http()
      .post('/admin/boards/partial/retractions')
      .set(ADMIN)
      .send({ actor: 'blocked', block: '1h' })
      .expect(202);
    const items = Array.from({ length: 25 }, (_, n) => ({
      item: `i${n}`,
      amount: 1,
      actor: n < 24 ? `a${n}` : 'blocked',
    }));
    const { body } = await http().post('/boards/partial/increments').send({ items }).expect(409);
    // 9 entries a call: the third call, holding the blocked actor's entry, is refused whole.
    expect(body).toMatchObject({
      code: 'BATCH_PARTIAL',
      message: expect.stringContaining('18 of 25 entries applied, 7 not'),
    });
    const top = await http().get('/boards/partial/top?window=w0&limit=100').expect(200);
    expect((top.body.items as unknown[]).length).toBe(18);
  });
});
