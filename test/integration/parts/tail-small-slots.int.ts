import { composeRanking, RankingGraph } from '../../../harness/compose-ranking';
import { FakeClock } from '../../../harness/clock';
import { startTestRedis, TestRedis, TOPOLOGIES } from '../../../harness/redis';
import { validateConfig } from '../../../src/common/config';
import { StandingStore } from '../../../src/ranking/standing/standing.store';
import { MAX_TAIL_SLOTS } from '../../../src/ranking/options/tail/tail.option';
import { RedisFunctions } from '../../../src/redis/redis-functions';
import { RedisService } from '../../../src/redis/redis.service';
import { RedisSettings } from '../../../src/redis/redis.settings';
import { rowsEachCall } from '../../support/tail-calls';

/**
 * A closed slot small enough to be a listpack (up to hash-max-listpack-entries fields: 512 here) answers
 * HSCAN whole whatever COUNT asks. Its pruning and packing still take what each call's budget
 * (EXPIRE_CHUNK) pays, the rest in the calls after: one call pruned a slot of 300 items seen once whole
 * (~290 drops, ~3 500 commands, 31-36 M Redis instructions; bench/tail-slots-instructions.ts).
 */
const T0 = 1_700_002_800_000;
const MINUTE_MS = 60_000;
const BUDGET = 20;
/** A tail read call's weight, a row weighing ROW_WEIGHT and one a pruned slot (tail_read_lib's). */
const [WEIGHT_PER_CALL, ROW_WEIGHT] = [3000, 30];
/** Budget units a pruned field weighs when it is dropped (tail_lib's DROP_UNITS), 1 when only looked at. */
const DROP_UNITS = 3;
const ITEMS = 300;

