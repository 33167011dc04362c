import type { Redis } from 'ioredis';
import { ADMIN } from '../../harness/app';
import { useTestApp } from '../support/app-world';
import { loggedCalls, logEveryCommand, stopLoggingEveryCommand } from '../support/slowlog';

/**
 * A moderated page from the head is one read call whose rows Redis sends are bounded (issue #45: the
 * worst-case row of a 1 000-row page at the moderation maxima, ~21 M instructions): the page, the hidden
 * rows among it, at most HEAD_EXTRA_ROWS (order_lib) more, and the previous listing once for the
 * previous ranks. Counted without a clock, from the commands the read's script ran (SLOWLOG at 0 µs):
 * the rows each range command asked for, and the commands.
 */
const T0 = 1_700_006_400_000;
const MINUTE_MS = 60_000;
const ITEMS = 900;
const HIDDEN = 200;
const LIMIT = 500;
/** order_lib's HEAD_EXTRA_ROWS: rows a page from the top reads past those still wanted. */
const HEAD_EXTRA_ROWS = 128;
/** The version check, expiry, snapshot check and moderation states a read call runs besides its ranges. */
const FIXED_COMMANDS = 20;

describe('the rows a moderated page from the head reads (single)', () => {
  // A server of its own: the test reads every command it ran from its SLOWLOG.
  const world = useTestApp('single', T0, true);
  const http = () => world.http();
  const node = () => world.redis.client as Redis;
  const clock = world.clock;

  /** The range commands' rows and the commands of each read_top script, since the last reset. */
  async function readCalls(): Promise<Array<{ rows: number; commands: number }>> {
    const rowsOf = (args: string[]) =>
      /^Z(REV)?RANGE$/i.test(args[0]) ? (Number(args[3]) < 0 ? ITEMS : Number(args[3]) - Number(args[2]) + 1) : 0;
    return (await loggedCalls(node()))
      .filter(({ call }) => /_read_top$/.test(String(call[1])))
      .map(({ commands }) => ({
        rows: commands.reduce((sum, args) => sum + rowsOf(args), 0),
        commands: commands.length,
      }));
  }

  it('reads the page, its hidden rows, HEAD_EXTRA_ROWS more and the previous listing once, and answers the rows shown', async () => {
    const windows = [{ name: 'w', period: '1h', interval: '1m', snapshots: { keep: 2, top: 1000 } }];
    await http().put('/admin/boards/mod').set(ADMIN).send({ windows, ties: 'first' }).expect(201);
    const items = Array.from({ length: ITEMS }, (_, i) => ({ item: `i${i}`, amount: ITEMS - i }));
    for (let first = 0; first < ITEMS; first += 300)
      await http()
        .post('/boards/mod/increments')
        .send({ items: items.slice(first, first + 300) })
        .expect(200);
    clock.advanceMs(MINUTE_MS);
    // The first read past the boundary keeps the listing: the rows' previous ranks.
    await http().get('/boards/mod/top?window=w&limit=1').expect(200);
    // The head's items hidden, every other one: a page from the top steps over them.
    for (let i = 0; i < 2 * HIDDEN; i += 2)
      await http().put(`/admin/boards/mod/moderation/items/i${i}`).set(ADMIN).send({ state: 'hidden' }).expect(204);

    await logEveryCommand(node());
    const page = await http().get(`/boards/mod/top?window=w&limit=${LIMIT}`).expect(200);
    const calls = await readCalls();
    await stopLoggingEveryCommand(node());

    const shown = items.filter((_, i) => i >= 2 * HIDDEN || i % 2 === 1).slice(0, LIMIT);
    const rows = page.body.items as Array<{ item: string; score: number; rank: number; previousRank: number }>;
    expect(rows.map((row) => row.item)).toEqual(shown.map((row) => row.item));
    expect(rows.map((row) => row.previousRank)).toEqual(shown.map((_, n) => n + 1));
    expect(calls).toHaveLength(1);
    expect(calls[0].rows).toBeLessThanOrEqual(LIMIT + HIDDEN + HEAD_EXTRA_ROWS + ITEMS);
    expect(calls[0].commands).toBeLessThanOrEqual(FIXED_COMMANDS);
  });
});
