import fc from 'fast-check';
import { AppConfig, validateConfig } from '../../src/common/config';
import { RankingKeys } from '../../src/ranking/core/ranking.keys';
import { RankingScheduler } from '../../src/ranking/expiry/ranking.scheduler';
import { RankingService } from '../../src/ranking/ranking.service';
import { composeRanking } from '../../harness/compose-ranking';
import { RedisService } from '../../src/redis/redis.service';
import { RedisSettings } from '../../src/redis/redis.settings';
import { RedisFunctions } from '../../src/redis/redis-functions';
import { FakeClock } from '../../harness/clock';
import { RankingModel } from '../support/ranking-model';
import { moveClock, RankingOp, rankingOps } from '../support/ranking-ops';
import { startTestRedis, TestRedis, TOPOLOGIES } from '../../harness/redis';

const WINDOWS = [
  { name: 'short', periodSec: 30, intervalSec: 10 },
  { name: 'long', periodSec: 120, intervalSec: 40 },
];
const ONE_WINDOW = [{ name: 'only', periodSec: 20, intervalSec: 20 }];
/** name -> (windows, shards): plain and sharded boards, one or two windows. */
const BOARDS = [
  { windows: WINDOWS, shards: 1 },
  { windows: WINDOWS, shards: 1 },
  { windows: WINDOWS, shards: 3 },
  { windows: ONE_WINDOW, shards: 1 },
  { windows: ONE_WINDOW, shards: 2 },
  { windows: WINDOWS, shards: 1 },
  { windows: ONE_WINDOW, shards: 1 },
  { windows: WINDOWS, shards: 2 },
];
const ITEMS = ['a', 'b', 'c', 'd', 'é', 'a b/c'];
const USERS = ['u1', 'u2', 'u3'];
const LEASE_MS = 30_000;
const SWEEP_INTERVAL_MS = 600_000;

const op = rankingOps({ items: ITEMS, users: USERS, maxAdvanceMs: 150_000, boundaries: [10, 20, 40] });
/** A step on one board, or both instances' scheduler passes at once. */
type Step = { kind: 'on'; board: number; op: RankingOp } | { kind: 'pass' };
const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('on' as const), board: fc.nat(BOARDS.length - 1), op }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'pass' as const }) },
);

interface Instance {
  ranking: RankingService;
  scheduler: RankingScheduler;
  redisService: RedisService;
  functions: RedisFunctions;
}

/** An instance as the app builds it: its own connection, store, config cache and scheduler. */
async function startInstance(config: AppConfig, clock: FakeClock): Promise<Instance> {
  const redisService = new RedisService(RedisSettings.from(config), clock);
  await redisService.waitUntilReady(10_000);
  const functions = new RedisFunctions(redisService);
  const { module, ranking } = await composeRanking(redisService, functions, config, clock);
  return { ranking, scheduler: module.get(RankingScheduler), redisService, functions };
}

