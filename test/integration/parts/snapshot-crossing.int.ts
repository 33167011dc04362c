import type { Cluster, Redis } from 'ioredis';
import { FakeClock } from '../../../harness/clock';
import { startRankingService } from '../../../harness/ranking';
import { startTestRedis, TestRedis, TOPOLOGIES } from '../../../harness/redis';
import { WindowDrainingError } from '../../../src/common/errors';
import { RankingKeys } from '../../../src/ranking/core/ranking.keys';
import type { RankingService } from '../../../src/ranking/ranking.service';
import type { RedisService } from '../../../src/redis/redis.service';

/**
 * Snapshot boundaries are crossed a listing at a time (issue #45): a write after a boundary that must
 * store more listings than one call may (about 1 000 rows a call) is sent again until none is left, and
 * applies once, after all of them (in a call of its own when it names segments); the scheduled expiry goes on the same way. Every stored listing is
 * the window's as it stood at the boundary.
 */
const T0 = 1_699_999_980_000; // a minute boundary
const MINUTE_MS = 60_000;
const ITEMS = 600;
const SEGMENTS = ['s0', 's1', 's2'];
const WINDOWS = ['w1', 'w2'].map((name, i) => ({
  name,
  period: `${i + 1}h`,
  interval: '1m',
  snapshots: { keep: 3, top: 1000 },
}));
/** Listings of 600 rows the first write after a boundary meets: the board's two windows and each segment's. */
const LISTINGS = WINDOWS.length * (1 + SEGMENTS.length);
const PASS = { leaseMs: 30_000, claimBatch: 100 };

describe.each(TOPOLOGIES)('snapshot boundaries crossed in bounded calls (%s)', (topology) => {
  const clock = new FakeClock(T0);
  let redis: TestRedis;
  let service: { ranking: RankingService; redisService: RedisService };
  /** An instance whose requests stop one call short of the listings a write meets (CROSSING_CALLS_PER_REQUEST). */
  let capped: { ranking: RankingService; redisService: RedisService };

  beforeAll(async () => {
    // The worker's servers: the test counts the function calls every master ran, as differences, and no
    // other file runs on them meanwhile (harness/worker-servers.ts).
    redis = await startTestRedis(topology);
    service = await startRankingService(redis, clock);
    capped = await startRankingService(redis, clock, { CROSSING_CALLS_PER_REQUEST: String(LISTINGS - 1) });
  });
  afterAll(async () => {
    await Promise.all([service, capped].map((each) => each.redisService.onApplicationShutdown()));
    await redis.stop();
  });

  /** A board of WINDOWS where item i<n> scores ITEMS - n in the board and each segment, then a minute later. */
  async function seed(board: string): Promise<void> {
    await service.ranking.putBoard({ name: board, windows: WINDOWS, segmentsMax: 10 });
    // Batches of 25: within WRITE_COST_PER_CALL with the board's windows and segments (65 units an entry).
    for (let first = 0; first < ITEMS; first += 25) {
      const entries = Array.from({ length: 25 }, (_, k) => ({
        item: `i${first + k}`,
        amount: ITEMS - first - k,
        segments: SEGMENTS,
      }));
      await service.ranking.incrementBatch(board, entries);
    }
    clock.advanceMs(MINUTE_MS);
  }

  /** The +1 000 write on i599 in every segment, through `via`. */
  function write(via: { ranking: RankingService }, board: string) {
    return via.ranking.increment(board, 'i599', 1000, undefined, undefined, undefined, undefined, SEGMENTS);
  }

  /** FCALLs every master ran so far. */
  async function fcalls(): Promise<number> {
    const client = redis.client;
    const nodes = topology === 'cluster' ? (client as Cluster).nodes('master') : [client as Redis];
    let calls = 0;
    for (const node of nodes)
      calls += Number(/cmdstat_fcall:calls=(\d+)/.exec(await node.info('commandstats'))?.[1] ?? 0);
    return calls;
  }

  /** Each segment's listing (and the board's) of a window now: item i<n> scores ITEMS - n, plus `extra`. */
  function expected(extra: Record<string, number>) {
    const scores = Array.from({ length: ITEMS }, (_, n) => [`i${n}`, ITEMS - n + (extra[`i${n}`] ?? 0)] as const);
    return [...scores].sort(([a, x], [b, y]) => y - x || (a < b ? 1 : -1)).map(([item, score]) => ({ item, score }));
  }

  async function stored(segment: string | undefined, window: string, atSec: number, board = 'x') {
    const found = await service.ranking.history(board, window, atSec, segment);
    return { at: found.at, rows: found.items.map(({ item, score }) => ({ item, score })) };
  }

  it('takes a listing a call, applies the write once after all of them, and stores each exactly', async () => {
    await seed('x');
    const before = await fcalls();
    await write(service, 'x');
    // One call per listing: each in pages of 500 and 100 rows (snapshot_rows_lib's PAGED), a call holding
    // a listing's last page and the next one's first (150 + 550 of a call's 1 050 rows), the last call the
    // last page and the write (a page of 100 rows is no listing of many rows: leave_apart).
    expect((await fcalls()) - before).toBe(LISTINGS + 1);
    const boundarySec = (T0 + MINUTE_MS) / 1000;
    for (const segment of [undefined, ...SEGMENTS])
      for (const { name } of WINDOWS)
        expect([segment, name, await stored(segment, name, boundarySec)]).toEqual([
          segment,
          name,
          { at: boundarySec, rows: expected({}) },
        ]);
    // Applied once: i599 holds 1 + 1 000 in the board and in each segment.
    const item = await service.ranking.item('x', 'w1', 'i599', { segment: 's2' });
    expect(item.score).toBe(1001);

    clock.advanceMs(MINUTE_MS);
    for (let pass = 0; pass < 50 && (await service.ranking.expireDue(PASS)).visited > 0; pass++);
    for (const segment of [undefined, ...SEGMENTS])
      expect([segment, await stored(segment, 'w2', boundarySec + 60)]).toEqual([
        segment,
        { at: boundarySec + 60, rows: expected({ i599: 1000 }) },
      ]);
  }, 120_000);

  it('stops at CROSSING_CALLS_PER_REQUEST with a 503 WINDOW_DRAINING and nothing applied; the next request goes on', async () => {
    await seed('capped');
    const boundarySec = clock.nowMs() / 1000;
    const before = await fcalls();
    await expect(write(capped, 'capped')).rejects.toThrow(WindowDrainingError);
    expect((await fcalls()) - before).toBe(LISTINGS - 1);
    // Nothing applied: raw keys (no script, so no crossing) still hold i599's 1 in the board and each segment.
    const board = new RankingKeys(redis.prefix).board('capped');
    for (const keys of [board, ...SEGMENTS.map((segment) => board.inSegment(segment))])
      for (const { name } of WINDOWS)
        expect([keys.top(name), await redis.client.zscore(keys.top(name), 'i599')]).toEqual([keys.top(name), '1']);
    // The listings stored stay stored: the next request crosses the one left, then applies, once.
    const again = await fcalls();
    await write(capped, 'capped');
    expect((await fcalls()) - again).toBe(2);
    for (const segment of [undefined, ...SEGMENTS])
      for (const { name } of WINDOWS)
        expect([segment, name, await stored(segment, name, boundarySec, 'capped')]).toEqual([
          segment,
          name,
          { at: boundarySec, rows: expected({}) },
        ]);
    expect((await service.ranking.item('capped', 'w2', 'i599', { segment: 's1' })).score).toBe(1001);
  }, 120_000);
});
