import { composeRanking, RankingGraph } from '../../../harness/compose-ranking';
import { FakeClock } from '../../../harness/clock';
import { startTestRedis, TestRedis, TOPOLOGIES } from '../../../harness/redis';
import { validateConfig } from '../../../src/common/config';
import { LeaguesService } from '../../../src/ranking/leagues/leagues.service';
import { LeaguesStore } from '../../../src/ranking/leagues/leagues.store';
import { LEAGUE_ROLL_PART_UNITS } from '../../../src/ranking/options/leagues/leagues.limits';
import { RedisService } from '../../../src/redis/redis.service';
import { RedisSettings } from '../../../src/redis/redis.settings';
import { RedisFunctions } from '../../../src/redis/redis-functions';
import { LeaguesModel } from '../../support/leagues-model';

/**
 * The rollover of a period under two instances: two scheduler passes racing, a rollover stopped after
 * some steps (an instance gone between calls) then finished by racing steps of both, and a big cohort
 * rolled in parts abandoned midway: every member is rolled exactly once, as the brute-force model rolls
 * it. On 1 shard and on 3 (each shard rolling its own cohorts), single node and Cluster; the stopped
 * rollover also with `ties: first` (cohorts in the board's strict order).
 */
const DAY_MS = 86_400_000;
const TIERS = ['bronze', 'silver', 'gold'];
const RULE = { size: 7, promote: 2, relegate: 2 };
const players = (count: number) => Array.from({ length: count }, (_, i) => `p${i}`);
const ITEMS = players(60);
const CASES = TOPOLOGIES.flatMap((topology) => [1, 3].map((shards) => [topology, shards] as const));

