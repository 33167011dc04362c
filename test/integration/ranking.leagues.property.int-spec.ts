import fc from 'fast-check';
import { composeRanking, RankingGraph } from '../../harness/compose-ranking';
import { startTestRedis, TestRedis, SHARD_CELLS } from '../../harness/redis';
import { FakeClock } from '../../harness/clock';
import { validateConfig } from '../../src/common/config';
import { RedisService } from '../../src/redis/redis.service';
import { RedisSettings } from '../../src/redis/redis.settings';
import { RedisFunctions } from '../../src/redis/redis-functions';
import { LeaguesService } from '../../src/ranking/leagues/leagues.service';
import { LeaguesStore } from '../../src/ranking/leagues/leagues.store';
import { LeaguesModel } from '../support/leagues-model';

const DAY_MS = 86_400_000;
// Three items on each of 3 shards (shard 0: g, k, m; 1: a, b, d; 2: c, e, f).
const ITEMS = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'k', 'm'];
const TIERS = ['bronze', 'silver', 'gold'];
const START_MS = Date.parse('2025-03-03T00:00:00Z');

const step = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('inc' as const),
      item: fc.constantFrom(...ITEMS),
      amount: fc.integer({ min: -2, max: 6 }).filter((n) => n !== 0),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('move' as const),
      ms: fc.oneof(fc.integer({ min: 60_000, max: 6 * 3_600_000 }), fc.integer({ min: DAY_MS, max: 3 * DAY_MS })),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('roll' as const), budget: fc.integer({ min: 1, max: 3 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('moves' as const), limit: fc.integer({ min: 1, max: 3 }) }) },
);
type Step = typeof step extends fc.Arbitrary<infer S> ? S : never;

const dayStart = (ms: number) => ms - (ms % DAY_MS);

/**
 * Always among the runs: a day of three bronze cohorts of three (on one shard), their best promoted;
 * the next day those three in one silver cohort, whose worst alone is relegated. Items start in the
 * lowest tier, where relegation moves nobody, so random runs seldom relegate anyone: on `ties: first`
 * one relegated too many (rank 2 of 3 with relegate 1) passed them.
 */
const RELEGATED_FROM_SILVER: [{ size: number; promote: number; relegate: number }, Step[]] = [
  { size: 3, promote: 1, relegate: 1 },
  [
    ...ITEMS.map((item, i): Step => ({ kind: 'inc', item, amount: 3 - (i % 3) })),
    { kind: 'move', ms: DAY_MS },
    ...['a', 'd', 'g'].map((item, i): Step => ({ kind: 'inc', item, amount: 3 - i })),
  ],
];

/** `days[d]`: the amounts of day d's events, each day its own period. */
const daysOf = (days: Array<Array<[string, number]>>): Step[] =>
  days.flatMap((events, d) => [
    ...(d > 0 ? [{ kind: 'move' as const, ms: DAY_MS }] : []),
    ...events.map(([item, amount]): Step => ({ kind: 'inc', item, amount })),
  ]);

/**
 * Always among the runs: a lone member of a gold cohort, fewer than `relegate`, is relegated (it is
 * among the worst `relegate`). A cohort that small is only the last one of a tier, and reaching gold
 * takes two promotions, so random runs (the first cohorts fill first) never had one.
 */
const LONE_IN_GOLD: [{ size: number; promote: number; relegate: number }, Step[]] = [
  { size: 2, promote: 1, relegate: 2 },
  daysOf([
    [
      ['a', 3],
      ['b', 1],
    ],
    [['a', 1]],
    [['a', 1]],
  ]),
];

/**
 * Always among the runs: a gold cohort of two (a, b: one shard's items on 3 shards too) relegates its
 * worst alone. RELEGATED_FROM_SILVER relegates from silver on 1 shard only: on 3, its promoted members
 * are each alone in their silver cohort, so a strict relegation one place off on a sharded board passed.
 */
const RELEGATED_FROM_GOLD: [{ size: number; promote: number; relegate: number }, Step[]] = [
  { size: 3, promote: 2, relegate: 1 },
  daysOf([
    [
      ['a', 3],
      ['b', 2],
      ['d', 1],
    ],
    [
      ['a', 2],
      ['b', 1],
    ],
    [
      ['a', 2],
      ['b', 1],
    ],
  ]),
];

/**
 * Always among the runs: a cohort rolled in calls of one member (a promoted first), then that member
 * placed in the new day, alone ahead of the parts, then the moves read: the rest of the cohort moves in
 * later calls, and the first member is not rolled again by its placement.
 */
const SPLIT_ROLLOVER: [{ size: number; promote: number; relegate: number }, Step[]] = [
  { size: 3, promote: 2, relegate: 0 },
  [
    ...daysOf([
      [
        ['a', 3],
        ['b', 2],
        ['d', 1],
      ],
      [],
    ]),
    { kind: 'roll', budget: 1 },
    { kind: 'inc', item: 'a', amount: 1 },
    { kind: 'moves', limit: 3 },
  ],
];

