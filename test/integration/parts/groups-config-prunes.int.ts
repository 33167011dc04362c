import type { Redis } from 'ioredis';
import { ADMIN } from '../../../harness/app';
import { TOPOLOGIES } from '../../../harness/redis';
import { WRITE_CALL_COMMANDS } from '../../../harness/worst-case/harness';
import { useTestApp } from '../../support/app-world';
import {
  loggedCalls,
  logEveryCommand,
  mostScanned,
  stopLoggingEveryCommand,
  type LoggedCall,
} from '../../support/slowlog';
import { shardTag } from '../../support/boards';
import { GROUPED_RESET_WINDOWS, GROUPED_WINDOWS, storeArchived, storeGrouped } from '../../support/grouped-seed';

/**
 * A config write of a `groups: true` board of many items runs few commands (issue #45): before, every
 * write that changed the config read the whole groups map and checked each item against the windows
 * (40 355 commands in one call at 20 000 items), and a reset dropping a window checked each entry of
 * both maps one by one (over 99 000 commands in one call here). Now a write dropping no window reads
 * neither map, and a reset only marks both maps: prune steps the PUT drives walk them, a few commands
 * a step (test/integration/parts/reset-prune-steps.int.ts). The first items are written by the app, the rest stored as it stores them (past one client's
 * new-items quota); the entries only the dropped window held, and the archived ones, likewise. Counted
 * without a clock, from the commands the FCALL's script ran (SLOWLOG at 0 µs).
 */
const T0 = Date.UTC(2026, 2, 2, 12);
/** Items some kept window holds: the first WRITTEN written through the app. */
const HELD = 20_000;
const WRITTEN = 100;
/** Items only the window a reset drops holds: half of them still in a kept snapshot (histheld). */
const STALE = 10_000;
/** Entries of the archived map no listing holds any more. */
const ARCHIVED = 10_000;
/** Entries of the maps one prune step walks at most. */
const STEP_ENTRIES = 100;

describe('a config write of a groups board of many items runs few commands (single)', () => {
  // A server of its own: the test reads every command it ran from its SLOWLOG.
  const world = useTestApp('single', T0, true);
  const http = () => world.http();
  const node = () => world.redis.client as Redis;
  let tag = '';

  beforeAll(async () => {
    await http().put('/admin/boards/big').set(ADMIN).send({ windows: GROUPED_WINDOWS, groups: true }).expect(201);
    const items = Array.from({ length: WRITTEN }, (_, i) => ({ item: `x${i}`, amount: 1, group: `g${i % 10}` }));
    await http().post('/boards/big/increments').send({ items }).expect(200);
    tag = await shardTag(world.redis, 'big');
    // The rest as those writes stored theirs: past the new-items quota of one client's test.
    const rest = { count: HELD - WRITTEN, first: WRITTEN, item: (i: number) => `x${i}`, windows: ['m', 'd'] };
    await storeGrouped(node().pipeline(), tag, { ...rest, group: (i) => `g${i % 10}` }).exec();
  }, 120_000);

  /** The FCALLs the last mostCommands logged. */
  let logged: LoggedCall[] = [];

  /** Runs `write` logging every command: the most commands any FCALL's script ran. */
  async function mostCommands(write: () => Promise<void>): Promise<number> {
    await logEveryCommand(node());
    await write();
    logged = (await loggedCalls(node())).filter(({ call }) => /^fcall/i.test(call[0]));
    await stopLoggingEveryCommand(node());
    return Math.max(...logged.map(({ commands }) => commands.length));
  }

  it('a write dropping no window reads no entry of the map', async () => {
    const views = [{ name: 'fading', mode: 'decay', window: 'm', halfLife: '30m' }];
    const most = await mostCommands(async () => {
      await http()
        .put('/admin/boards/big')
        .set(ADMIN)
        .send({ windows: GROUPED_WINDOWS, views, groups: true })
        .expect(200);
    });
    expect(most).toBeLessThanOrEqual(WRITE_CALL_COMMANDS);
    expect(await node().hlen(`${tag}groups`)).toBe(HELD);
  }, 120_000);

  it('a reset dropping a window prunes both maps in bounded calls, to the last stale entry', async () => {
    const keptSec = Math.floor(T0 / 1000) + 86_400;
    const stale = { count: STALE, item: (i: number) => `y${i}`, group: () => 'h', windows: ['d'] };
    const batch = storeGrouped(node().pipeline(), tag, stale);
    for (let i = 0; i < STALE; i += 2) batch.zadd(`${tag}histheld`, keptSec, `y${i}`);
    await storeArchived(batch, tag, ARCHIVED).exec();
    const most = await mostCommands(async () => {
      await http()
        .put('/admin/boards/big?reset=true')
        .set(ADMIN)
        .send({ windows: GROUPED_RESET_WINDOWS, groups: true })
        .expect(200);
    });
    expect(most).toBeLessThanOrEqual(WRITE_CALL_COMMANDS);
    // A step's entries are touched across maps of the board's size: 200 a step ran 8.7 ms at the
    // worst-case harness's full size (100 000 items), now 100 (PRUNE_ENTRIES_PER_CALL).
    expect(Math.max(...logged.map((call) => mostScanned(call, /:(groups|grouparch)$/)))).toBe(STEP_ENTRIES);
    const live = await node().hkeys(`${tag}groups`);
    expect(live).toHaveLength(HELD);
    expect(live.filter((item) => !item.startsWith('x'))).toEqual([]);
    expect(await node().zcard(`${tag}bygroup`)).toBe(HELD);
    const archived = await node().hgetall(`${tag}grouparch`);
    expect(Object.keys(archived).sort()).toEqual(Array.from({ length: STALE / 2 }, (_, i) => `y${2 * i}`).sort());
    expect(new Set(Object.values(archived))).toEqual(new Set(['h']));
    expect(await node().zcard(`${tag}bygrouparch`)).toBe(STALE / 2);
  }, 120_000);
});

/**
 * An item leaving its last window while no listing (archive, snapshot) holds a row of it leaves the
 * live map and its reverse and never enters the archived map: that map is bounded by the kept
 * listings' rows, and a group state counts its entries against MODERATED_GROUP_ARCHIVED_ITEMS_PER_SHARD.
 * A reset's prune walks the archived map after the live one, which would hide an item wrongly kept
 * there: a write taking an item's sum to 0 leaves its last window with no walk after it.
 */
describe.each(TOPOLOGIES)(
  'an item leaving its last window, no listing holding it, leaves every groups map (%s)',
  (topology) => {
    const world = useTestApp(topology, T0);
    const http = () => world.http();

    it('keeps the item still held in the live map and nothing in the archived one', async () => {
      const windows = [{ name: 'w', period: '1h', interval: '1h' }];
      await http().put('/admin/boards/gone').set(ADMIN).send({ windows, groups: true }).expect(201);
      const written = [
        { item: 'a', amount: 2, group: 'g' },
        { item: 'b', amount: 1, group: 'g' },
      ];
      await http().post('/boards/gone/increments').send({ items: written }).expect(200);
      await http()
        .post('/boards/gone/increments')
        .send({ items: [{ item: 'a', amount: -2 }] })
        .expect(200);
      const tag = await shardTag(world.redis, 'gone');
      const client = world.redis.client;
      expect(await client.hgetall(`${tag}groups`)).toEqual({ b: 'g' });
      expect(await client.zrange(`${tag}bygroup`, 0, -1)).toEqual([`g\x1fb`]);
      expect(await client.hlen(`${tag}grouparch`)).toBe(0);
      expect(await client.zcard(`${tag}bygrouparch`)).toBe(0);
    });
  },
);
