import type { ChainableCommander, Redis } from 'ioredis';
import { ADMIN } from '../../../harness/app';
import { WRITE_CALL_COMMANDS } from '../../../harness/worst-case/harness';
import { useTestApp } from '../../support/app-world';
import { readArchived } from '../../support/archive-rows';
import { loggedCalls, logEveryCommand, stopLoggingEveryCommand } from '../../support/slowlog';
import { shardTag } from '../../support/boards';

/**
 * The ended entries a `groups: true` board's listings held (archive_held_lib: histheld of rolling
 * snapshots, segheld of segment archives whose text expired) leave in calls each within
 * WRITE_CALL_COMMANDS (issues #45, #49), and all of them leave: before, a snapshot pruned 1 000 ended
 * entries at about 8 commands each (one expire call of 16 049 commands in the worst-case harness), and
 * a chunk of segment archive rows 4 texts of 1 000. Each prune now takes as many entries as the call
 * adds and a fixed number more, in the same few commands whatever their number. The entries are
 * stored as the app stores them, of items that left every window under group `g` (the archived map);
 * counted without a clock, from the commands each FCALL's script ran (SLOWLOG at 0 µs).
 */
const T0 = Date.UTC(2026, 2, 2, 12);
const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;
const ENDED = 2000;
/** Calls (a snapshot or a segment archive each) the backlog may take to leave: ENDED / 100 and slack. */
const MOST_ROUNDS = 40;
const SEP = '\x1f';
/** Rows of the calendar archive dropped: at ~8 commands an item before, 4 000 in one call. */
const ARCHIVED = 500;

