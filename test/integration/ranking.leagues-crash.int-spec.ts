import { ChildProcess, fork } from 'node:child_process';
import { join } from 'node:path';
import { composeRanking, RankingGraph } from '../../harness/compose-ranking';
import { FakeClock } from '../../harness/clock';
import { stopChild } from '../../harness/processes';
import { startTestRedis, TestRedis, Topology } from '../../harness/redis';
import { validateConfig } from '../../src/common/config';
import { LeaguesService } from '../../src/ranking/leagues/leagues.service';
import { LeaguesStore } from '../../src/ranking/leagues/leagues.store';
import { LEAGUE_ROLL_PART_UNITS } from '../../src/ranking/options/leagues/leagues.limits';
import { RedisService } from '../../src/redis/redis.service';
import { RedisSettings } from '../../src/redis/redis.settings';
import { RedisFunctions } from '../../src/redis/redis-functions';
import { LeaguesModel } from '../support/leagues-model';

/**
 * A rollover whose instance is killed (SIGKILL, a process of its own: test/support/league-roller.ts)
 * inside a cohort, between its promotions (the best members, rolled first) and its relegations, with
 * a step in flight: the schedulers of two other instances finish it, racing, and every member moved
 * exactly once, as the brute-force model moves it. On 1 shard, and on 3 (about 100 items each, shard 0
 * killed midway) single node and Cluster; on 3 shards also with `ties: first` (cohorts in the board's
 * strict order).
 */
const DAY_MS = 86_400_000;
const TIERS = ['bronze', 'silver', 'gold'];
const RULE = { size: 40, promote: 5, relegate: 5 };
/** Entries of each batch the days' events are sent in. */
const BATCH_ENTRIES_SENT = 100;
const CASES: Array<[Topology, number, 'shared' | 'first']> = [
  ['single', 1, 'shared'],
  ['single', 3, 'shared'],
  ['cluster', 3, 'shared'],
  ['single', 3, 'first'],
];

