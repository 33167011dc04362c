import { randomUUID } from 'node:crypto';
import { composeRanking, RankingGraph } from '../../../harness/compose-ranking';
import { FakeClock } from '../../../harness/clock';
import { startTestRedis, TestRedis, TOPOLOGIES } from '../../../harness/redis';
import { validateConfig } from '../../../src/common/config';
import { ConflictError, InvalidInputError } from '../../../src/common/errors';
import type { PreparedBoard } from '../../../src/ranking/core/board';
import { resolveWindows, WindowInput } from '../../../src/ranking/core/window-math';
import { LeaguesService } from '../../../src/ranking/leagues/leagues.service';
import { LeaguesStore } from '../../../src/ranking/leagues/leagues.store';
import { RANKING } from '../../../src/ranking/ranking.functions';
import { RedisService } from '../../../src/redis/redis.service';
import { RedisSettings } from '../../../src/redis/redis.settings';
import { RedisFunctions } from '../../../src/redis/redis-functions';

/**
 * A leagues board against the changes that could strand its league state: a DELETE interleaved with the
 * scheduler's rollover step and with a PUT's shard copies (a copy landing after the drop ended), and a
 * PUT dropping or removing the window the leagues are declared on. After a DELETE no key of the board
 * is left under its tags (a SCAN of its prefix).
 */
const DAY_MS = 86_400_000;
const LEAGUES = { window: 'day', size: 3, tiers: ['bronze', 'silver', 'gold'], promote: 1, relegate: 1 };
const WINDOWS: WindowInput[] = [
  { name: 'day', calendar: 'day' },
  { name: 'h', period: '2h', interval: '1h' },
];