describe('ended entries held for groups leave in bounded calls (single)', () => {
  // A server of its own: the test reads every command it ran from its SLOWLOG.
  const world = useTestApp('single', T0, true);
  const http = () => world.http();
  const node = () => world.redis.client as Redis;
  const clock = world.clock;

  /** The shard's config key's tag ("{…}:"). */
  const tagOf = (board: string) => shardTag(world.redis, board);

  /** ENDED items x0.. kept in the archived map under group g, as if held by a listing (`held` adds its entry). */
  async function seedArchived(tag: string, held: (batch: ChainableCommander, item: string, i: number) => void) {
    const batch = node().pipeline();
    for (let i = 0; i < ENDED; i++) {
      batch.hset(`${tag}grouparch`, `x${i}`, 'g').zadd(`${tag}bygrouparch`, 0, `g${SEP}x${i}`);
      held(batch, `x${i}`, i);
    }
    await batch.exec();
  }

  /** Runs `round` until `done`, logging every command: the most any FCALL's script ran, and the rounds. */
  async function mostCommands(round: () => Promise<void>, done: () => Promise<boolean>) {
    let most = 0;
    let rounds = 0;
    for (; rounds < MOST_ROUNDS && !(await done()); rounds++) {
      await logEveryCommand(node());
      await round();
      const calls = (await loggedCalls(node())).filter(({ call }) => /^fcall/i.test(call[0]));
      most = Math.max(most, ...calls.map(({ commands }) => commands.length));
    }
    await stopLoggingEveryCommand(node());
    return { most, rounds };
  }

  it('prunes ended snapshot holds (histheld) within WRITE_CALL_COMMANDS a call, to the last one', async () => {
    const windows = [{ name: 'w', period: '1h', interval: '1m', snapshots: { keep: 2, top: 1000 } }];
    await http().put('/admin/boards/hist').set(ADMIN).send({ windows, groups: true }).expect(201);
    const send = () =>
      http()
        .post('/boards/hist/increments')
        .send({ items: [{ item: 'a', amount: 1, group: 'g' }] })
        .expect(200);
    await send();
    const tag = await tagOf('hist');
    const endedSec = Math.floor(clock.nowMs() / 1000) - 1;
    await seedArchived(tag, (batch, item) => batch.zadd(`${tag}histheld`, endedSec, item));
    const ended = () => node().zcount(`${tag}histheld`, '-inf', Math.floor(clock.nowMs() / 1000));
    const { most, rounds } = await mostCommands(
      async () => {
        clock.advanceMs(MINUTE_MS);
        await send(); // crosses the boundary: a snapshot, whose hook prunes
      },
      async () => (await ended()) === 0,
    );
    expect(most).toBeLessThanOrEqual(WRITE_CALL_COMMANDS);
    expect(await ended()).toBe(0);
    expect(rounds).toBeGreaterThan(1); // a backlog left for later calls, not all in one
    expect(await node().hlen(`${tag}grouparch`)).toBe(0);
    expect(await node().zcard(`${tag}bygrouparch`)).toBe(0);
  }, 120_000);

  it('prunes the holds of expired segment archive texts (segheld) within WRITE_CALL_COMMANDS a call', async () => {
    const windows = [{ name: 'day', calendar: 'day', archive: { keep: 3, top: 4 } }];
    await http()
      .put('/admin/boards/seg')
      .set(ADMIN)
      .send({ windows, groups: true, segments: { max: 4 } })
      .expect(201);
    const send = (item: string) =>
      http()
        .post('/boards/seg/increments')
        .send({ items: [{ item, amount: 1, group: 'g', segments: ['s'] }] })
        .expect(200);
    await send('a');
    const tag = await tagOf('seg');
    // Texts Redis expired (never stored here), soonest first: four texts of ENDED / 4 entries each.
    const text = (i: number) => `${tag}day~s:snap:${i % 4}`;
    await seedArchived(tag, (batch, item, i) =>
      batch.zadd(`${tag}segheld`, 1 + (i % 4), item).hset(`${tag}segtext`, item, text(i)),
    );
    const gone = () => node().zcount(`${tag}segheld`, '-inf', 4);
    let day = 0;
    const { most } = await mostCommands(
      async () => {
        clock.advanceMs(DAY_MS);
        await send(`b${day++}`); // the segment's day closed: its archive rows written, which prune
        for (const query of ['', '&segment=s']) await readArchived(http, 'seg', `/archives?window=day${query}`);
      },
      async () => (await gone()) === 0,
    );
    expect(most).toBeLessThanOrEqual(WRITE_CALL_COMMANDS);
    expect(await gone()).toBe(0);
    expect(await node().hmget(`${tag}segtext`, 'x0', 'x1999')).toEqual([null, null]);
    expect(await node().hlen(`${tag}grouparch`)).toBe(await node().zcard(`${tag}bygrouparch`));
    expect(await node().hexists(`${tag}grouparch`, 'x0')).toBe(0);
  }, 120_000);

  it("prunes a dropped calendar archive's holds (archheld) within WRITE_CALL_COMMANDS a call, to the last one", async () => {
    const windows = [{ name: 'day', calendar: 'day', archive: { keep: 1, top: ARCHIVED } }];
    await http().put('/admin/boards/cal').set(ADMIN).send({ windows, groups: true }).expect(201);
    const send = (prefix: string, count: number) =>
      http()
        .post('/boards/cal/increments')
        .send({ items: Array.from({ length: count }, (_, i) => ({ item: `${prefix}${i}`, amount: 1, group: 'g' })) })
        .expect(200);
    const closeDay = async () => {
      clock.advanceMs(DAY_MS);
      await readArchived(http, 'cal', '/archives?window=day', ARCHIVED); // drained a few fields a call
    };
    await send('x', ARCHIVED);
    await closeDay(); // its archive holds the items, which left the window: the archived map's
    const tag = await tagOf('cal');
    const archived = async () => (await node().hkeys(`${tag}grouparch`)).filter((item) => item.startsWith('x'));
    expect(await archived()).toHaveLength(ARCHIVED);
    let day = 0;
    const { most, rounds } = await mostCommands(
      async () => {
        await send(`y${day++}-`, 10); // the next day's archive drops the one before (keep 1)
        await closeDay();
      },
      async () => (await archived()).length === 0,
    );
    expect(most).toBeLessThanOrEqual(WRITE_CALL_COMMANDS);
    expect(await archived()).toEqual([]);
    expect(rounds).toBeGreaterThan(1);
    const held = await node().zrange(`${tag}day:archheld`, 0, -1);
    expect(held.filter((item) => item.startsWith('x'))).toEqual([]);
  }, 120_000);
});