describe.each(CASES)(
  'a leagues rollover killed midway (SIGKILL, %s, %i shard(s), ties %s)',
  (topology, shards, ties) => {
    const ITEMS = Array.from({ length: 100 * shards }, (_, i) => `p${i}`);
    const clock = new FakeClock(Date.parse('2025-06-02T00:00:00Z'));
    let redis: TestRedis;
    let connection: RedisService;
    let graph: RankingGraph;
    /** A second instance: its scheduler and the first's finish the rollover, racing. */
    let other: { connection: RedisService; graph: RankingGraph };
    let roller: ChildProcess | undefined;

    beforeAll(async () => {
      redis = await startTestRedis(topology);
      const config = validateConfig({ ...redis.env, REDIS_COMMAND_TIMEOUT_MS: '5000' });
      connection = new RedisService(RedisSettings.from(config), clock);
      await connection.waitUntilReady(10_000);
      graph = await composeRanking(connection, new RedisFunctions(connection), config, clock);
      const second = new RedisService(RedisSettings.from(config), clock);
      await second.waitUntilReady(10_000);
      other = { connection: second, graph: await composeRanking(second, new RedisFunctions(second), config, clock) };
    });
    afterAll(async () => {
      if (roller) await stopChild(roller);
      await connection.onApplicationShutdown();
      await other?.connection.onApplicationShutdown();
      await redis?.stop();
    });

    /** The roller's next answer. */
    const answer = (child: ChildProcess) =>
      new Promise<unknown>((resolve, reject) => {
        child.once('message', resolve);
        child.once('exit', (code) => reject(new Error(`league roller exited (${code})`)));
      });

    it('is finished by two instances racing, each member moved once', async () => {
      await graph.ranking.putBoard({
        name: 'crash',
        windows: [{ name: 'day', calendar: 'day' }],
        shards,
        ties,
        leagues: { window: 'day', tiers: TIERS, ...RULE },
      });
      const model = new LeaguesModel({ ...RULE, tiers: TIERS.length, shards, ties });
      // Two days: the first rolled here, so the second has on shard 0 a silver cohort (about 15: 5 up, 5
      // down) beside the bronze ones (40, 40 and the rest).
      const days = [clock.nowMs() / 1000, clock.nowMs() / 1000 + 86_400];
      // Each day's events in batches, in the model's order: a shard applies a batch's entries in turn.
      for (const [round, start] of days.entries()) {
        const entries = ITEMS.map((item, i) => ({ item, amount: ((i * 37 + round * 11) % 29) + 1 }));
        for (let first = 0; first < entries.length; first += BATCH_ENTRIES_SENT) {
          await graph.ranking.incrementBatch('crash', entries.slice(first, first + BATCH_ENTRIES_SENT));
        }
        for (const { item, amount } of entries) model.add(start, item, amount);
        clock.advanceMs(DAY_MS);
      }
      const start = days[1];
      const currentSec = clock.nowMs() / 1000;
      model.enter(currentSec);
      const board = await graph.cache.get('crash');
      const at = { board, nowMs: clock.nowMs(), currentSec };
      await graph.module.get(LeaguesService).moves('crash', days[0] * 1000, { offset: 0, limit: 100 });

      roller = fork(join(__dirname, '../support/cached-ts.mjs'), [join(__dirname, '../support/league-roller.ts')], {
        execArgv: [],
        env: {
          ...process.env,
          ...redis.env,
          NOW_MS: String(clock.nowMs()),
          CURRENT_SEC: String(currentSec),
          LEAGUE_BOARD: 'crash',
          LEAGUE_BUDGET: '7',
          LOG_LEVEL: 'error',
        },
        stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      });
      expect(await answer(roller)).toBe('ready');
      // Shard 0's bronze cohorts (about 85 members, LEAGUE_ROLL_PART_UNITS more for each of their 3 parts,
      // and a unit left: ties at the promotion edge of the first day may make silver a member bigger),
      // then 5 of silver: its promotions are applied, its relegations (its last 5 places) are not.
      const base = `${board.shards[0].keys.tag}:lg:${start}:`;
      const bronze = Number(await connection.client.hget(`${base}fill`, '1'));
      const part = LEAGUE_ROLL_PART_UNITS;
      for (const budget of [bronze + Math.ceil(bronze / RULE.size) * part + 1, 5 + part]) {
        roller.send({ budget });
        expect(await answer(roller)).toEqual({ done: false });
      }
      // A third step asked for, and the process killed with it in flight (applied whole or not at all).
      roller.send({ budget: 5 + part });
      await stopChild(roller);
      const record = await connection.client.hgetall(`${base}roll`);
      const silver = await connection.client.zcard(`${base}c:2:1`);
      expect(record).toMatchObject({ tier: '2', cohort: '1' });
      expect(Number(record.offset)).toBeGreaterThanOrEqual(RULE.promote);
      expect(Number(record.offset)).toBeLessThanOrEqual(silver - RULE.relegate);

      // The schedulers of two instances finish it, racing: each visit rolls its steps of every shard.
      const visits = async (instance: RankingGraph) => {
        while (!(await instance.module.get(LeaguesService).rollDue(board, clock.nowMs())));
      };
      await Promise.all([visits(graph), visits(other.graph)]);
      expect(await graph.module.get(LeaguesStore).roll(at, 0)).toBe(true);
      const moves = [];
      for (let cursor: string | null = '0'; cursor !== null;) {
        const page = await graph.module
          .get(LeaguesService)
          .moves('crash', undefined, { offset: Number(cursor), limit: 50 });
        moves.push(...page.moves);
        cursor = page.nextCursor;
      }
      const want = model.moves
        .get(start)!
        .map((m) => ({ ...m, fromTier: TIERS[m.fromTier - 1], toTier: TIERS[m.toTier - 1] }));
      const byItem = (a: { item: string }, b: { item: string }) => (a.item < b.item ? -1 : 1);
      expect(want.length).toBeGreaterThan(0);
      expect(moves.sort(byItem)).toEqual(want.sort(byItem));
    });
  },
);
