import type { Redis } from 'ioredis';
import { ADMIN } from '../../../harness/app';
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

/**
 * A reset dropping a window of a board whose items all have data prunes the data hash in batched
 * commands (issue #45): the windows_dropped hook checked each item with data against every window one
 * by one (about 3 commands an item, over 70 000 in one call here); now the reset marks the data and
 * prune steps walk it, an HSCAN, a ZMSCORE a window and an HDEL a step. Every item no window holds loses its data, every item some window holds keeps it. The
 * first items and their data are written by the app, the rest stored as it stores them (past one
 * client's new-items quota). Counted without a clock, from the commands the FCALL's script ran (SLOWLOG
 * at 0 µs).
 */
const T0 = Date.UTC(2026, 2, 2, 12);
/** Items the kept window holds, each with data: the first WRITTEN written through the app. */
const HELD = 20_000;
const WRITTEN = 100;
/** Items with data only the window the reset drops holds. */
const STALE = 10_000;
/** Fields of the data hash one prune step walks at most. */
const DATA_STEP_FIELDS = 50;
const WINDOWS = [
  { name: 'm', period: '1h', interval: '1m' },
  { name: 'd', period: '1d', interval: '1h' },
];

describe('a reset of a board whose items have data prunes the data in bounded calls (single)', () => {
  // A server of its own: the test reads every command it ran from its SLOWLOG.
  const world = useTestApp('single', T0, true);
  const http = () => world.http();
  const node = () => world.redis.client as Redis;
  let tag = '';

  beforeAll(async () => {
    await http().put('/admin/boards/big').set(ADMIN).send({ windows: WINDOWS }).expect(201);
    const items = Array.from({ length: WRITTEN }, (_, i) => ({ item: `x${i}`, amount: 1 }));
    await http().post('/boards/big/increments').send({ items }).expect(200);
    await http().put('/boards/big/items/x0/data').send({ n: 0 }).expect(204);
    tag = await shardTag(world.redis, 'big');
    // The rest as those writes stored theirs: past the new-items quota of one client's test.
    const batch = node().pipeline();
    for (let i = 1; i < HELD; i++) {
      if (i >= WRITTEN) batch.zadd(`${tag}m:top`, 1, `x${i}`).zadd(`${tag}d:top`, 1, `x${i}`);
      batch.hset(`${tag}data`, `x${i}`, JSON.stringify({ n: i }));
    }
    for (let i = 0; i < STALE; i++) batch.zadd(`${tag}d:top`, 1, `y${i}`).hset(`${tag}data`, `y${i}`, '{"n":-1}');
    await batch.exec();
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

  it('drops the data of every item only the dropped window held and keeps every other, within a write call', async () => {
    expect(await node().hlen(`${tag}data`)).toBe(HELD + STALE);
    const windows = [WINDOWS[0], { ...WINDOWS[1], period: '2d' }];
    const most = await mostCommands(async () => {
      await http().put('/admin/boards/big?reset=true').set(ADMIN).send({ windows }).expect(200);
    });
    expect(most).toBeLessThanOrEqual(WRITE_CALL_COMMANDS);
    // Each value is read whole (up to 1 KB): 100 a step ran 5.5 ms at the worst-case harness's full size
    // (100 000 items with 1 KB each), now 50 (item_data_lib's PRUNE_SCAN).
    expect(Math.max(...logged.map((call) => mostScanned(call, /:data$/)))).toBe(DATA_STEP_FIELDS);
    const kept = await node().hkeys(`${tag}data`);
    expect(kept).toHaveLength(HELD);
    expect(kept.filter((item) => !item.startsWith('x'))).toEqual([]);
    expect(await node().hget(`${tag}data`, 'x0')).toBe('{"n":0}');
    expect(await node().hget(`${tag}data`, `x${HELD - 1}`)).toBe(JSON.stringify({ n: HELD - 1 }));
  }, 120_000);
});
