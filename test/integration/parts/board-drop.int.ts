import { ConflictError, NotFoundError } from '../../../src/common/errors';
import { validateConfig } from '../../../src/common/config';
import { BOARD_DROP_KEYS_PER_CALL } from '../../../src/ranking/core/ranking.limits';
import { composeRanking, RankingGraph } from '../../../harness/compose-ranking';
import { RANKING } from '../../../src/ranking/ranking.functions';
import { LeaguesStore } from '../../../src/ranking/leagues/leagues.store';
import { RedisFunctions } from '../../../src/redis/redis-functions';
import { RedisService } from '../../../src/redis/redis.service';
import { RedisSettings } from '../../../src/redis/redis.settings';
import { FakeClock } from '../../../harness/clock';
import { startTestRedis, TestRedis, TOPOLOGIES } from '../../../harness/redis';

const T0 = 1_700_002_800_000;
const SLOTS = 150;
const WINDOWS = Array.from({ length: 8 }, (_, w) => ({
  name: `w${w}`,
  period: `${2 * SLOTS}m`,
  interval: '1m',
  ...(w === 0 ? { snapshots: { keep: 1000, top: 10 } } : {}),
}));
/** The functions of a deletion: the detach of a shard, a drop step. */
const DELETE_FUNCTIONS = new Set<string>([RANKING.functions.boardDelete.name, RANKING.functions.boardDropStep.name]);

