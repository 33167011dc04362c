import { composeRanking, RankingGraph } from '../../../harness/compose-ranking';
import { FakeClock } from '../../../harness/clock';
import { startTestRedis, TestRedis, TOPOLOGIES } from '../../../harness/redis';
import { validateConfig } from '../../../src/common/config';
import { StandingService } from '../../../src/ranking/standing/standing.service';
import { RedisFunctions } from '../../../src/redis/redis-functions';
import { RedisService } from '../../../src/redis/redis.service';
import { RedisSettings } from '../../../src/redis/redis.settings';

/**
 * Packed closed slots of a `tail` board (tail_pack_lib.lua): once pruned, a closed slot's kept fields
 * leave its hash for a list of packed records; a late event lands in the hash again; a span read sums
 * both; when the slot expires both leave the results exactly; deleting the board leaves none of the
 * option's keys.
 */
const T0 = 1_700_002_800_000;
const MINUTE_MS = 60_000;
const KEPT = 80; // items counting 2 in the first minute, packed in parts of up to 32 records
/** Budget units a pruned field weighs when it is dropped (tail_lib's DROP_UNITS), 1 when only looked at. */
const DROP_UNITS = 3;

describe.each(TOPOLOGIES)('tail: packed closed slots (real Redis, %s)', (topology) => {
  let redis: TestRedis;
  let clock: FakeClock;
  let service: RedisService;
  let graph: RankingGraph;
  const keysOf = (name: string, kind: string) => redis.dataKeys(`board:${name}}*:${kind}*`);

  beforeAll(async () => {
    redis = await startTestRedis(topology);
    clock = new FakeClock(T0);
    const config = validateConfig({ ...redis.env, EXPIRE_CHUNK: '20', REDIS_COMMAND_TIMEOUT_MS: '5000' });
    service = new RedisService(RedisSettings.from(config), clock);
    await service.waitUntilReady(10_000);
    graph = await composeRanking(service, new RedisFunctions(service), config, clock);
  });
  afterAll(async () => {
    await graph.boards.onApplicationShutdown();
    await service.onApplicationShutdown();
    await redis.stop();
  });

  /** Reads (each prunes and packs within its budget) until `done` holds. */
  async function readUntil(name: string, done: () => Promise<boolean>): Promise<void> {
    for (let reads = 0; !(await done()); reads++) {
      if (reads > 100) throw new Error('pruning and packing never finished');
      await graph.module.get(StandingService).tailTop({ name, window: 'w', limit: 5 });
    }
  }

  async function scores(name: string): Promise<Map<string, number>> {
    const page = await graph.ranking.top(name, 'w', 0, 1000);
    return new Map(page.items.map((row) => [row.item, row.score]));
  }

  it('packs a pruned slot, counts a late event into it, and drains both when it expires', async () => {
    clock.setMs(T0);
    const name = 'pk';
    await graph.ranking.putBoard({
      name,
      windows: [{ name: 'w', period: '3m', interval: '1m' }],
      tail: { exact: 1, below: 2 },
    });
    const kept = Array.from({ length: KEPT }, (_, i) => ({ item: `k${i}`, amount: 2 }));
    const once = Array.from({ length: 30 }, (_, i) => ({ item: `o${i}`, amount: 1 }));
    await graph.ranking.incrementBatch(name, [...kept, ...once]);
    clock.advanceMs(MINUTE_MS);
    await graph.ranking.incrementBatch(name, [{ item: 'now', amount: 1 }]);
    await readUntil(name, async () => (await keysOf(name, 'slot:')).length === 1);
    const [packed] = await keysOf(name, 'tailpk:');
    expect(await packedRecords(packed)).toBe(KEPT);
    const held = await scores(name);
    expect(held.size).toBe(KEPT + 1);
    for (const { item } of kept) expect(held.get(item)).toBe(2);

    // A late event of the packed minute: the slot hash again, beside the packed records.
    await graph.ranking.incrementBatch(name, [{ item: 'k0', amount: 5, at: T0 / 1000 + 1 }]);
    expect((await scores(name)).get('k0')).toBe(7);
    expect((await keysOf(name, 'slot:')).length).toBe(2);
    // A span over both minutes sums the packed records with the slot hashes.
    const span = await graph.ranking.top(name, 'w', 0, 1000, { span: '120s' });
    expect(span.items).toHaveLength(KEPT + 1);
    const spanScores = new Map(span.items.map((row) => [row.item, row.score]));
    expect([spanScores.get('k0'), spanScores.get('k1'), spanScores.get('now')]).toEqual([7, 2, 1]);

    clock.advanceMs(2 * MINUTE_MS); // the first minute leaves the window (the second is packed meanwhile)
    const first = T0 / 1000;
    await readUntil(name, async () => (await keysOf(name, `tailpk:${first}`)).length === 0);
    await readUntil(name, async () => (await scores(name)).size === 1);
    expect([...(await scores(name))]).toEqual([['now', 1]]);
    expect(await keysOf(name, `slot:${first}`)).toEqual([]);
  });

  /** The records a packed list holds: per record a 2-byte id length, the id, a 1-byte count length, the count. */
  async function packedRecords(key: string): Promise<number> {
    let records = 0;
    for (const part of await redis.client.lrangeBuffer(key, 0, -1)) {
      for (let at = 0; at < part.length; records++) {
        const length = part.readUInt16BE(at);
        at += 3 + length + part[at + 2 + length];
      }
    }
    return records;
  }

  it('a call drains an expired packed slot within its budget exactly (EXPIRE_CHUNK records), parts split', async () => {
    clock.setMs(T0);
    const name = 'pkbudget';
    await graph.ranking.putBoard({
      name,
      windows: [{ name: 'w', period: '3m', interval: '1m' }],
      tail: { exact: 1, below: 2 },
    });
    await graph.ranking.incrementBatch(
      name,
      Array.from({ length: KEPT }, (_, i) => ({ item: `k${i}`, amount: 2 })),
    );
    clock.advanceMs(MINUTE_MS);
    await graph.ranking.incrementBatch(name, [{ item: 'now', amount: 1 }]);
    await readUntil(name, async () => (await keysOf(name, 'slot:')).length === 1);
    const [packed] = await keysOf(name, 'tailpk:');
    expect(await packedRecords(packed)).toBe(KEPT);

    clock.advanceMs(2 * MINUTE_MS);
    // Each write drains EXPIRE_CHUNK (20) records, never a whole part of 32 past it (no read between:
    // a read drains too).
    for (let left = KEPT - 20; left > 0; left -= 20) {
      await graph.ranking.incrementBatch(name, [{ item: 'now', amount: 1 }]);
      expect(await packedRecords(packed)).toBe(left);
    }
    await graph.ranking.incrementBatch(name, [{ item: 'now', amount: 1 }]);
    expect(await redis.client.exists(packed)).toBe(0);
    await readUntil(name, async () => (await scores(name)).size === 1);
    expect([...(await scores(name))]).toEqual([['now', 1 + KEPT / 20]]);
  });

  it('a call prunes a closed slot within its budget (HSCAN steps of what the budget has left, a dropped field 3 units)', async () => {
    clock.setMs(T0);
    const name = 'prunebudget';
    await graph.ranking.putBoard({
      name,
      windows: [{ name: 'w', period: '3m', interval: '1m' }],
      tail: { exact: 1, below: 2 },
    });
    // A hashtable slot (past any listpack size): 600 items seen once, each pruned once looked at.
    await graph.ranking.incrementBatch(
      name,
      Array.from({ length: 600 }, (_, i) => ({ item: `o${i}`, amount: 1 })),
    );
    clock.advanceMs(MINUTE_MS);
    const slot = `slot:${T0 / 1000}`;
    const [slotKey] = await keysOf(name, slot);
    // Every field looked at is dropped (about 12 commands each: HDEL, 4 SETBITs, ZINCRBY, ZREM, ...), so a
    // budget of 20 drops 7 a call (20 before, ~240 commands); a hashtable's HSCAN answers whole buckets: a
    // few fields past the COUNT asked at most.
    for (let calls = 1; calls <= 3; calls++) {
      await graph.ranking.incrementBatch(name, [{ item: 'now', amount: 1 }]);
      const pruned = 600 - (await redis.client.hlen(slotKey));
      expect(pruned).toBeGreaterThan(0);
      expect(pruned).toBeLessThanOrEqual(calls * Math.ceil(20 / DROP_UNITS) + 4);
    }
  });

  it('deleting a tail board drops its packed slots, filters and row cache with the rest', async () => {
    clock.setMs(T0);
    const name = 'pkdrop';
    await graph.ranking.putBoard({
      name,
      windows: [{ name: 'w', period: '10m', interval: '1m' }],
      tail: { exact: 1, below: 3 },
    });
    for (let minute = 0; minute < 5; minute++) {
      const entries = Array.from({ length: 40 }, (_, i) => ({ item: `m${minute}i${i}`, amount: 1 + (i % 4) }));
      await graph.ranking.incrementBatch(name, entries);
      clock.advanceMs(MINUTE_MS);
    }
    await readUntil(name, async () => (await keysOf(name, 'tailpk:')).length === 5);
    expect((await keysOf(name, 'tailbf:')).length).toBe(5);
    expect((await keysOf(name, 'tailrows')).length).toBe(1);
    await graph.ranking.deleteBoard(name);
    await graph.boards.drops.settled();
    expect(await redis.dataKeys(`board:${name}}*`)).toEqual([]);
  });
});
