import type { Redis } from 'ioredis';
import { ADMIN } from '../../harness/app';
import { useTestApp } from '../support/app-world';
import { loggedCalls, logEveryCommand, stopLoggingEveryCommand } from '../support/slowlog';

/**
 * A sharded board's page (issue #45: a call per shard and round, 64 on the largest boards) reads its
 * rows' previous ranks once, board-wide (HistoryStore.previousRanks): no shard's read_top reads its
 * own previous listing, whose ranks the service would drop. Counted without a clock, from the commands
 * each read_top script ran (SLOWLOG at 0 µs).
 */
const T0 = 1_700_006_400_000;
const MINUTE_MS = 60_000;
const ITEMS = 120;
const SHARDS = 4;

describe('the commands of a sharded board page (single)', () => {
  // A server of its own: the test reads every command it ran from its SLOWLOG.
  const world = useTestApp('single', T0, true);
  const http = () => world.http();
  const node = () => world.redis.client as Redis;

  it("reads no shard's previous listing, and answers the board-wide previous ranks", async () => {
    const windows = [{ name: 'w', period: '1h', interval: '1m', snapshots: { keep: 2, top: 1000 } }];
    await http().put('/admin/boards/sh').set(ADMIN).send({ windows, shards: SHARDS }).expect(201);
    const items = Array.from({ length: ITEMS }, (_, i) => ({ item: `i${i}`, amount: ITEMS - i }));
    await http().post('/boards/sh/increments').send({ items }).expect(200);
    world.clock.advanceMs(MINUTE_MS);
    // The first read past the boundary keeps each shard's listing: the rows' previous ranks.
    await http().get('/boards/sh/top?window=w&limit=1').expect(200);

    await logEveryCommand(node());
    const page = await http().get('/boards/sh/top?window=w&limit=50').expect(200);
    const calls = (await loggedCalls(node())).filter(({ call }) => /_read_top$/.test(String(call[1])));
    await stopLoggingEveryCommand(node());

    const rows = page.body.items as Array<{ item: string; rank: number; previousRank: number }>;
    expect(rows.map((row) => [row.item, row.rank, row.previousRank])).toEqual(
      items.slice(0, 50).map((row, n) => [row.item, n + 1, n + 1]),
    );
    expect(calls.length).toBeGreaterThanOrEqual(SHARDS);
    const previousListings = calls.flatMap(({ commands }) => commands.filter((args) => /:prev$/.test(args[1] ?? '')));
    expect(previousListings).toEqual([]);
  });
});
