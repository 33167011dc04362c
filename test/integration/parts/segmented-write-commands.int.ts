import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { Redis } from 'ioredis';
import request from 'supertest';
import { createBoard, startTestApp } from '../../../harness/app';
import { FakeClock } from '../../../harness/clock';
import { startTestRedis, TestRedis } from '../../../harness/redis';
import { WRITE_CALL_COMMANDS } from '../../../harness/worst-case/harness';
import { validateConfig } from '../../../src/common/config';
import { batchCost, costliestWrite, type CostedBoard } from '../../../src/ranking/core/write-cost';

/**
 * A segmented write's commands follow its weight (issue #45): the costliest single write a board takes
 * and the costliest batch the cost bound lets through (each entry a new actor in 8 new segments) run
 * at most WRITE_CALL_COMMANDS commands in any call, on board shapes from one window to the costliest
 * segmented one. Counted without a clock, from the commands each FCALL's script ran (SLOWLOG at 0 µs).
 */
const T0 = 1_700_006_400_000;
const BOUND = validateConfig({}).WRITE_COST_PER_CALL;

/** id, time, µs, arguments, client address, client name. */
type SlowlogEntry = [number, number, number, string[], string, string];
const SCRIPT_CLIENT = '?:0';

const windows = (count: number) =>
  Array.from({ length: count }, (_, w) => ({ name: `w${w}`, period: `${w + 1}h`, interval: '1m' }));
/** Every mode a board without actors may declare, twice, over two windows. */
const SIX_VIEWS = [
  { name: 'fading', mode: 'decay', window: 'w0', halfLife: '30m' },
  { name: 'daily', mode: 'decay', window: 'w1', halfLife: '2h' },
  { name: 'hot', mode: 'hot', window: 'w1', tau: '12h' },
  { name: 'hotm', mode: 'hot', window: 'w0' },
  { name: 'rising', mode: 'rising', window: 'w0', baseline: 'w1' },
  { name: 'risingh', mode: 'rising', window: 'w0', baseline: 'w1', minCount: 2 },
];
type Shape = { windows: object[]; views?: object[]; ties?: 'first'; actors?: object | true };
const SHAPES: Record<string, Shape> = {
  'one window': { windows: windows(1) },
  'one window, actors': { windows: windows(1), actors: true },
  'eight windows': { windows: windows(8) },
  'eight windows, actors': { windows: windows(8), actors: true },
  'eight windows, a unique view, actors (the costliest shape with actors the floor weighs)': {
    windows: windows(8),
    views: [{ name: 'people', mode: 'unique', window: 'w7' }],
    actors: true,
  },
  'two windows, six views': { windows: windows(2), views: SIX_VIEWS },
  'four windows, a unique view, ties first, capped actors': {
    windows: windows(4),
    views: [{ name: 'people', mode: 'unique', window: 'w0' }],
    ties: 'first',
    actors: { capPerItem: 1000 },
  },
};

describe('the commands of a segmented write (single)', () => {
  const clock = new FakeClock(T0);
  let redis: TestRedis;
  let app: NestFastifyApplication;
  let node: Redis;
  const http = () => request(app.getHttpServer());

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

  /** The most commands one write FCALL's script ran, since the last reset. */
  async function costliestCall(): Promise<number> {
    const entries = (await node.slowlog('GET', 100_000)) as SlowlogEntry[];
    let most = 0;
    let inCall = 0;
    // Oldest first: a script's commands are logged before the call that ran them.
    for (const [, , , args, client] of entries.reverse()) {
      if (client === SCRIPT_CLIENT) inCall += 1;
      else {
        if (/_increment(_batch)?$/.test(String(args[1]))) most = Math.max(most, inCall);
        inCall = 0;
      }
    }
    return most;
  }

  async function measured(send: () => Promise<unknown>): Promise<number> {
    await node.config('SET', 'slowlog-log-slower-than', '0');
    await node.config('SET', 'slowlog-max-len', '100000');
    await node.slowlog('RESET');
    await send();
    await node.config('SET', 'slowlog-log-slower-than', '10000');
    return costliestCall();
  }

  it.each(Object.keys(SHAPES))(
    '%s: the single write and the costliest batch within the commands bound',
    async (shape) => {
      const name = `b${Object.keys(SHAPES).indexOf(shape)}`;
      const body = { ...SHAPES[shape], segments: { max: 10_000 } };
      await createBoard(app, name, body);
      const actors = body.actors !== undefined;
      const capPerItem =
        typeof body.actors === 'object' ? (body.actors as { capPerItem: number }).capPerItem : undefined;
      const costed: CostedBoard = { ...body, views: body.views ?? [], segmentsMax: 10_000, actors, capPerItem };
      expect(costliestWrite(costed)).toBeLessThanOrEqual(BOUND);
      let fresh = 0;
      const entry = () => {
        fresh += 1;
        const segments = Array.from({ length: 8 }, (_, k) => `s${fresh}-${k}`);
        return { item: `i${fresh}`, amount: 1, ...(actors && { actor: `a${fresh}` }), segments };
      };
      const single = await measured(() =>
        http()
          .post(`/boards/${name}/increments`)
          .send({ items: [entry()] })
          .expect(200),
      );
      const taken = batchCost([[entry()]], costed, BOUND).entriesWithin;
      const items = Array.from({ length: taken }, entry);
      const batch = await measured(() => http().post(`/boards/${name}/increments`).send({ items }).expect(200));
      // Each within the bound, and the batch as many such entries as the cost bound lets through (1 on
      // the costliest shapes: their single write is the call). Before SEGMENT_PLACE_FLOOR one window's
      // batch took 72 plain entries and ran 5 981 commands.
      expect({
        shape,
        single: Math.min(single, WRITE_CALL_COMMANDS),
        batch: Math.min(batch, WRITE_CALL_COMMANDS),
      }).toEqual({ shape, single, batch });
    },
  );
});
