import { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { Redis } from 'ioredis';
import request from 'supertest';
import { startTestApp } from '../../../harness/app';
import { FakeClock } from '../../../harness/clock';
import { startTestRedis, TestRedis } from '../../../harness/redis';
import { ItemDataService } from '../../../src/ranking/items/items.service';
import {
  ITEM_DATA_BYTES,
  ITEM_DATA_READ_BYTES_PER_CALL,
  ITEM_DATA_ROWS_PER_CALL,
} from '../../../src/ranking/options/item-data/item-data.limits';
import { RankingService } from '../../../src/ranking/ranking.service';
import { loggedCalls, logEveryCommand, stopLoggingEveryCommand } from '../../support/slowlog';

/**
 * A `top` of 1 000 rows with their data reads the data in calls of at most ITEM_DATA_ROWS_PER_CALL
 * items (issue #45: one call reading 1 MB was 7.7 ms), each call past the first a read of the client's
 * budget, and answers every row's own data. Counted without a clock, from the commands SLOWLOG logged.
 */
const T0 = 1_700_002_800_000;
const ROWS = 1000;
/** SLOWLOG keeps 32 arguments of a command, the last one then "... (<n> more arguments)". */
const MORE = /^\.\.\. \((\d+) more arguments\)$/;

/** The fields an HMGET asked for, as SLOWLOG logged it (HMGET, the key, then the fields). */
function fieldsOf(command: string[]): number {
  const more = MORE.exec(command[command.length - 1]);
  return more ? command.length - 1 + Number(more[1]) - 2 : command.length - 2;
}

describe('the data of a top read in calls of a bounded size (single)', () => {
  let redis: TestRedis;
  let app: NestFastifyApplication;
  const clock = new FakeClock(T0);
  const http = () => request(app.getHttpServer());

  beforeAll(async () => {
    // A server of its own: the test reads every call it ran from its SLOWLOG.
    redis = await startTestRedis('single', { own: true });
    app = await startTestApp(redis, clock, { READ_RATE_LIMIT_PER_SEC: '1', READ_RATE_LIMIT_BURST: '4' });
  });
  afterAll(async () => {
    await app.close();
    await redis.stop();
  });

  it('answers 1 000 rows of 1 KB each in calls of at most ITEM_DATA_ROWS_PER_CALL, charged as reads', async () => {
    const ranking = app.get(RankingService);
    const data = app.get(ItemDataService);
    await ranking.putBoard({ name: 'd', windows: [{ name: 'm', period: '1h', interval: '1m' }] });
    const entries = Array.from({ length: ROWS }, (_, n) => ({ item: `i${n}`, amount: ROWS - n }));
    await ranking.incrementBatch('d', entries);
    const blob = (n: number) => ({ n, blob: 'x'.repeat(ITEM_DATA_BYTES - 30) });
    for (let n = 0; n < ROWS; n++) await data.write({ name: 'd', item: `i${n}`, data: blob(n) });

    const node = redis.client as Redis;
    await logEveryCommand(node);
    const top = await http().get(`/boards/d/top?window=m&limit=${ROWS}&data=true`).expect(200);
    const calls = (await loggedCalls(node)).filter(({ call }) => String(call[1]).endsWith('_item_data_read'));
    await stopLoggingEveryCommand(node);

    expect(top.body.items.map((row: { data: unknown }) => row.data)).toEqual(entries.map((_, n) => blob(n)));
    const fields = calls.map(({ commands }) => commands.filter((command) => command[0] === 'HMGET').map(fieldsOf));
    // One call of ROWS fields before: 1 MB answered by one call.
    expect(fields.flat().reduce((sum, n) => sum + n, 0)).toBe(ROWS);
    for (const call of fields) {
      expect(call).toHaveLength(1);
      expect(call[0]).toBeLessThanOrEqual(ITEM_DATA_ROWS_PER_CALL);
      expect(call[0] * ITEM_DATA_BYTES).toBeLessThanOrEqual(ITEM_DATA_READ_BYTES_PER_CALL);
    }
    expect(calls).toHaveLength(Math.ceil(ROWS / ITEM_DATA_ROWS_PER_CALL));
    // The route's read and a read for each data call past the first: the burst of 4 is spent.
    await http().get('/boards/d/top?window=m&limit=1').expect(429);
  });
});