const CASES = SHARD_CELLS.flatMap(([topology, shards]) =>
  (['shared', 'first'] as const).map((ties) => [topology, shards, ties] as const),
);

describe.each(CASES)(
  'leagues against a brute-force model (property, %s, %i shard(s), ties %s)',
  (topology, shards, ties) => {
    const clock = new FakeClock(START_MS);
    let redis: TestRedis;
    let connection: RedisService;
    let graph: RankingGraph;
    let leagues: LeaguesService;
    let store: LeaguesStore;
    let board = 0;

    beforeAll(async () => {
      redis = await startTestRedis(topology);
      const config = validateConfig({ ...redis.env, REDIS_COMMAND_TIMEOUT_MS: '5000', EXPIRE_CHUNK: '2' });
      connection = new RedisService(RedisSettings.from(config), clock);
      await connection.waitUntilReady(10_000);
      graph = await composeRanking(connection, new RedisFunctions(connection), config, clock);
      leagues = graph.module.get(LeaguesService);
      store = graph.module.get(LeaguesStore);
    });
    afterAll(async () => {
      await connection?.onApplicationShutdown();
      await redis?.stop();
    });

    async function checkStandings(name: string, model: LeaguesModel): Promise<void> {
      const start = dayStart(clock.nowMs()) / 1000;
      model.enter(start);
      for (const item of ITEMS) {
        const want = model.standing(start, item);
        const got = await leagues.item(name, item).catch((error: { code?: string }) => {
          if (error.code === 'ITEM_NOT_FOUND') return undefined;
          throw error;
        });
        const expected = want && { ...want, tier: TIERS[want.tier - 1], from: start, to: start + 86_400 };
        expect(got && { ...got, board: undefined, item: undefined }).toEqual(
          expected && { ...expected, board: undefined, item: undefined },
        );
        if (!want) continue;
        const page = await leagues.cohort(name, TIERS[want.tier - 1], want.cohort, { offset: 0, limit: 1000 });
        expect(page.items).toEqual(model.cohortRows(start, want.tier, want.cohort));
      }
    }

    async function checkMoves(name: string, model: LeaguesModel, limit: number): Promise<void> {
      const start = dayStart(clock.nowMs()) / 1000;
      model.enter(start);
      const closed = start - 86_400;
      const got = [];
      let offset = 0;
      for (;;) {
        const page = await leagues.moves(name, undefined, { offset, limit });
        expect(page.from).toBe(closed);
        got.push(...page.moves);
        if (page.nextCursor === null) break;
        offset = Number(page.nextCursor);
      }
      const want = (model.moves.get(closed) ?? []).map((m) => ({
        ...m,
        fromTier: TIERS[m.fromTier - 1],
        toTier: TIERS[m.toTier - 1],
      }));
      const order = (x: { item: string }, y: { item: string }) => (x.item < y.item ? -1 : 1);
      expect(got.sort(order)).toEqual(want.sort(order));
    }

    async function run(name: string, model: LeaguesModel, s: Step): Promise<void> {
      if (s.kind === 'inc') {
        await graph.ranking.increment(name, s.item, s.amount);
        model.add(dayStart(clock.nowMs()) / 1000, s.item, s.amount);
      } else if (s.kind === 'move') clock.advanceMs(s.ms);
      else if (s.kind === 'roll') {
        const board = await graph.cache.get(name);
        await store.roll({ board, nowMs: clock.nowMs(), currentSec: dayStart(clock.nowMs()) / 1000 }, s.budget);
      } else await checkMoves(name, model, s.limit);
    }

    it("placements, cohort pages and every period's moves match the model, whatever rolls, pages and scheduler steps interleave", async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.record({
            size: fc.integer({ min: 2, max: 3 }),
            promote: fc.integer({ min: 0, max: 2 }),
            relegate: fc.integer({ min: 0, max: 2 }),
          }),
          fc.array(step, { minLength: 1, maxLength: 40 }),
          async (rule, steps) => {
            const name = `lg${board++}`;
            clock.setMs(START_MS + board * 10 * DAY_MS);
            const setting = { window: 'day', tiers: TIERS, ...rule };
            const windows = [{ name: 'day', calendar: 'day' }];
            await graph.ranking.putBoard({ name, windows, shards, ties, leagues: setting });
            const model = new LeaguesModel({ ...rule, tiers: TIERS.length, shards, ties });
            for (const s of steps) {
              await run(name, model, s);
              await checkStandings(name, model);
            }
            clock.advanceMs(DAY_MS);
            await checkMoves(name, model, 2);
          },
        ),
        // 16 runs: of the mistakes planted in leagues_lib.lua that 40 runs caught, the bounds of a cohort
        // smaller than `promote` failed at run 8, a tie at either bound and a strict relegation or
        // promotion one place off at run 1 (the example); runs 17-40 caught none that these did not.
        { numRuns: 16, examples: [RELEGATED_FROM_SILVER, LONE_IN_GOLD, RELEGATED_FROM_GOLD, SPLIT_ROLLOVER] },
      );
    });
  },
);
