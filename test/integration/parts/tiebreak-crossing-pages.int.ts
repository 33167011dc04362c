import type { Cluster, Redis } from 'ioredis';
import { FakeClock } from '../../../harness/clock';
import { useOwnServerRanking, useRankingService } from '../../../harness/ranking';
import type { RankingService } from '../../../src/ranking/ranking.service';
import { argumentsOf, loggedCalls, logEveryCommand, stopLoggingEveryCommand } from '../../support/slowlog';

/**
 * A tiebreak board's snapshot listing of 1 000 rows is stored in pages of at most 500 rows, one a call
 * (issue #45: Lua writes each row's text and rank from the pair order, 11.2-11.7 M instructions in one
 * call): the pages go to keys no read reads and the last call renames them to the snapshot and the
 * previous listing. Counted without a clock: the ranks a call's ZADDs write (SLOWLOG at 0 µs). The
 * stored listing is exact: its text is the rows of the pair order at the boundary with their marks and
 * positions, the previous listing each row's rank on the pair (negated unless `order: asc`), and
 * history and previousRank read them; 1 200 items in 5 pairs of 240 put the page's end inside a pair.
 * A write meeting the boundary between the pages (a request of one call left the first) finds the old
 * listing still the one read, stores the last page, then applies.
 */
const T0 = 1_699_999_980_000; // a minute boundary
const MINUTE_MS = 60_000;
const ITEMS = 1200;
const TOP = 1000;
const PAGE_ROWS = 500;
/** A pair's score key and its mark, digits each (tiebreak_lib's TB.WIDTH). */
const KEY_WIDTH = 16;

const SHAPES = [
  { aggregate: 'max', order: 'desc', tiebreak: 'asc', ties: 'shared' },
  { aggregate: 'min', order: 'asc', tiebreak: 'desc', ties: 'first' },
] as const;
type Shape = (typeof SHAPES)[number];

/** A board of ITEMS items in 5 pairs keeping snapshots of TOP rows. */
async function seeded(ranking: RankingService, board: string, shape: Shape) {
  const { aggregate, order, tiebreak, ties } = shape;
  const windows = [{ name: 'w', period: '1h', interval: '1m', snapshots: { keep: 3, top: TOP } }];
  await ranking.putBoard({ name: board, windows, aggregate, order, ties, tiebreak: { order: tiebreak } });
  for (let first = 0; first < ITEMS; first += 100)
    await Promise.all(
      Array.from({ length: 100 }, (_, k) =>
        ranking.score(board, `i${first + k}`, (first + k) % 5, undefined, undefined, undefined, 1),
      ),
    );
}

/** The listing keys of the window `w` of the board whose config key is `cfg`. */
function keysOf(cfg: string) {
  const base = `${cfg.slice(0, -'cfg'.length)}w:`;
  return {
    tborder: `${base}tborder`,
    prev: `${base}prev`,
    snaps: `${base}snaps`,
    snap: (at: string) => `${base}snap:${at}`,
  };
}

type Keys = ReturnType<typeof keysOf>;

/** The snapshot text and previous listing the live listing `before` (and its pair order `members`) must give. */
function expected(before: Awaited<ReturnType<RankingService['top']>>, members: string[], shape: Shape) {
  const text = before.items
    .map(({ item, score }, i) => {
      const mark = shape.ties === 'first' ? members[i].slice(KEY_WIDTH) : members[i].slice(KEY_WIDTH, 2 * KEY_WIDTH);
      return `\x1e${item}\x1f${score}\x1f${mark}\x1f${i + 1}`;
    })
    .join('');
  const prev = Object.fromEntries(before.items.map(({ item, rank }) => [item, shape.order === 'asc' ? rank : -rank]));
  return { text, prev };
}

/** The window's stored listing: the newest snapshot's text and the previous listing, item -> rank. */
async function stored(client: Redis | Cluster, keys: Keys) {
  const [at] = await client.zrange(keys.snaps, -1, -1);
  const ranks = await client.zrange(keys.prev, 0, -1, 'WITHSCORES');
  const prev: Record<string, number> = {};
  for (let i = 0; i < ranks.length; i += 2) prev[ranks[i]] = Number(ranks[i + 1]);
  return { text: await client.get(keys.snap(at)), prev };
}

/** The service and Redis a board is crossed on, and the config key of a board. */
interface Crossed {
  ranking: RankingService;
  client: Redis | Cluster;
  cfgOf: (board: string) => Promise<string>;
}

/** The live listing, the crossing's read `cross()` and what the window stores and reads after it. */
async function crossing(on: Crossed, board: string, shape: Shape, cross: () => Promise<unknown>) {
  const { ranking, client } = on;
  await seeded(ranking, board, shape);
  const keys = keysOf(await on.cfgOf(board));
  const before = await ranking.top(board, 'w', 0, TOP);
  const members = await (shape.order === 'asc'
    ? client.zrange(keys.tborder, 0, TOP - 1)
    : client.zrevrange(keys.tborder, 0, TOP - 1));
  await cross();
  const after = await ranking.top(board, 'w', 0, TOP);
  const history = await ranking.history(board, 'w', undefined);
  return { before, after, history, want: expected(before, members, shape), got: await stored(client, keys) };
}