describe.each(TOPOLOGIES)('tail: small closed slots pruned and packed within budget (real Redis, %s)', (topology) => {
  let redis: TestRedis;
  let clock: FakeClock;
  let service: RedisService;
  let graph: RankingGraph;
  let seederService: RedisService;
  /** Prunes whole slots a call (its budget 5 000 fields). */
  let seeder: RankingGraph;
  const closed = `slot:${T0 / 1000}`;

  beforeAll(async () => {
    redis = await startTestRedis(topology);
    clock = new FakeClock(T0);
    const config = validateConfig({ ...redis.env, EXPIRE_CHUNK: String(BUDGET), REDIS_COMMAND_TIMEOUT_MS: '5000' });
    service = new RedisService(RedisSettings.from(config), clock);
    await service.waitUntilReady(10_000);
    graph = await composeRanking(service, new RedisFunctions(service), config, clock);
    const seederConfig = {
      ...config,
      ...validateConfig({ ...redis.env, EXPIRE_CHUNK: '5000', WRITE_COST_PER_CALL: '1000000' }),
    };
    seederService = new RedisService(RedisSettings.from(seederConfig), clock);
    await seederService.waitUntilReady(10_000);
    seeder = await composeRanking(seederService, new RedisFunctions(seederService), seederConfig, clock);
  });
  afterAll(async () => {
    await graph.boards.onApplicationShutdown();
    await seeder.boards.onApplicationShutdown();
    await service.onApplicationShutdown();
    await seederService.onApplicationShutdown();
    await redis.stop();
  });

  /** The closed slot's fields and the records packed out of it, before and after each write (one call) until both settle. */
  async function stepsOf(name: string): Promise<Array<{ fields: number; packed: number }>> {
    const [slot] = await redis.dataKeys(`board:${name}}*:${closed}`);
    const pack = slot.replace(/slot:\d+$/, 'tailpack');
    const cursors = slot.replace(/slot:\d+$/, 'tail');
    const state = async () => {
      // The cursors stored stay HSCAN cursors, which a library version before this one scans as they are.
      const stored = [await redis.client.hget(cursors, 'cursor'), await redis.client.hget(pack, 'pkcursor')];
      for (const cursor of stored) expect(cursor ?? '0').toMatch(/^\d+$/);
      return {
        fields: await redis.client.hlen(slot),
        packed: Number((await redis.client.hget(pack, `p:${T0 / 1000}`)) ?? 0),
      };
    };
    const states = [await state()];
    for (let reads = 0; reads < 200; reads++) {
      await graph.ranking.incrementBatch(name, [{ item: 'now', amount: 1 }]);
      states.push(await state());
      if (states.at(-2)!.fields === states.at(-1)!.fields && states.at(-1)!.fields === 0) return states;
    }
    throw new Error('pruning and packing never finished');
  }

  async function seed(name: string, amount: number): Promise<void> {
    clock.setMs(T0);
    await graph.ranking.putBoard({
      name,
      windows: [{ name: 'w', period: '3m', interval: '1m' }],
      tail: { exact: 1, below: 2 },
    });
    const items = Array.from({ length: ITEMS }, (_, i) => ({ item: `i${i}`, amount }));
    await graph.ranking.incrementBatch(name, [{ item: 'top', amount: 9 }, ...items]);
    clock.advanceMs(MINUTE_MS);
    await graph.ranking.incrementBatch(name, [{ item: 'now', amount: 1 }]);
  }

  it("drops at most what a call pays of a slot of items seen once, and in the end all but the filter's false positives", async () => {
    await seed('once', 1);
    const states = await stepsOf('once');
    const dropped = states.slice(1).map(({ fields }, i) => states[i].fields - fields);
    expect(Math.max(...dropped)).toBeLessThanOrEqual(Math.ceil(BUDGET / DROP_UNITS));
    const page = await graph.ranking.top('once', 'w', 0, 1000);
    // Left: 'now', 'top' and the few a filter's false "may hold" kept (~2.4 % at most, tail_lib's BITS_PER_FIELD).
    expect(page.items.slice(0, 2).map((row) => row.item)).toEqual(['now', 'top']);
    expect(page.items.length - 2).toBeLessThan(ITEMS * 0.05);
  });

  it('packs at most what a call pays of a slot of items it keeps, and packs them all in the end', async () => {
    await seed('kept', 2);
    const states = await stepsOf('kept');
    const packedPerCall = states.slice(1).map(({ packed }, i) => packed - states[i].packed);
    expect(Math.max(...packedPerCall)).toBeLessThanOrEqual(BUDGET);
    expect(states.at(-1)).toEqual({ fields: 0, packed: ITEMS + 1 });
    const page = await graph.ranking.top('kept', 'w', 0, 1000);
    expect(page.items).toHaveLength(ITEMS + 2);
  });

  it('refuses a tail board whose rolling window holds more than MAX_TAIL_SLOTS slots, nothing stored', async () => {
    const windows = [{ name: 'w', period: `${MAX_TAIL_SLOTS + 1}h`, interval: '1h' }];
    await expect(graph.ranking.putBoard({ name: 'wide', windows, tail: { exact: 1, below: 2 } })).rejects.toThrow(
      new RegExp(`at most ${MAX_TAIL_SLOTS} slots`),
    );
    expect(await redis.dataKeys('board:wide}*')).toEqual([]);
  });

  it('answers fewer rows a call on a window of many pruned slots: rows weighed by the slots each walks, each row once', async () => {
    clock.setMs(T0);
    const name = 'many';
    await seeder.ranking.putBoard({
      name,
      windows: [{ name: 'w', period: '1h', interval: '1m' }],
      tail: { exact: 1, below: 2 },
    });
    const rows = Array.from({ length: 100 }, (_, i) => ({ item: `r${i}`, amount: 1 }));
    // 59 closed minutes of the same 100 items seen once each: every row's bound walks 59 pruned slots.
    for (let minute = 0; minute < 59; minute++) {
      await seeder.ranking.incrementBatch(name, [{ item: 'top', amount: 2 }, ...rows]);
      clock.advanceMs(MINUTE_MS);
    }
    // Listed again now, each row's bound is what it lost in every closed minute.
    await seeder.ranking.incrementBatch(name, rows);
    await seeder.ranking.incrementBatch(name, rows);
    const store = graph.module.get(StandingStore);
    const board = await graph.cache.get(name);
    const { answered, restore } = rowsEachCall(store);
    // The first reads learn the rows' slots (cached), the last answers them from the cache.
    const read = { board, window: board.config.windows[0], nowMs: clock.nowMs() };
    for (let reads = 0; reads < 3; reads++) await store.tailTop(read, 200);
    answered.splice(0);
    const [shard] = await store.tailTop(read, 200);
    restore();
    const [tailKey] = await redis.dataKeys(`board:${name}}*:w:tail`);
    const pruned = (await redis.client.hkeys(tailKey)).filter((field) => field.startsWith('d:')).length;
    expect(pruned).toBeGreaterThan(50);
    expect(Math.max(...answered)).toBeLessThanOrEqual(Math.floor(WEIGHT_PER_CALL / (ROW_WEIGHT + pruned)));
    expect(answered.reduce((sum, n) => sum + n, 0)).toBe(shard.rows.length);
    expect(new Set(shard.rows.map((row) => row.item)).size).toBe(shard.rows.length);
    expect(shard.rows.length).toBeGreaterThan(100);
  });
});
