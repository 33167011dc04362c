import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { Redis } from 'ioredis';
import request from 'supertest';
import { ADMIN, startTestApp } from '../../harness/app';
import { FakeClock } from '../../harness/clock';
import { startTestRedis, TestRedis } from '../../harness/redis';
import {
  ARCHIVE_INDEX_PERIODS_PER_CHANGE,
  BATCH_ENTRIES,
  MODERATED_ITEMS_PER_SHARD,
} from '../../src/ranking/core/ranking.limits';
import { ARCHIVE_TOP_ITEMS } from '../../src/ranking/options/calendar/calendar.limits';
import { rowsOf } from '../support/archive-rows';
import { loggedCalls, logEveryCommand, stopLoggingEveryCommand } from '../support/slowlog';

/**
 * What a moderation change costs where one-shard archive pages keep the positions of their hidden rows
 * (snapshot_shown_lib's index_change_end): periods of the most rows (ARCHIVE_TOP_ITEMS),
 * the most hidden items a shard holds spread over them, every period's positions kept. The change
 * updates the newest periods' positions by the changed item's (each period's text copied, the item
 * found in it once) within ARCHIVE_INDEX_ROWS_PER_CHANGE rows of work, and leaves the older ones to
 * their next read. Counted from Redis: the commands the change's script ran (SLOWLOG at 0 µs). The
 * pages after it must equal the brute force, updated or found again.
 */
const T0 = Date.UTC(2026, 2, 2, 12);
const DAY_MS = 86_400_000;
const ROWS = ARCHIVE_TOP_ITEMS.max;
/** More periods than one change's work bound updates (4 of 10 000 rows): the bound is seen to bite. */
const PERIODS = 6;
const HIDDEN_EVERY = Math.floor(ROWS / MODERATED_ITEMS_PER_SHARD);
/** An item near every period's end: its find passes over the whole text. */
const CHANGED = `c${ROWS - 2}`;
/**
 * Most commands the change's call may run: the state write and its effective state, the config, the
 * exceptions before and after (a HGETALL each), per calendar window an EXISTS, the periods' starts and
 * entries, and per period updated its text and its entry (HSET, PTTL).
 */
const CALL_COMMANDS = 30 + 3 * ARCHIVE_INDEX_PERIODS_PER_CHANGE;

describe('a moderation change of a board keeping archive positions (single, one shard, the maxima)', () => {
  const clock = new FakeClock(T0);
  let redis: TestRedis;
  let app: NestFastifyApplication;
  let node: Redis;
  const http = () => request(app.getHttpServer());
  const starts: number[] = [];
  const amount = (n: number) => ROWS - n;
  /** The most hidden items a shard holds but one: the change takes the last place. */
  const hiddenAtFirst = (n: number) => n % HIDDEN_EVERY === 1 && n > 1;

  beforeAll(async () => {
    // A server of its own: the test reads every command the change ran from its SLOWLOG.
    redis = await startTestRedis('single', { own: true });
    // Closed periods drained in chunks of 1 000 fields: the seeding's reads are fewer (the change's bound is its own).
    app = await startTestApp(redis, clock, { EXPIRE_CHUNK: '1000' });
    node = redis.client as Redis;
    const windows = [{ name: 'day', calendar: 'day', archive: { keep: PERIODS, top: ROWS } }];
    await http().put('/admin/boards/many').set(ADMIN).send({ windows }).expect(201);
    for (let period = 0; period < PERIODS; period++) {
      starts.push((Math.floor(clock.nowMs() / DAY_MS) * DAY_MS) / 1000);
      for (let first = 0; first < ROWS; first += BATCH_ENTRIES.max) {
        const items = Array.from({ length: BATCH_ENTRIES.max }, (_, k) => ({
          item: `c${first + k}`,
          amount: amount(first + k),
        }));
        await http().post('/boards/many/increments').send({ items }).expect(200);
      }
      clock.advanceMs(DAY_MS);
      for (let read = 0; (await http().get('/boards/many/archives?window=day&limit=1')).status !== 200; read++)
        if (read > 100) throw new Error('the period never finished draining');
    }
    for (let n = 0; n < ROWS; n++)
      if (hiddenAtFirst(n))
        await http().put(`/admin/boards/many/moderation/items/c${n}`).set(ADMIN).send({ state: 'hidden' }).expect(204);
  }, 600_000);
  afterAll(async () => {
    await app.close();
    await redis.stop();
  });

  /** The last page of every period, checked against the brute force (the positions found or read as kept). */
  async function lastPages(hidden: (n: number) => boolean): Promise<void> {
    const shown = Array.from({ length: ROWS }, (_, n) => n).filter((n) => !hidden(n));
    const offset = shown.length - 100;
    const expected = shown.slice(offset).map((n, i) => ({ rank: offset + i + 1, item: `c${n}`, score: amount(n) }));
    for (const at of starts) {
      const { body } = await http()
        .get(`/boards/many/archive?window=day&at=${at}&offset=${offset}&limit=100`)
        .expect(200);
      expect([at, rowsOf(body.items)]).toEqual([at, expected]);
    }
  }

  async function stamps(): Promise<Map<number, string>> {
    const [key] = await node.keys('*archshown*');
    const entries = await node.hgetall(key);
    return new Map(Object.entries(entries).map(([at, entry]) => [Number(at), entry.split(' ')[0]]));
  }

  /** The commands the change's FCALL ran. */
  async function measuredChange(state: 'hidden' | null): Promise<{ commands: number }> {
    await logEveryCommand(node);
    const at = `/admin/boards/many/moderation/items/${CHANGED}`;
    if (state === null) await http().delete(at).set(ADMIN).expect(204);
    else await http().put(at).set(ADMIN).send({ state }).expect(204);
    const calls = await loggedCalls(node);
    await stopLoggingEveryCommand(node);
    const change = calls.find(({ call }) => /_moderation_set$/.test(String(call[1])));
    if (!change) throw new Error('no moderation_set call logged');
    return { commands: change.commands.length };
  }

  it('updates the newest periods within its bound, in one call of bounded commands, every page exact', async () => {
    await lastPages(hiddenAtFirst);
    const before = await stamps();
    expect(before.size).toBe(PERIODS);

    const hide = await measuredChange('hidden');
    const after = await stamps();
    const moved = starts.filter((at) => after.get(at) !== before.get(at));
    // Newest first, at least one, within the periods' bound.
    expect(moved).toEqual(starts.slice(starts.length - moved.length));
    expect(moved.length).toBeGreaterThan(0);
    expect(moved.length).toBeLessThanOrEqual(ARCHIVE_INDEX_PERIODS_PER_CHANGE);
    expect(moved.length).toBeLessThan(PERIODS);
    expect(hide.commands).toBeLessThanOrEqual(CALL_COMMANDS);
    await lastPages((n) => hiddenAtFirst(n) || `c${n}` === CHANGED);

    const clear = await measuredChange(null);
    expect(clear.commands).toBeLessThanOrEqual(CALL_COMMANDS);
    await lastPages(hiddenAtFirst);
    console.log(
      `moderation change, ${PERIODS} kept periods of ${ROWS} rows, ${MODERATED_ITEMS_PER_SHARD - 1} hidden: ` +
        `${moved.length} periods updated; hide ${hide.commands} commands; clear ${clear.commands} commands`,
    );
  }, 600_000);
});
