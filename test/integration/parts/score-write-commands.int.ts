import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { Redis } from 'ioredis';
import request from 'supertest';
import { ADMIN, createBoard, startTestApp } from '../../../harness/app';
import { FakeClock } from '../../../harness/clock';
import { startTestRedis, TestRedis } from '../../../harness/redis';
import { WRITE_CALL_COMMANDS } from '../../../harness/worst-case/harness';
import { validateConfig } from '../../../src/common/config';
import { entryCost, type CostedBoard } from '../../../src/ranking/core/write-cost';
import { loggedCalls, logEveryCommand, stopLoggingEveryCommand } from '../../support/slowlog';

/**
 * A score batch's commands follow its weight on a max / min / last board: the most entries the cost
 * bound takes run at most WRITE_CALL_COMMANDS in one call, whatever the slots hold. Before the scores
 * were weighed by what a replaced record costs (a slot write, on last the item's newest slot, the
 * window's score), 64 scores at now on 8 windows were one call of about 3 300 commands, and the
 * harness's late scores ran 1 277 or 2 045 by where the clock fell in the wider windows' slots.
 */
const T0 = 1_700_006_400_000;
const MINUTE_SEC = 60;
const ITEMS = 50;
const SLOTS = 60;
const BOUND = validateConfig({}).WRITE_COST_PER_CALL;

/** 8 windows of 1 000 slots each, their intervals 1 to 8 minutes (the harness's `last` board). */
const windows = Array.from({ length: 8 }, (_, i) => ({
  name: `l${i + 1}`,
  period: 1000 * (i + 1) * MINUTE_SEC,
  interval: (i + 1) * MINUTE_SEC,
}));

describe('the commands of a score batch', () => {
  const clock = new FakeClock(T0);
  let redis: TestRedis;
  let app: NestFastifyApplication;
  let node: Redis;
  const nowSec = () => Math.floor(clock.nowMs() / 1000);
  const send = (board: string, items: object[]) =>
    request(app.getHttpServer()).post(`/boards/${board}/increments`).set(ADMIN).send({ items }).expect(200);

  beforeAll(async () => {
    // A server of its own: the test reads every command it ran from its SLOWLOG.
    redis = await startTestRedis('single', { own: true });
    app = await startTestApp(redis, clock);
    node = redis.client as Redis;
  });
  afterAll(async () => {
    await app.close();
    await redis.stop();
  });

  /** The most commands one batch FCALL's script ran while `send` ran. */
  async function measured(send: () => Promise<unknown>): Promise<number> {
    await logEveryCommand(node);
    await send();
    const calls = await loggedCalls(node);
    await stopLoggingEveryCommand(node);
    const batches = calls.filter(({ call }) => /_increment_batch$/.test(String(call[1])));
    return Math.max(0, ...batches.map(({ commands }) => commands.length));
  }

  /** ITEMS items in each of the newest SLOTS one-minute slots, in batches of `taken`. */
  async function seed(board: string, taken: number): Promise<void> {
    const at = nowSec();
    const entries = Array.from({ length: ITEMS * SLOTS }, (_, n) => ({
      item: `i${n % ITEMS}`,
      score: 1 + (n % 997),
      at: at - Math.floor(n / ITEMS) * MINUTE_SEC,
    }));
    for (let first = 0; first < entries.length; first += taken) await send(board, entries.slice(first, first + taken));
  }

  it.each(['last', 'max', 'min'] as const)(
    'on a %s board: new items at now, and late scores at every phase of the slots',
    async (aggregate) => {
      const board = `b-${aggregate}`;
      await createBoard(app, board, { aggregate, windows });
      const taken = Math.floor(BOUND / entryCost({}, { windows, views: [], aggregate } as CostedBoard));
      await seed(board, taken);
      const calls: number[] = [];
      calls.push(
        await measured(() =>
          send(
            board,
            Array.from({ length: taken }, (_, n) => ({ item: `new${n}`, score: n + 1 })),
          ),
        ),
      );
      // Late scores a minute apart: in some windows each replaces what the slot holds, in others not.
      for (let phase = 0; phase < 8; phase++) {
        clock.advanceSec(MINUTE_SEC);
        const at = nowSec() - (SLOTS - 1) * MINUTE_SEC - 30;
        const score = aggregate === 'min' ? -1 - phase : 10_000 + phase;
        const items = Array.from({ length: taken }, (_, n) => ({ item: `i${n % ITEMS}`, score: score - n, at }));
        calls.push(await measured(() => send(board, items)));
      }
      expect(calls.filter((commands) => commands > WRITE_CALL_COMMANDS)).toEqual([]);
    },
  );
});
