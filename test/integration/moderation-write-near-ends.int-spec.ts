import { ADMIN } from '../../harness/app';
import { TOPOLOGIES } from '../../harness/redis';
import { useSharedTestApps } from '../support/app-world';
import type { Redis } from 'ioredis';
import { commandCalls, loggedCalls, logEveryCommand, stopLoggingEveryCommand } from '../support/slowlog';

/**
 * A write near an end of its results counts the hidden items ahead of it from that end (issue #45: a
 * new item with a new actor on the board of every option at the moderation maxima, 8.9 ms a call, most
 * of it a ZINTERSTORE of the results and the hidden items in each of its 8 windows): a new item's small
 * first score reads the few rows behind it and the hidden items held (ZINTERCARD), a leading item's
 * write the few rows ahead; only a write with many rows on both sides intersects. Its previous rank
 * reads the rows ahead in the previous listing, not the hidden items' scores there (a ZMSCORE a
 * window). Each rank equals the read's, hidden items of better, equal and worse scores around it, on
 * competition ties and `ties: first`. The first write after a moderation change, wherever it lands, has each window
 * intersected into its index before it applies, a few windows a call (moderation_count_lib's INDEXES_PER_CALL), kept
 * for the next writes, which count in it without intersecting; only the hidden items' set is unlinked as it answers,
 * freed off Redis's main thread (no DEL). Counted, never timed.
 */
const T0 = 1_700_007_200_000;
const ITEMS = 200;
/** Every fifth item hidden: 40, more than moderation's floor for counting inside Redis (16). */
const HIDDEN_EVERY = 5;
const WINDOWS = [
  { name: 'h', period: '1h', interval: '1m', snapshots: { keep: 4, top: ITEMS } },
  { name: 'd', period: '1d', interval: '1h' },
  { name: 'w', period: '7d', interval: '1h' },
];
const NAMES = WINDOWS.map((window) => window.name);

/** One app per topology: each block names its boards apart. */
const appFor = useSharedTestApps(T0);