/** The listing stored exact: its text, previous listing, history and previous ranks. */
function expectExact(found: Awaited<ReturnType<typeof crossing>>) {
  const { before, after, history, want, got } = found;
  expect(before.items).toHaveLength(TOP);
  expect(got.text).toBe(want.text);
  expect(got.prev).toEqual(want.prev);
  const ranked = before.items.map(({ item, score, rank }) => [item, score, rank]);
  expect(history.items.map(({ item, score, rank }) => [item, score, rank])).toEqual(ranked);
  expect(after.items.map(({ item, previousRank }) => [item, previousRank])).toEqual(
    ranked.map(([item, , rank]) => [item, rank]),
  );
}

/** Ranks each call's ZADDs wrote to the window's previous listing or its staged pages. */
function ranksWrittenPerCall(calls: Awaited<ReturnType<typeof loggedCalls>>) {
  return calls
    .map(({ commands }) =>
      commands
        .filter((args) => args[0].toLowerCase() === 'zadd' && /:w:prev(next)?$/.test(args[1]))
        .reduce((ranks, args) => ranks + (argumentsOf(args) - 2) / 2, 0),
    )
    .filter((ranks) => ranks > 0);
}

describe.each(SHAPES)('a tiebreak crossing stored in pages (single, %o)', (shape) => {
  const clock = new FakeClock(T0);
  // A server of its own: the test reads every command it ran from its SLOWLOG.
  const own = useOwnServerRanking(clock);

  it('writes at most 500 rows a call, the listing exact', async () => {
    const { ranking, node } = own();
    const board = `tbp-${shape.order}`;
    const cfgOf = async (name: string) => (await node.keys(`*board:${name}}:cfg`))[0];
    let perCall: number[] = [];
    const found = await crossing({ ranking, client: node, cfgOf }, board, shape, async () => {
      clock.advanceMs(MINUTE_MS);
      await logEveryCommand(node);
      await ranking.top(board, 'w', 0, 1);
      perCall = ranksWrittenPerCall(await loggedCalls(node));
      await stopLoggingEveryCommand(node);
    });

    // Each page's ranks, the first with the member that makes the staged listing a skiplist at once.
    expect(perCall).toEqual([PAGE_ROWS + 1, TOP - PAGE_ROWS]);
    expectExact(found);
  });
});

describe.each(SHAPES)('a tiebreak crossing stored in pages (cluster, %o)', (shape) => {
  const setup = useRankingService('cluster');

  it('stores the listing exact', async () => {
    setup.clock.setMs(T0);
    const { ranking, redis } = setup;
    const cfgOf = async (name: string) => `{${redis.prefix}board:${name}}:cfg`;
    const cross = async () => setup.clock.advanceMs(MINUTE_MS);
    expectExact(await crossing({ ranking, client: redis.client, cfgOf }, `tbc-${shape.order}`, shape, cross));
  });
});

/** `read()` sent again while it fails (each attempt one call past a boundary), at most `attempts` times. */
async function settled<T>(read: () => Promise<T>, attempts = 4): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await read();
    } catch (error) {
      if (attempt >= attempts) throw error;
    }
  }
}

describe.each(['single', 'cluster'] as const)('a write between the pages of a tiebreak crossing (%s)', (topology) => {
  // One call a request: a read stores the first page and gives up, leaving the second page to the next call.
  const setup = useRankingService(topology, { CROSSING_CALLS_PER_REQUEST: '1' });
  const shape = SHAPES[0];

  it('leaves the old listing read until the last page, stores the new one whole, then applies', async () => {
    setup.clock.setMs(T0);
    const { ranking, redis } = setup;
    const board = 'tbw';
    const keys = keysOf(`{${redis.prefix}board:${board}}:cfg`);
    await seeded(ranking, board, shape);
    setup.clock.advanceMs(MINUTE_MS);
    await settled(() => ranking.top(board, 'w', 0, 1));
    const old = await stored(redis.client, keys);
    await ranking.score(board, 'i2', 3, undefined, undefined, undefined, 0);
    const before = await ranking.top(board, 'w', 0, TOP);
    const members = await redis.client.zrevrange(keys.tborder, 0, TOP - 1);
    setup.clock.advanceMs(MINUTE_MS);
    await expect(ranking.top(board, 'w', 0, 1)).rejects.toThrow();

    // The first page staged beside the listings read, which are still the old ones.
    expect(await redis.client.zcard(`${keys.prev}next`)).toBe(PAGE_ROWS + 1);
    expect(await stored(redis.client, keys)).toEqual(old);
    await ranking.score(board, 'i1', 1_000, undefined, undefined, undefined, 0);
    const want = expected(before, members, shape);
    expect(await stored(redis.client, keys)).toEqual(want);
    const history = await ranking.history(board, 'w', undefined);
    const ranked = before.items.map(({ item, score, rank }) => [item, score, rank]);
    expect(history.items.map(({ item, score, rank }) => [item, score, rank])).toEqual(ranked);
  });
});
