import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { Redis } from 'ioredis';
import request from 'supertest';
import { ADMIN, startTestApp } from '../../../harness/app';
import { FakeClock } from '../../../harness/clock';
import { startTestRedis, TestRedis } from '../../../harness/redis';
import { BoardsStore } from '../../../src/ranking/boards/boards.store';
import { BATCH_ENTRIES, MODERATED_ITEMS_PER_SHARD } from '../../../src/ranking/core/ranking.limits';
import {
  ARCHIVE_INDEX_ROWS_PER_CHUNK_FIELD,
  ARCHIVE_TOP_ITEMS,
} from '../../../src/ranking/options/calendar/calendar.limits';
import { AppConfig } from '../../../src/common/config';

/**
 * A deep page of a dense moderated archive on one shard (issue #49, #45's bounds): the largest period
 * (ARCHIVE_TOP_ITEMS rows) with the most hidden items a shard holds (MODERATED_ITEMS_PER_SHARD) spread
 * over it. The shard answers the page's rows only, found from the hidden rows' positions
 * (archive_read.lua), where it answered every row from the top through the page (about 9 800 rows for
 * the last page, ~200 KB out of Redis). Counted from Redis: the bytes it sent for the request (INFO
 * stats) and the commands the archive read's script ran (SLOWLOG at 0 µs).
 */
const T0 = Date.UTC(2026, 2, 2, 12);
const DAY_MS = 86_400_000;
const ROWS = ARCHIVE_TOP_ITEMS.max;
const HIDDEN_EVERY = Math.floor(ROWS / MODERATED_ITEMS_PER_SHARD);
const LIMIT = 100;
/** Rows of the period's text one call passes over for the hidden positions (at the default EXPIRE_CHUNK). */
const INDEX_ROWS_PER_CALL = ARCHIVE_INDEX_ROWS_PER_CHUNK_FIELD * new AppConfig().EXPIRE_CHUNK;
/** Calls of the first deep read after a change: the pass over the period in steps, the page in the last. */
const FIRST_READ_CALLS = Math.ceil(ROWS / INDEX_ROWS_PER_CALL) + 1;
/**
 * Bytes Redis may send for one page of LIMIT rows: the rows (~20 bytes each), the read's other calls
 * (version, rate budget) and the INFO reply read before it. The scan from the top sent ~10x this.
 */
const PAGE_BYTES = 20_000;
/**
 * Most commands the archive read's call may run: the version check, the window's expiry and archive
 * checks, the moderation states, the period's text and its exception positions (read, kept, pruned).
 */
const CALL_COMMANDS = 25;

/** Bytes the kept positions of the period may take: ~60 B, 6 B per hidden row, ~400 B of the key and hash. */
const INDEX_BYTES = 60 + 6 * MODERATED_ITEMS_PER_SHARD + 400;

/** id, time, µs, arguments, client address, client name. */
type SlowlogEntry = [number, number, number, string[], string, string];
const SCRIPT_CLIENT = '?:0';
type Row = { rank: number; item: string; score: number };