describe.each(TOPOLOGIES)('moderation: a write near an end of its results (%s)', (topology) => {
  const world = appFor(topology);
  const { clock, http } = world;
  let board = 0;

  const calls = (command: string) => commandCalls(world.redis.client, command);
  const tag = (name: string) => `{${world.redis.prefix}board:${name}}`;
  /** What `write` answered, and how many `command`s it ran. */
  async function counted(command: string, write: () => Promise<{ body: unknown }>) {
    const before = await calls(command);
    const answer = (await write()).body as { windows: Record<string, { rank: number; previousRank: number | null }> };
    return { answer, ran: (await calls(command)) - before };
  }
  const readRow = async (name: string, item: string, window: string) => {
    const top = await http().get(`/boards/${name}/top?window=${window}&limit=1000`).expect(200);
    const row = (top.body.items as Array<{ item: string; rank: number; previousRank: number | null }>).find(
      (one) => one.item === item,
    );
    return { rank: row?.rank, previousRank: row?.previousRank };
  };
  /** The write's rank and previous rank in every window, as a read of the listing answers them. */
  async function expectReadRanks(name: string, item: string, answer: Awaited<ReturnType<typeof counted>>['answer']) {
    for (const window of NAMES) {
      const { rank, previousRank } = answer.windows[window];
      expect({ item, window, rank, previousRank }).toEqual({ item, window, ...(await readRow(name, item, window)) });
    }
  }
  const increment = (name: string, item: string, amount: number) => () =>
    http().post(`/boards/${name}/items/${item}/increment`).send({ amount }).expect(200);

  /** A board of ITEMS items scored 2 each down from 2 × ITEMS in pairs, every fifth hidden, snapshot kept. */
  async function seeded(ties: object): Promise<string> {
    const name = `wnear-${topology}-${board++}`;
    await http()
      .put(`/admin/boards/${name}`)
      .set(ADMIN)
      .send({ windows: WINDOWS, ...ties })
      .expect(201);
    const items = Array.from({ length: ITEMS }, (_, n) => ({ item: `i${n}`, amount: 2 * ITEMS - 2 * (n >> 1) }));
    // Batches a `ties: first` step of 3 windows takes (WRITE_COST_PER_CALL).
    for (let from = 0; from < ITEMS; from += 50)
      await http()
        .post(`/boards/${name}/increments`)
        .send({ items: items.slice(from, from + 50) })
        .expect(200);
    for (let n = 0; n < ITEMS; n += HIDDEN_EVERY)
      await http().put(`/admin/boards/${name}/moderation/items/i${n}`).set(ADMIN).send({ state: 'hidden' }).expect(204);
    // The next minute's first write keeps the listing as the previous one.
    clock.advanceMs(60_000);
    return name;
  }

  it.each([
    ['competition ties', {}],
    ['ties first', { ties: 'first' }],
  ])('on %s: each window intersected once after the moderation changes, ranks as read', async (_, ties) => {
    const name = await seeded(ties);
    // A leading item (tied with the hidden i0), a new item's first score (tied with a hidden one near the
    // bottom, i195 at 206), a new item below every score: the rows ahead or behind are fewer than the hidden items.
    // The first write after the moderation changes builds each window's index before it applies (a few a call).
    for (const [item, amount, intersections] of [
      ['i1', 1, WINDOWS.length],
      ['new-tied', 206, 0],
      ['new-low', 1, 0],
    ] as const) {
      const { answer, ran } = await counted('zinterstore', increment(name, item, amount));
      expect({ item, ran }).toEqual({ item, ran: intersections });
      await expectReadRanks(name, item, answer);
    }
    // Mid-table: rows on both sides outnumber the hidden items.
    const dels = await calls('del');
    const { answer, ran } = await counted('zinterstore', increment(name, 'i101', 1));
    expect(ran).toBe(0);
    expect((await calls('del')) - dels).toBe(0);
    await expectReadRanks(name, 'i101', answer);
    expect(await world.redis.client.exists(`${tag(name)}:exasked`)).toBe(0);
    const indexes = NAMES.map((window) => `${tag(name)}:${window}:exheld`);
    expect(await world.redis.client.exists(...indexes)).toBe(NAMES.length);
    // The next mid-table write counts in the kept indexes.
    const next = await counted('zinterstore', increment(name, 'i121', 1));
    expect(next.ran).toBe(0);
    await expectReadRanks(name, 'i121', next.answer);
  });

  // Read from the one server's SLOWLOG.
  (topology === 'single' ? it : it.skip)(
    "intersects each window of a mid-table write into its index, unlinking only the hidden items' set as it answers",
    async () => {
      const name = await seeded({});
      const node = world.redis.client as Redis;
      await logEveryCommand(node);
      await increment(name, 'i101', 1)();
      // The write's calls: the first ones build indexes (a few each) and leave the rest, the last applies.
      const commands = (await loggedCalls(node))
        .filter(({ call }) => /_increment$/.test(String(call[1])))
        .flatMap((one) => one.commands);
      await stopLoggingEveryCommand(node);
      const named = (command: string) => commands.filter(([one]) => one.toLowerCase() === command);
      const stores = named('zinterstore').map(([, key]) => key);
      expect(stores).toEqual(NAMES.map((window) => `${tag(name)}:${window}:exheld`));
      expect(named('del')).toEqual([]);
      // The set of hidden items is stored afresh (UNLINK, SADD) in each call before its first intersection, and
      // unlinked as the last call answers. A window whose boundary the write crosses unlinks its previous
      // ranks too (snapshot_rows_lib's store_previous): not moderation's.
      const unlinked = named('unlink').filter(([, key]) => !String(key).endsWith(':prev'));
      expect(unlinked.map((args) => [...args.slice(1)])).toEqual(
        Array.from({ length: Math.ceil(WINDOWS.length / 2) + 1 }, () => [`${tag(name)}:exasked`]),
      );
    },
  );

  it("answers a leading item's previous rank from the rows ahead, no ZMSCORE of the hidden items", async () => {
    const name = await seeded({ ties: 'first' });
    const { answer, ran } = await counted('zmscore', increment(name, 'i3', 1));
    expect(ran).toBe(0);
    expect(answer.windows.h.previousRank).toBe(2);
    await expectReadRanks(name, 'i3', answer);
  });
});