describe.each(TOPOLOGIES)('the due-index scheduler (%s)', (topology) => {
  const clock = new FakeClock(1_700_000_000_000);
  let redis: TestRedis;
  let keys: RankingKeys;
  let a: Instance;
  let b: Instance;

  beforeAll(async () => {
    redis = await startTestRedis(topology);
    keys = new RankingKeys(redis.prefix);
    const config = validateConfig({
      ...redis.env,
      REDIS_COMMAND_TIMEOUT_MS: '5000',
      // A tiny chunk, so a visit often takes several expire calls; a tiny claim batch, so a pass claims often.
      EXPIRE_CHUNK: '2',
      SCHEDULER_CLAIM_BATCH: '3',
      SCHEDULER_LEASE_MS: String(LEASE_MS),
      SCHEDULER_SWEEP_INTERVAL_MS: String(SWEEP_INTERVAL_MS),
    });
    [a, b] = await Promise.all([startInstance(config, clock), startInstance(config, clock)]);
  });
  afterAll(async () => {
    await Promise.all([a, b].map((instance) => instance?.redisService.onApplicationShutdown()));
    await redis?.stop();
  });

  /** Both instances' scheduler passes at once; neither may fail. */
  async function passes(): Promise<void> {
    await Promise.all([a.scheduler.tick(), b.scheduler.tick()]);
    expect([a.scheduler.stats.failures, b.scheduler.stats.failures]).toEqual([0, 0]);
  }

  /**
   * Raw keys, read without any script (so without lazy expiry): no shard keeps a slot or a like that
   * left its window, and each window's results summed over the shards are the model's sums.
   */
  async function expectNothingExpiredCounted(name: string, shards: number, model: RankingModel): Promise<void> {
    const nowMs = clock.nowMs();
    const nowSec = Math.floor(nowMs / 1000);
    let oldestLiveMs = Infinity;
    for (const w of model.windows) {
      const cutoffSec = nowSec - (nowSec % w.intervalSec) - w.periodSec;
      oldestLiveMs = Math.min(oldestLiveMs, (cutoffSec + w.intervalSec) * 1000);
      const stored = new Map<string, number>();
      for (let shard = 0; shard < shards; shard++) {
        const board = keys.board(name, shard);
        const starts = (await redis.client.zrange(board.slots(w.name), 0, -1)).map(Number);
        expect({ board: name, shard, window: w.name, expired: starts.filter((s) => s <= cutoffSec) }).toEqual({
          board: name,
          shard,
          window: w.name,
          expired: [],
        });
        const top = await redis.client.zrange(board.top(w.name), 0, -1, 'WITHSCORES');
        for (let i = 0; i < top.length; i += 2) stored.set(top[i], (stored.get(top[i]) ?? 0) + Number(top[i + 1]));
      }
      const expected = new Map([...model.sums(w.name, nowMs)].filter(([, sum]) => sum !== 0));
      expect({ board: name, window: w.name, sums: stored }).toEqual({ board: name, window: w.name, sums: expected });
    }
    for (let shard = 0; shard < shards; shard++) {
      const stale = await redis.client.zrange(keys.board(name, shard).likes(), '-inf', `(${oldestLiveMs}`, 'BYSCORE');
      expect({ board: name, shard, staleLikes: stale }).toEqual({ board: name, shard, staleLikes: [] });
    }
  }

  let run = 0;

  it('never leaves an expired slot counted after both instances passed, whatever the writes and clock moves', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 60 }), async (steps) => {
        run++;
        const names = BOARDS.map((_, i) => `r${run}b${i}`);
        const models = BOARDS.map((board) => new RankingModel(board.windows));
        await Promise.all(
          BOARDS.map((board, i) =>
            a.ranking.putBoard({
              name: names[i],
              windows: board.windows.map((w) => ({ name: w.name, period: w.periodSec, interval: w.intervalSec })),
              shards: board.shards,
            }),
          ),
        );
        const check = async () => {
          for (const [i, board] of BOARDS.entries())
            await expectNothingExpiredCounted(names[i], board.shards, models[i]);
        };
        for (const [n, s] of steps.entries()) {
          if (s.kind === 'pass') {
            await passes();
            await check();
            continue;
          }
          // Writes alternate between the instances; the model follows.
          const ranking = n % 2 === 0 ? a.ranking : b.ranking;
          const name = names[s.board];
          const model = models[s.board];
          const nowMs = clock.nowMs();
          const o = s.op;
          if (o.kind === 'inc') {
            await ranking.increment(name, o.item, o.amount);
            model.increment(nowMs, o.item, o.amount);
          } else if (o.kind === 'batch') {
            await ranking.incrementBatch(name, o.entries);
            for (const e of o.entries) model.increment(nowMs, e.item, e.amount);
          } else if (o.kind === 'like') {
            expect((await ranking.like(name, o.item, o.user, false)).body.counted).toBe(
              model.like(nowMs, o.item, o.user),
            );
          } else if (o.kind === 'unlike') {
            expect((await ranking.like(name, o.item, o.user, true)).body.counted).toBe(
              model.unlike(nowMs, o.item, o.user),
            );
          } else if (o.kind === 'advance' || o.kind === 'toBoundary') {
            moveClock(clock, o);
          }
        }
        // Past every window: the schedulers alone must empty every board.
        clock.advanceSec(121);
        await passes();
        await check();
        for (const name of names) await a.ranking.deleteBoard(name);
      }),
      { numRuns: 30 },
    );
  });

  it('visits only due boards: idle and not yet due boards cost no expire call', async () => {
    await a.ranking.putBoard({ name: 'idle', windows: [{ name: 'h', period: 3600, interval: 60 }] });
    await a.ranking.putBoard({ name: 'busy', windows: [{ name: 'h', period: 3600, interval: 60 }] });
    await a.ranking.increment('busy', 'x', 1);
    clock.advanceSec(60);
    await a.ranking.increment('busy', 'x', 1); // a later slot: the board's entry stays at the first one's due time
    expect(await redis.client.zscore(keys.dueIndex(), 'idle')).toBeNull();
    const due = Number(await redis.client.zscore(keys.dueIndex(), 'busy'));
    expect(due).toBeGreaterThan(clock.nowMs());
    expect(await a.ranking.expireDue({ leaseMs: LEASE_MS, claimBatch: 10 })).toMatchObject({ visited: 0 });
    clock.setMs(due);
    expect(await a.ranking.expireDue({ leaseMs: LEASE_MS, claimBatch: 10 })).toMatchObject({ visited: 1 });
    // Back in the index at the due time of the slot left, a minute later.
    expect(Number(await redis.client.zscore(keys.dueIndex(), 'busy'))).toBe(due + 60_000);
    expect((await a.ranking.item('busy', 'h', 'x')).score).toBe(1);
    await Promise.all(['idle', 'busy'].map((name) => a.ranking.deleteBoard(name)));
  });

  it("drains every metric's windows of a board with metrics, not only the first metric's (issue #50)", async () => {
    const windows = [{ name: 'm', period: 60, interval: 60 }];
    await a.ranking.putBoard({ name: 'voted', windows, shards: 2, metrics: ['up', 'down', 'flag'] });
    const context = { nowMs: clock.nowMs() };
    for (const metric of ['down', 'flag'])
      for (const item of ['x', 'y', 'z'])
        await a.ranking.increment({ kind: 'increment', board: 'voted', item, amount: 1, metric, context });
    clock.advanceSec(120);
    await passes();
    for (const shard of [0, 1])
      for (const metric of ['down', 'flag']) {
        const metricKeys = keys.board('voted', shard).inSegment(`@${metric}`);
        const left = await redis.client.exists(metricKeys.slots('m'), metricKeys.top('m'));
        expect({ shard, metric, left }).toEqual({ shard, metric, left: 0 });
      }
    expect(await redis.client.zscore(keys.dueIndex(), 'voted')).toBeNull();
    await a.ranking.deleteBoard('voted');
  });

  it("a crashed instance's claim lapses: another instance visits the board once the lease is over", async () => {
    await a.ranking.putBoard({ name: 'leased', windows: [{ name: 'm', period: 60, interval: 60 }] });
    await a.ranking.increment('leased', 'x', 1);
    clock.advanceSec(120);
    // Instance a claims the board and "crashes" (never completes the claim).
    const { expiryStore: crashed } = await composeRanking(
      a.redisService,
      a.functions,
      validateConfig({ ...redis.env }),
      clock,
    );
    expect((await crashed.claimDue(clock.nowMs(), LEASE_MS, 100)).boards).toContain('leased');
    expect(await b.ranking.expireDue({ leaseMs: LEASE_MS, claimBatch: 100 })).toMatchObject({ visited: 0 });
    expect(await redis.client.exists(keys.board('leased').slots('m'))).toBe(1);
    clock.advanceMs(LEASE_MS + 1);
    expect(await b.ranking.expireDue({ leaseMs: LEASE_MS, claimBatch: 100 })).toMatchObject({ visited: 1 });
    expect(await redis.client.exists(keys.board('leased').slots('m'), keys.board('leased').top('m'))).toBe(0);
    expect(await redis.client.zscore(keys.dueIndex(), 'leased')).toBeNull();
    expect(await redis.client.zcard(keys.dueLeases())).toBe(0);
    await a.ranking.deleteBoard('leased');
  });

  it('the sweep heals a lost index entry and moves the registry set kept before paging', async () => {
    await a.ranking.putBoard({ name: 'lost', windows: [{ name: 'm', period: 60, interval: 60 }] });
    await a.ranking.increment('lost', 'x', 1);
    await redis.client.zrem(keys.dueIndex(), 'lost'); // as if the instance died between the write and the index update
    // A board listed only in the old registry set (written by an instance of an earlier version).
    await a.ranking.putBoard({ name: 'old', windows: [{ name: 'm', period: 60, interval: 60 }] });
    await a.ranking.increment('old', 'x', 1);
    await redis.client.zrem(keys.boardRegistry(), 'old');
    await redis.client.zrem(keys.dueIndex(), 'old');
    await redis.client.sadd(keys.legacyBoardRegistry(), 'old');
    await redis.client.del(keys.dueSweep()); // the next sweep may start now
    clock.advanceSec(120);
    await passes();
    expect(await redis.client.exists(keys.legacyBoardRegistry())).toBe(0);
    expect(await redis.client.zscore(keys.boardRegistry(), 'old')).toBe('0');
    // Entered at most an interval ahead; a second sweep waits for the next interval.
    for (const name of ['lost', 'old'])
      expect(Number(await redis.client.zscore(keys.dueIndex(), name))).toBeLessThanOrEqual(
        clock.nowMs() + SWEEP_INTERVAL_MS,
      );
    expect(await a.ranking.sweepDueIndex(SWEEP_INTERVAL_MS)).toBeNull();
    clock.advanceMs(SWEEP_INTERVAL_MS);
    await passes();
    for (const name of ['lost', 'old']) {
      expect(await redis.client.exists(keys.board(name).slots('m'), keys.board(name).top('m'))).toBe(0);
      await a.ranking.deleteBoard(name);
    }
  });
});