describe.each(TOPOLOGIES)('leagues against DELETE and PUT races (real Redis, %s)', (topology) => {
  const clock = new FakeClock(Date.parse('2025-03-03T00:00:00Z'));
  let redis: TestRedis;
  const connections: RedisService[] = [];
  const graphs: RankingGraph[] = [];
  let boards = 0;

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
    for (const graph of graphs) await graph.boards.onApplicationShutdown();
    for (const connection of connections) await connection.onApplicationShutdown();
    await redis?.stop();
  });

  const keysOf = (name: string) => redis.dataKeys(`board:${name}*`);
  const dayStartSec = () => (clock.nowMs() - (clock.nowMs() % DAY_MS)) / 1000;

  /** A leagues board with a closed day of 12 items (its rollover not run) and the new day begun. */
  async function playedBoard(shards = 1): Promise<string> {
    const name = `lgrace${boards++}`;
    clock.advanceMs(10 * DAY_MS);
    await graphs[0].ranking.putBoard({ name, windows: WINDOWS, shards, leagues: LEAGUES });
    for (let i = 0; i < 12; i++) await graphs[0].ranking.increment(name, `p${i}`, (i % 5) + 1);
    clock.advanceMs(DAY_MS);
    await graphs[0].ranking.increment(name, 'p0', 1);
    expect((await keysOf(name)).filter((key) => key.includes(':lg:')).length).toBeGreaterThan(5);
    return name;
  }

  /** The scheduler's rollover step and a moves read, on a board config read before the DELETE. */
  async function lateLeagueSteps(stale: PreparedBoard): Promise<void> {
    const at = { board: stale, nowMs: clock.nowMs(), currentSec: dayStartSec() };
    const store = graphs[1].module.get(LeaguesStore);
    await expect(graphs[1].module.get(LeaguesService).rollDue(stale, clock.nowMs())).rejects.toThrow();
    await expect(store.moves(at, { periodSec: at.currentSec - 86_400, offset: 0, limit: 10 })).rejects.toThrow();
    await expect(store.roll(at)).rejects.toThrow();
  }

  it("the scheduler's rollover step run after the DELETE's first drop step, then after the drop ended, leaves no key", async () => {
    const name = await playedBoard();
    const stale = await graphs[1].cache.get(name);
    const drops = graphs[0].boards.drops;
    const drop = await drops.note({ name, fromShard: 0, mostShards: 1 }, clock.nowMs());
    expect(await drops.detach(name, 0, clock.nowMs())).toBe(true);
    const step = await graphs[0].module.get(RedisFunctions).call(RANKING.functions.boardDropStep, {
      keys: graphs[0].boards.keys.board(name, 0),
      budgetKeys: 3,
    });
    expect(step.done).toBe(false);
    await lateLeagueSteps(stale);
    expect(await drops.drive(drop, Number.POSITIVE_INFINITY, clock.nowMs(), true)).toBe(true);
    await lateLeagueSteps(stale);
    expect(await keysOf(name)).toEqual([]);
  });

  it('a sharded leagues board, deleted with its rollover not run, leaves no key on any shard, whatever late steps run', async () => {
    const name = await playedBoard(3);
    const stale = await graphs[1].cache.get(name);
    const tags = stale.shards.map((shard) => shard.keys.tag);
    const leagueKeys = (await keysOf(name)).filter((key) => key.includes(':lg:'));
    expect(tags.every((tag) => leagueKeys.some((key) => key.startsWith(`${tag}:lg:`)))).toBe(true);
    await graphs[0].ranking.deleteBoard(name);
    await graphs[0].boards.drops.settled();
    await lateLeagueSteps(stale);
    expect(await keysOf(name)).toEqual([]);
  });

  it('the shards of a board holding leagues cannot change, even with reset; a resharded board takes leagues', async () => {
    const name = await playedBoard(3);
    const before = await graphs[0].module.get(LeaguesService).item(name, 'p0');
    for (const shards of [1, 2, 4])
      await expect(graphs[0].ranking.putBoard({ name, windows: WINDOWS, shards, reset: true })).rejects.toThrow(
        /shards cannot change/,
      );
    expect(await graphs[0].module.get(LeaguesService).item(name, 'p0')).toEqual(before);
    const plain = `lgplain${boards++}`;
    await graphs[0].ranking.putBoard({ name: plain, windows: WINDOWS });
    await graphs[0].ranking.putBoard({ name: plain, windows: WINDOWS, shards: 3, reset: true });
    await graphs[0].ranking.putBoard({ name: plain, windows: WINDOWS, leagues: LEAGUES });
    await graphs[0].ranking.increment(plain, 'p1', 2);
    expect(await graphs[0].module.get(LeaguesService).item(plain, 'p1')).toMatchObject({ tier: 'bronze', rank: 1 });
  });

  it('a PUT checked before the leagues were stored cannot reshard the board: no shard copy strands league state past a DELETE', async () => {
    const name = await playedBoard();
    // Instance B's PUT of 2 shards passed the service's check before instance A stored the leagues; its
    // copy to shard 1 lands after a DELETE ended, and B, holding the 2-shard config, keeps writing.
    const functions = graphs[1].module.get(RedisFunctions);
    const call = functions.call.bind(functions);
    const spy = jest.spyOn(functions, 'call').mockImplementation(async (fn, input) => {
      if (fn.name === RANKING.functions.shardSync.name) {
        graphs[1].cache.remember((await graphs[1].boards.loadBoard(name))!);
        await graphs[0].ranking.deleteBoard(name);
        await graphs[0].boards.drops.settled();
      }
      return call(fn, input);
    });
    let reply;
    try {
      reply = await graphs[1].boards.putBoard({
        ...{ name, windows: resolveWindows(WINDOWS), shards: 2, maxItems: undefined, views: [], reset: true },
        ...{ version: randomUUID(), nowMs: clock.nowMs() },
      });
    } finally {
      spy.mockRestore();
    }
    for (let i = 0; i < 12; i++) await graphs[1].ranking.increment(name, `q${i}`, 1).catch(() => undefined);
    await graphs[0].ranking.deleteBoard(name).catch(() => undefined);
    await graphs[0].boards.drops.settled();
    expect(await keysOf(name)).toEqual([]);
    expect(reply).toMatchObject({ status: 'conflict', message: expect.stringMatching(/shards cannot change/) });
  });

  it("a shard copy landing after the DELETE's drop ended is dropped by its own PUT", async () => {
    const name = `sharded${boards++}`;
    await graphs[0].ranking.putBoard({ name, windows: WINDOWS, shards: 2 });
    for (let i = 0; i < 12; i++) await graphs[0].ranking.increment(name, `p${i}`, 1);
    const functions = graphs[0].module.get(RedisFunctions);
    const call = functions.call.bind(functions);
    const syncs: string[] = [];
    const spy = jest.spyOn(functions, 'call').mockImplementation(async (fn, input) => {
      if (fn.name !== RANKING.functions.shardSync.name) return call(fn, input);
      await graphs[1].ranking.deleteBoard(name);
      await graphs[1].boards.drops.settled();
      const status = await call(fn, input);
      syncs.push(String(status));
      return status;
    });
    try {
      await graphs[0].ranking.putBoard({ name, windows: [...WINDOWS, { name: 'w', period: '7d', interval: '1d' }] });
    } finally {
      spy.mockRestore();
    }
    expect(syncs).toEqual(['synced']);
    await graphs[0].boards.drops.settled();
    expect(await keysOf(name)).toEqual([]);
  });

  it("a PUT removing, remaking or resetting the leagues' window is refused and the league state stays", async () => {
    const name = await playedBoard();
    const leagues = graphs[0].module.get(LeaguesService);
    const before = await leagues.item(name, 'p0');
    const week = { name: 'day', calendar: 'week' } as const;
    const put = (windows: WindowInput[], reset = true) => graphs[0].ranking.putBoard({ name, windows, reset });
    await expect(put([WINDOWS[1]])).rejects.toThrow(InvalidInputError);
    await expect(put([week, WINDOWS[1]])).rejects.toMatchObject({ code: 'BOARD_CONFIG_CONFLICT' });
    await expect(put([{ name: 'day', period: '1d', interval: '1h' }, WINDOWS[1]])).rejects.toThrow(InvalidInputError);
    // A PUT whose check ran before the leagues were stored meets the same refusal in its own call.
    const racing = await graphs[0].boards.putBoard({
      ...{ name, windows: resolveWindows([WINDOWS[1]]), shards: undefined, maxItems: undefined, views: [] },
      ...{ reset: true, version: randomUUID(), nowMs: clock.nowMs() },
    });
    expect(racing).toMatchObject({
      status: 'conflict',
      message: expect.stringMatching(/window day holds the leagues/),
    });
    // Another window's reset keeps the leagues and their state.
    await put([WINDOWS[0], { name: 'h', period: '4h', interval: '1h' }]);
    await expect(put([week, WINDOWS[1]])).rejects.toThrow(ConflictError);
    expect(await leagues.item(name, 'p0')).toEqual(before);
    expect((await graphs[0].ranking.getBoard(name)).leagues).toEqual(LEAGUES);
  });
});