describe.each(TOPOLOGIES)('deleting a board drops its keys in bounded calls (real Redis, %s)', (topology) => {
  let redis: TestRedis;
  let clock: FakeClock;
  let service: RedisService;
  let functions: RedisFunctions;
  let graph: RankingGraph;
  const boardKeys = () => redis.dataKeys('board:big*');

  beforeAll(async () => {
    redis = await startTestRedis(topology);
    clock = new FakeClock(T0);
    const config = validateConfig({ ...redis.env, REDIS_COMMAND_TIMEOUT_MS: '5000' });
    service = new RedisService(RedisSettings.from(config), clock);
    functions = new RedisFunctions(service);
    await service.waitUntilReady(10_000);
    graph = await composeRanking(service, functions, config, clock);
  });
  afterAll(async () => {
    await graph.boards.onApplicationShutdown();
    await service.onApplicationShutdown();
    await redis.stop();
  });
  beforeEach(async () => {
    await redis.clear();
    clock.setMs(T0);
  });

  /** Board "big": 8 windows of SLOTS one-minute slots filled, a segment's windows too, snapshots of w0. */
  async function fillBig(): Promise<number> {
    await graph.ranking.putBoard({ name: 'big', windows: WINDOWS, segmentsMax: 10 });
    for (let slot = 0; slot < SLOTS; slot++) {
      await graph.ranking.increment('big', `item-${slot % 7}`, 1, undefined, undefined, undefined, undefined, ['s1']);
      clock.advanceSec(60);
    }
    const keys = (await boardKeys()).length;
    expect(keys).toBeGreaterThan(2 * 8 * SLOTS);
    return keys;
  }

  it('no call of a DELETE unlinks more than BOARD_DROP_KEYS_PER_CALL keys, and every key goes', async () => {
    const before = await fillBig();
    const perCall: number[] = [];
    const call = functions.call.bind(functions);
    const spy = jest.spyOn(functions, 'call').mockImplementation(async (fn, input) => {
      if (!DELETE_FUNCTIONS.has(fn.name)) return call(fn, input);
      const held = (await boardKeys()).length;
      const reply = await call(fn, input);
      perCall.push(held - (await boardKeys()).length);
      return reply;
    });
    try {
      await graph.ranking.deleteBoard('big');
    } finally {
      spy.mockRestore();
    }
    expect(perCall.reduce((sum, n) => sum + n, 0)).toBe(before);
    // A step's last window may take its few fixed keys beyond the budget, the last step the shard's own.
    expect(Math.max(...perCall)).toBeLessThanOrEqual(BOARD_DROP_KEYS_PER_CALL + 16);
    expect(perCall.length).toBeGreaterThan(2);
    expect(await boardKeys()).toEqual([]);
    expect(await redis.client.zrange(`${redis.prefix}boards:dropping`, 0, -1)).toEqual([]);
  });

  it('a drop stopped half way: the board is gone at once, a PUT of the name is 409 until another instance resumes and ends it', async () => {
    await fillBig();
    const nowMs = clock.nowMs();
    const drop = await graph.boards.drops.note({ name: 'big', fromShard: 0, mostShards: 1 }, nowMs);
    expect(await graph.boards.drops.detach('big', 0, nowMs)).toBe(true);
    // One step, then the instance "stops": the rest stays noted.
    expect(await graph.boards.drops.drive(drop, 1, nowMs)).toBe(false);
    graph.cache.forget('big');
    await expect(graph.ranking.getBoard('big')).rejects.toThrow(NotFoundError);
    await expect(graph.ranking.increment('big', 'item-1', 1)).rejects.toThrow(NotFoundError);
    const refused = graph.ranking.putBoard({ name: 'big', windows: WINDOWS });
    await expect(refused).rejects.toThrow(ConflictError);
    await expect(refused).rejects.toMatchObject({ code: 'BOARD_BEING_DELETED' });
    expect((await boardKeys()).length).toBeGreaterThan(BOARD_DROP_KEYS_PER_CALL);
    expect(await redis.client.zrange(`${redis.prefix}boards:names`, 0, -1)).toEqual([]);

    const other = await composeRanking(service, functions, validateConfig({ ...redis.env }), clock);
    expect(await other.boards.drops.resume(nowMs)).toBe(1);
    await other.boards.drops.settled();
    expect(await boardKeys()).toEqual([]);
    expect(await redis.client.zrange(`${redis.prefix}boards:dropping`, 0, -1)).toEqual([]);
    expect((await graph.ranking.putBoard({ name: 'big', windows: WINDOWS })).created).toBe(true);
    expect((await graph.ranking.top('big', 'w1', 0, 10)).items).toEqual([]);
  });

  it('the records of its retractions, re-weightings and alias merges go too: a board of the same name never sees them', async () => {
    await graph.ranking.putBoard({ name: 'rec', windows: WINDOWS.slice(0, 2), shards: 3, actors: true });
    for (let i = 0; i < 12; i++) {
      const event = { board: 'rec', item: `item-${i}`, amount: 1, actor: `actor-${i % 3}` };
      await graph.ranking.increment({ kind: 'increment', ...event, context: { nowMs: clock.nowMs() } });
    }
    const retraction = (await graph.retractions.start('rec', { kind: 'actor', id: 'actor-0' })).body;
    await graph.retractions.settled('rec', retraction.id);
    await graph.actorWeights.put('rec', 'actor-1', 2);
    await graph.actorWeights.settled('rec', 'actor-1');
    await graph.aliases.put('rec', 'item-1', 'item-2');
    await graph.aliases.settled('rec', 'item-1');
    const records = async () => (await redis.dataKeys('board:rec*')).filter((key) => /:(ret|rw|al|alin):/.test(key));
    expect((await records()).length).toBeGreaterThanOrEqual(3);

    await graph.ranking.deleteBoard('rec');
    await graph.boards.drops.settled();
    expect(await redis.dataKeys('board:rec*')).toEqual([]);
    await graph.ranking.putBoard({ name: 'rec', windows: WINDOWS.slice(0, 2), shards: 3, actors: true });
    await expect(graph.retractions.get('rec', retraction.id)).rejects.toThrow(NotFoundError);
  });

  it('a board of the same name draws tie numbers of its own: its first items keep the order they reached their score', async () => {
    const windows = [
      { name: 'short', period: 60, interval: 60 },
      { name: 'long', period: 600, interval: 60 },
    ];
    await graph.ranking.putBoard({ name: 'tied', windows, ties: 'first' });
    for (let i = 0; i < 6; i++) await graph.ranking.increment('tied', `old-${i}`, 1);
    // Older than the short window: one tie number drawn of the two the write took, one left undrawn.
    const pastSec = clock.nowMs() / 1000 - 120;
    await graph.ranking.increment('tied', 'late', 1, undefined, undefined, pastSec);
    await graph.ranking.deleteBoard('tied');
    await graph.boards.drops.settled();
    await graph.ranking.putBoard({ name: 'tied', windows, ties: 'first' });
    await graph.ranking.increment('tied', 'b', 1);
    await graph.ranking.increment('tied', 'a', 1);
    for (const window of ['short', 'long'])
      expect([window, (await graph.ranking.top('tied', window, 0, 10)).items.map((row) => row.item)]).toEqual([
        window,
        ['b', 'a'],
      ]);
  });

  it("a leagues board's keys go too: cohorts of open periods, kept moves, the item maps", async () => {
    const DAY_MS = 86_400_000;
    const leagues = { window: 'day', size: 3, tiers: ['t1', 't2', 't3'], promote: 1, relegate: 1 };
    await graph.ranking.putBoard({ name: 'bigleague', windows: [{ name: 'day', calendar: 'day' }], leagues });
    // Three days of 40 items: the first rolled (its moves kept), the second half rolled, the third open.
    for (let day = 0; day < 3; day++) {
      for (let i = 0; i < 40; i++) await graph.ranking.increment('bigleague', `p${i}`, ((i * 7 + day) % 11) + 1);
      if (day < 2) {
        clock.advanceMs(DAY_MS);
        const board = await graph.cache.get('bigleague');
        const at = { board, nowMs: clock.nowMs(), currentSec: (clock.nowMs() - (clock.nowMs() % DAY_MS)) / 1000 };
        await graph.module.get(LeaguesStore).roll(at, day === 0 ? 1000 : 10);
      }
    }
    const leagueKeys = () => redis.dataKeys('board:bigleague*');
    expect((await leagueKeys()).filter((key) => key.includes(':lg:')).length).toBeGreaterThan(20);
    await graph.ranking.deleteBoard('bigleague');
    await graph.boards.drops.settled();
    expect(await leagueKeys()).toEqual([]);
  });
});