describe('a deep page of a dense moderated archive (single, one shard)', () => {
  const clock = new FakeClock(T0);
  let redis: TestRedis;
  let app: NestFastifyApplication;
  let node: Redis;
  const http = () => request(app.getHttpServer());

  beforeAll(async () => {
    // A server of its own: the test reads every command it ran from its SLOWLOG, and its bytes out.
    redis = await startTestRedis('single', { own: true });
    app = await startTestApp(redis, clock);
    node = redis.client as Redis;
  }, 60_000);
  afterAll(async () => {
    await app.close();
    await redis.stop();
  });

  const amount = (n: number) => ROWS - n;
  const hidden = (n: number) => n % HIDDEN_EVERY === 1;

  async function bytesOut(): Promise<number> {
    const stats = await node.info('stats');
    return Number(/total_net_output_bytes:(\d+)/.exec(stats)?.[1]);
  }

  /** The commands each archive read FCALL's script ran, and its µs, since the last reset. */
  async function archiveCalls(): Promise<{ commands: number; micros: number }[]> {
    const entries = (await node.slowlog('GET', 100_000)) as SlowlogEntry[];
    const calls: { commands: number; micros: number }[] = [];
    let inCall = 0;
    // Oldest first: a script's commands are logged before the call that ran them.
    for (const [, , micros, args, client] of entries.reverse()) {
      if (client === SCRIPT_CLIENT) inCall += 1;
      else {
        if (/_archive_read$/.test(String(args[1]))) calls.push({ commands: inCall, micros });
        inCall = 0;
      }
    }
    return calls;
  }

  /** The page, the bytes Redis sent for it and the commands of each archive read call. */
  async function measured(
    offset: number,
  ): Promise<{ items: Row[]; bytes: number; calls: { commands: number; micros: number }[] }> {
    await node.config('SET', 'slowlog-log-slower-than', '0');
    await node.config('SET', 'slowlog-max-len', '100000');
    await node.slowlog('RESET');
    const before = await bytesOut();
    const { body } = await http().get(`/boards/big/archive?window=day&offset=${offset}&limit=${LIMIT}`).expect(200);
    const bytes = (await bytesOut()) - before;
    const calls = await archiveCalls();
    await node.config('SET', 'slowlog-log-slower-than', '10000');
    return { items: body.items as Row[], bytes, calls };
  }

  it('answers the last page from the page rows only, within the command bound, as the brute force', async () => {
    const windows = [{ name: 'day', calendar: 'day', archive: { keep: 2, top: ROWS } }];
    await http().put('/admin/boards/big').set(ADMIN).send({ windows }).expect(201);
    for (let first = 0; first < ROWS; first += BATCH_ENTRIES.max) {
      const items = Array.from({ length: BATCH_ENTRIES.max }, (_, k) => ({
        item: `c${first + k}`,
        amount: amount(first + k),
      }));
      await http().post('/boards/big/increments').send({ items }).expect(200);
    }
    clock.advanceMs(DAY_MS);
    // The closed period is archived in chunks by the reads (503 WINDOW_DRAINING until done).
    for (let read = 0; (await http().get('/boards/big/archives?window=day&limit=1')).status !== 200; read++)
      if (read > 200) throw new Error('the period never finished draining');
    for (let n = 0; n < ROWS; n++)
      if (hidden(n))
        await http().put(`/admin/boards/big/moderation/items/c${n}`).set(ADMIN).send({ state: 'hidden' }).expect(204);

    const shown = Array.from({ length: ROWS }, (_, n) => n).filter((n) => !hidden(n));
    const deep = shown.length - LIMIT;
    const expected = (offset: number) =>
      shown.slice(offset, offset + LIMIT).map((n, i) => ({ rank: offset + i + 1, item: `c${n}`, score: amount(n) }));

    const top = await measured(0);
    // The first deep read after a change goes on with the pass the shallow read began, in calls of at
    // most INDEX_ROWS_PER_CALL rows each; the next reads the positions as kept.
    const first = await measured(deep);
    const again = await measured(deep);
    for (const [offset, page, calls] of [
      [0, top, 1],
      [deep, first, FIRST_READ_CALLS],
      [deep, again, 1],
    ] as const) {
      expect(page.items.map(({ rank, item, score }) => ({ rank, item, score }))).toEqual(expected(offset));
      expect(page.calls.length).toBeGreaterThanOrEqual(calls === 1 ? 1 : 2);
      expect(page.calls.length).toBeLessThanOrEqual(calls);
      for (const call of page.calls) expect(call.commands).toBeLessThanOrEqual(CALL_COMMANDS);
      expect(page.bytes).toBeLessThanOrEqual(PAGE_BYTES * page.calls.length);
    }
    // What the positions hold: one field for the one period kept, ~6 B per hidden row.
    const [indexKey, ...others] = await node.keys('*archshown*');
    expect(others).toEqual([]);
    expect(await node.hlen(indexKey)).toBe(1);
    expect(Number(await node.call('MEMORY', 'USAGE', indexKey))).toBeLessThanOrEqual(INDEX_BYTES);

    // Deleting the board drops the positions with the rest of its keys.
    await http().delete('/admin/boards/big').set(ADMIN).expect(204);
    await app.get(BoardsStore).drops.settled();
    expect(await node.keys('*board:big*')).toEqual([]);
  }, 240_000);
});