describe.each(CASES)('leagues rollover with two instances (%s, %i shard(s))', (topology, shards) => {
  const clock = new FakeClock(Date.parse('2025-03-03T00:00:00Z'));
  let redis: TestRedis;
  const connections: RedisService[] = [];
  const graphs: RankingGraph[] = [];
  let board = 0;

  beforeAll(async () => {
    redis = await startTestRedis(topology);
    const config = validateConfig({ ...redis.env, REDIS_COMMAND_TIMEOUT_MS: '5000' });
    for (let i = 0; i < 2; i++) {
      const connection = new RedisService(RedisSettings.from(config), clock);
      await connection.waitUntilReady(10_000);
      connections.push(connection);
      graphs.push(await composeRanking(connection, new RedisFunctions(connection), config, clock));
    }
  });
  afterAll(async () => {
    for (const connection of connections) await connection.onApplicationShutdown();
    await redis?.stop();
  });

  /** A board whose day holds a score for every item (two rounds, so tiers differ), the day over. */
  async function playedBoard(
    rule = RULE,
    items = ITEMS,
    ties: 'shared' | 'first' = 'shared',
  ): Promise<{ name: string; model: LeaguesModel }> {
    const name = `roll${board++}`;
    clock.advanceMs(10 * DAY_MS);
    const leagues = { window: 'day', tiers: TIERS, ...rule };
    await graphs[0].ranking.putBoard({ name, windows: [{ name: 'day', calendar: 'day' }], shards, ties, leagues });
    const model = new LeaguesModel({ ...rule, tiers: TIERS.length, shards, ties });
    for (let round = 0; round < 2; round++) {
      const start = (clock.nowMs() - (clock.nowMs() % DAY_MS)) / 1000;
      for (const [i, item] of items.entries()) {
        const amount = ((i * 37 + round * 11) % 23) + 1;
        await graphs[i % 2].ranking.increment(name, item, amount);
        model.add(start, item, amount);
      }
      clock.advanceMs(DAY_MS);
    }
    model.enter((clock.nowMs() - (clock.nowMs() % DAY_MS)) / 1000);
    return { name, model };
  }

  /** Every move of the latest closed day equals the model's, and nothing is left to roll. */
  async function expectRolled(name: string, model: LeaguesModel): Promise<void> {
    const leagues = graphs[1].module.get(LeaguesService);
    const moves = [];
    let cursor: string | null = '0';
    while (cursor !== null) {
      const page = await leagues.moves(name, undefined, { offset: Number(cursor), limit: 17 });
      moves.push(...page.moves);
      cursor = page.nextCursor;
    }
    const closed = (clock.nowMs() - (clock.nowMs() % DAY_MS)) / 1000 - 86_400;
    const want = model.moves
      .get(closed)!
      .map((m) => ({ ...m, fromTier: TIERS[m.fromTier - 1], toTier: TIERS[m.toTier - 1] }));
    const byItem = (a: { item: string }, b: { item: string }) => (a.item < b.item ? -1 : 1);
    expect(want.length).toBeGreaterThan(0);
    expect(moves.sort(byItem)).toEqual(want.sort(byItem));
  }

  it('two scheduler passes racing roll every cohort once (no read needed)', async () => {
    const { name, model } = await playedBoard();
    const pass = { leaseMs: 30_000, claimBatch: 10 };
    await Promise.all(graphs.map((graph) => graph.expiry.expireDue(pass)));
    await Promise.all(graphs.map((graph) => graph.expiry.expireDue(pass)));
    const prepared = await graphs[0].cache.get(name);
    const at = { board: prepared, nowMs: clock.nowMs(), currentSec: (clock.nowMs() - (clock.nowMs() % DAY_MS)) / 1000 };
    // Nothing left for a step: the passes finished the rollover.
    expect(await graphs[0].module.get(LeaguesStore).roll(at, 0)).toBe(true);
    await expectRolled(name, model);
  });

  it.each(['shared', 'first'] as const)(
    'a rollover stopped after some steps is finished by racing steps of both instances, exactly once (ties %s)',
    async (ties) => {
      const { name, model } = await playedBoard(RULE, ITEMS, ties);
      const prepared = await graphs[0].cache.get(name);
      const at = {
        board: prepared,
        nowMs: clock.nowMs(),
        currentSec: (clock.nowMs() - (clock.nowMs() % DAY_MS)) / 1000,
      };
      const stores = graphs.map((graph) => graph.module.get(LeaguesStore));
      // The first instance gets two steps of one cohort each in, then is gone.
      expect(await stores[0].roll(at, 1)).toBe(false);
      expect(await stores[0].roll(at, 1)).toBe(false);
      const race = async (store: LeaguesStore) => {
        while (!(await store.roll(at, 3)));
      };
      await Promise.all([
        race(stores[0]),
        race(stores[1]),
        graphs[1].module.get(LeaguesService).rollDue(prepared, clock.nowMs()),
      ]);
      await expectRolled(name, model);
    },
  );

  it('a cohort rolled in parts and abandoned midway is finished by both instances, each member once', async () => {
    // Cohorts of 25 (ties among them), about 60 items a shard: shard 0's day holds bronze cohorts of 25
    // and fewer and a silver one of about 18. A step of their members (and LEAGUE_ROLL_PART_UNITS more for
    // each part) and a part of 6 stops 6 members into the silver one, whose later parts must rank their
    // members by the places the first part saw.
    const { name, model } = await playedBoard({ size: 25, promote: 6, relegate: 5 }, players(60 * shards));
    const prepared = await graphs[0].cache.get(name);
    const at = { board: prepared, nowMs: clock.nowMs(), currentSec: (clock.nowMs() - (clock.nowMs() % DAY_MS)) / 1000 };
    const stores = graphs.map((graph) => graph.module.get(LeaguesStore));
    // The day before goes first (its moves read rolls it): the steps below are the closed day's.
    await graphs[0].module
      .get(LeaguesService)
      .moves(name, (at.currentSec - 2 * 86_400) * 1000, { offset: 0, limit: 100 });
    const base = `${prepared.shards[0].keys.tag}:lg:${at.currentSec - 86_400}:`;
    const redisClient = connections[0].client;
    const bronze = Number(await redisClient.hget(`${base}fill`, '1'));
    const parts = (Math.ceil(bronze / 25) + 1) * LEAGUE_ROLL_PART_UNITS;
    expect(await stores[0].rollShard(at, 0, bronze + parts + 6)).toBe(false);
    expect(await redisClient.hgetall(`${base}roll`)).toMatchObject({ tier: '2', cohort: '1', offset: '6' });
    // Items of the half-rolled cohort write in the new day: one promoted already, one staying and two
    // relegated not rolled yet (rolled alone, ahead of the parts, which must not roll them again).
    const places = await redisClient.zrange(`${base}c:2:1`, 0, -1, 'REV');
    expect(places.length).toBeGreaterThanOrEqual(16);
    const start = at.currentSec;
    const leagues = graphs[0].module.get(LeaguesService);
    for (const item of [places[3], places[8], places[places.length - 3], places[places.length - 1]]) {
      await graphs[1].ranking.increment(name, item, 1);
      model.add(start, item, 1);
      expect((await leagues.item(name, item)).tier).toBe(TIERS[model.standing(start, item)!.tier - 1]);
    }
    const race = async (store: LeaguesStore) => {
      while (!(await store.roll(at, 4)));
    };
    await Promise.all([race(stores[0]), race(stores[1])]);
    await expectRolled(name, model);
  });

  it('each item is placed next period in the tier its rollover gave', async () => {
    const { name, model } = await playedBoard();
    const start = (clock.nowMs() - (clock.nowMs() % DAY_MS)) / 1000;
    const leagues = graphs[0].module.get(LeaguesService);
    for (const item of ITEMS.slice(0, 20)) {
      await graphs[1].ranking.increment(name, item, 1);
      model.add(start, item, 1);
      const want = model.standing(start, item)!;
      expect((await leagues.item(name, item)).tier).toBe(TIERS[want.tier - 1]);
    }
    await expectRolled(name, model);
  });
});
