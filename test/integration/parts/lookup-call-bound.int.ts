import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { Redis } from 'ioredis';
import request from 'supertest';
import { ADMIN, startTestApp } from '../../../harness/app';
import { FakeClock } from '../../../harness/clock';
import { startTestRedis, TestRedis } from '../../../harness/redis';
import { LOOKUP_IDS_PER_CALL, LOOKUP_ITEMS } from '../../../src/ranking/core/ranking.limits';

/**
 * A lookup on one shard answers in calls of at most LOOKUP_IDS_PER_CALL ids (issue #45: 100 ids on a
 * moderated board were one call of 583 commands, 8.1 ms; then of 416, 5.4 ms), and the answer stays the one-call answer:
 * each id's rank, hidden flag and previous rank among the rows shown now equal the listing's. Counted
 * without a clock, from the commands each FCALL's script ran (SLOWLOG at 0 µs).
 */
const T0 = 1_700_006_400_000;
const MINUTE_MS = 60_000;
const ITEMS = 300;
const ASKED = 100;
/**
 * Commands a lookup runs per id at most: its score, rank (a count), left-out check and previous rank's
 * count; the previous listing's scores are one ZMSCORE for the call. Before, six (the score again for a
 * strict rank, and a ZSCORE of the previous listing each).
 */
const ID_COMMANDS = 4;
/** The few every lookup call runs besides (version check, expiry, snapshot check, moderation states). */
const FIXED_COMMANDS = 30;
/**
 * Most commands one lookup call may run: 50 ids and the call's own. Written out, not derived from
 * LOOKUP_IDS_PER_CALL: calls of 100 ids ran about 416 commands, 14.4 M Redis instructions (the
 * worst-case harness's moderated lookup, 5.4 ms a call).
 */
const CALL_COMMANDS = 50 * ID_COMMANDS + FIXED_COMMANDS;

/** id, time, µs, arguments, client address, client name. */
type SlowlogEntry = [number, number, number, string[], string, string];
const SCRIPT_CLIENT = '?:0';

type Row = { item: string; score: number; rank: number | null; previousRank: number | null; hidden?: true };

describe('the calls of a lookup on one shard (single)', () => {
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

  /** The commands each lookup FCALL's script ran, since the last reset. */
  async function lookupCalls(): Promise<number[]> {
    const entries = (await node.slowlog('GET', 100_000)) as SlowlogEntry[];
    const calls: number[] = [];
    let inCall = 0;
    // Oldest first: a script's commands are logged before the call that ran them.
    for (const [, , , args, client] of entries.reverse()) {
      if (client === SCRIPT_CLIENT) inCall += 1;
      else {
        if (/_lookup$/.test(String(args[1]))) calls.push(inCall);
        inCall = 0;
      }
    }
    return calls;
  }

  /** How many `command`s the scripts ran since the last reset. */
  async function scriptCommands(command: string): Promise<number> {
    const entries = (await node.slowlog('GET', 100_000)) as SlowlogEntry[];
    return entries.filter(([, , , args, client]) => client === SCRIPT_CLIENT && args[0] === command).length;
  }

  const amounts = (round: number) =>
    Array.from({ length: ITEMS }, (_, i) => ({ item: `i${i}`, amount: 1 + ((i * (round + 7)) % 53) }));

  it('answers 100 ids of a moderated board in calls of at most LOOKUP_IDS_PER_CALL ids, as the listing ranks them', async () => {
    const windows = [{ name: 'w', period: '1h', interval: '1m', snapshots: { keep: 2, top: 1000 } }];
    await http().put('/admin/boards/mod').set(ADMIN).send({ windows }).expect(201);
    await http()
      .post('/boards/mod/increments')
      .send({ items: amounts(0) })
      .expect(200);
    clock.advanceMs(MINUTE_MS);
    // The first read past the boundary keeps the listing as it was: the rows' previous ranks.
    await http().get('/boards/mod/top?window=w&limit=1').expect(200);
    await http()
      .post('/boards/mod/increments')
      .send({ items: amounts(1) })
      .expect(200);
    for (let i = 0; i < ITEMS; i += 7)
      await http().put(`/admin/boards/mod/moderation/items/i${i}`).set(ADMIN).send({ state: 'hidden' }).expect(204);
    const asked = [...Array.from({ length: ASKED - 2 }, (_, n) => `i${(n * 3) % ITEMS}`), 'absent', 'nobody'];

    await node.config('SET', 'slowlog-log-slower-than', '0');
    await node.config('SET', 'slowlog-max-len', '100000');
    await node.slowlog('RESET');
    const looked = await http().post('/boards/mod/lookup').send({ window: 'w', items: asked }).expect(200);
    const calls = await lookupCalls();
    await node.config('SET', 'slowlog-log-slower-than', '10000');

    const listing = await http().get('/boards/mod/top?window=w&limit=1000').expect(200);
    const listed = new Map((listing.body.items as Row[]).map((row) => [row.item, row]));
    const expected = asked.map((item) => {
      const row = listed.get(item);
      if (row) return { item, score: row.score, rank: row.rank, previousRank: row.previousRank };
      const hidden = Number(item.slice(1)) % 7 === 0;
      const score = hidden ? amounts(0)[Number(item.slice(1))].amount + amounts(1)[Number(item.slice(1))].amount : 0;
      return { item, score, rank: null, previousRank: null, ...(hidden ? { hidden: true } : {}) };
    });
    expect(looked.body.items).toEqual(expected);
    expect(expected.filter((row) => row.previousRank !== null).length).toBeGreaterThan(ASKED / 2);

    expect(calls).toHaveLength(Math.ceil(ASKED / LOOKUP_IDS_PER_CALL));
    expect(Math.max(...calls)).toBeLessThanOrEqual(CALL_COMMANDS);
  });

  it('bounds the whole request: the most ids a lookup names on that board are at most 20 calls and 4 commands an id', async () => {
    // Every id the window holds and more (absent ones answer score 0): 1 000 ids, LOOKUP_ITEMS.max.
    const asked = Array.from({ length: LOOKUP_ITEMS.max }, (_, n) => `i${n}`);
    await node.config('SET', 'slowlog-log-slower-than', '0');
    await node.slowlog('RESET');
    const looked = await http().post('/boards/mod/lookup').send({ window: 'w', items: asked }).expect(200);
    const calls = await lookupCalls();
    const scoreReads = await scriptCommands('ZMSCORE');
    await node.config('SET', 'slowlog-log-slower-than', '10000');
    expect(looked.body.items).toHaveLength(LOOKUP_ITEMS.max);
    // A call reads the hidden items' scores once, not once an id: at most 3 ZMSCOREs a call (those, the
    // ids' previous ranks, the states).
    expect(scoreReads).toBeLessThanOrEqual(3 * calls.length);
    // Calls of 25 ids were 40 calls, 5 763 commands on the harness's board (about 30 ms of Redis).
    expect(calls.length).toBeLessThanOrEqual(LOOKUP_ITEMS.max / 50);
    expect(Math.max(...calls)).toBeLessThanOrEqual(CALL_COMMANDS);
    expect(calls.reduce((sum, n) => sum + n, 0)).toBeLessThanOrEqual(
      LOOKUP_ITEMS.max * ID_COMMANDS + calls.length * FIXED_COMMANDS,
    );
  });
});
