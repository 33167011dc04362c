import { AppConfig, validateConfig } from '../../../src/common/config';
import { composeRanking, RankingGraph } from '../../../harness/compose-ranking';
import { WriteCommands } from '../../../src/ranking/writes/write-commands';
import { RedisService } from '../../../src/redis/redis.service';
import { RedisSettings } from '../../../src/redis/redis.settings';
import { RedisFunctions } from '../../../src/redis/redis-functions';
import { FakeClock } from '../../../harness/clock';
import { startTestRedis, TestRedis, TOPOLOGIES } from '../../../harness/redis';

const T0 = 1_700_000_000_000;
const WINDOWS = [
  { name: 'hour', period: '1h', interval: '1m' },
  { name: 'day', period: '1d', interval: '1h' },
];
const VIEWS = [{ name: 'people', mode: 'unique', window: 'hour' }];

/**
 * A retraction big enough to take many steps, stopped by one instance's shutdown in the middle and
 * finished by two others at once, while other actors keep writing: every count is exact afterwards.
 */
describe.each(TOPOLOGIES)('a retraction across restarts and instances (%s)', (topology) => {
  const clock = new FakeClock(T0);
  const commands = new WriteCommands(clock);
  let redis: TestRedis;
  let config: AppConfig;
  const connections: RedisService[] = [];

  async function instance(): Promise<RankingGraph> {
    const redisService = new RedisService(RedisSettings.from(config), clock);
    await redisService.waitUntilReady(10_000);
    connections.push(redisService);
    return composeRanking(redisService, new RedisFunctions(redisService), config, clock);
  }

  beforeAll(async () => {
    redis = await startTestRedis(topology);
    config = validateConfig({ ...redis.env, REDIS_COMMAND_TIMEOUT_MS: '5000' });
  });

  afterAll(async () => {
    for (const connection of connections) await connection.onApplicationShutdown();
    await redis.stop();
  });

  it('resumes after a restart, shares the work with a second instance, and never subtracts twice', async () => {
    const first = await instance();
    await first.ranking.putBoard({ name: 'r', windows: WINDOWS, shards: 3, views: VIEWS, actors: true });
    const expected = new Map<string, number>();
    const actors = new Map<string, Set<string>>();
    let spamEvents = 0;
    for (let minute = 0; minute < 40; minute++) {
      const entries = Array.from({ length: 50 }, (_, i) => ({
        item: `i${(minute * 7 + i) % 60}`,
        amount: 1 + (i % 3),
        actor: i % 5 === 0 ? `u${i}` : 'spam',
      }));
      await first.ranking.incrementBatch(commands.batch({ board: 'r', entries }));
      for (const e of entries) {
        if (e.actor === 'spam') spamEvents++;
        else {
          expected.set(e.item, (expected.get(e.item) ?? 0) + e.amount);
          actors.set(e.item, (actors.get(e.item) ?? new Set()).add(e.actor));
        }
      }
      clock.advanceSec(60);
    }
    clock.advanceSec(-60);

    const started = (await first.retractions.start('r', { kind: 'actor', id: 'spam' })).body;
    expect(started.state).toBe('running');
    await first.retractions.onApplicationShutdown();
    const paused = await first.retractions.get('r', started.id);
    expect(paused.state).toBe('running');

    // Two instances resume it at once while another actor writes.
    const [second, third] = [await instance(), await instance()];
    // Started as instances start (no GET): what a stopped instance left running, they finish.
    await Promise.all([second.retractions.onApplicationBootstrap(), third.retractions.onApplicationBootstrap()]);
    await second.ranking.increment(commands.increment({ board: 'r', item: 'i1', amount: 4, actor: 'late' }));
    expected.set('i1', (expected.get('i1') ?? 0) + 4);
    actors.get('i1')!.add('late');
    await Promise.all([second.retractions.settled('r', started.id), third.retractions.settled('r', started.id)]);

    const done = await third.retractions.get('r', started.id);
    expect(done).toMatchObject({ state: 'done', events: spamEvents });
    expect(await redis.client.zcard(`${redis.prefix}retractions:running`)).toBe(0);
    for (const window of ['hour', 'day']) {
      const top = await second.ranking.top('r', window, 0, 1000);
      const rows = new Map(top.items.map((row) => [row.item, row.score]));
      expect(rows).toEqual(new Map([...expected].filter(([, score]) => score > 0)));
    }
    const people = await second.ranking.top('r', 'people', 0, 1000);
    expect(new Map(people.items.map((row) => [row.item, row.score]))).toEqual(
      new Map([...actors].map(([item, who]) => [item, who.size])),
    );

    // A deleted board leaves nothing of its actors: contributions, indexes, unique counts (a record expires, and so do the stored answers of keyed writes).
    expect(
      (await redis.keys('board:r*')).filter((key) => /:(act:|byactor|byitem|pairs)/.test(key)).length,
    ).toBeGreaterThan(0);
    await second.ranking.deleteBoard('r');
    expect((await redis.keys('board:r*')).filter((key) => !/:(ret|idem):/.test(key))).toEqual([]);
  });
});

/**
 * Retractions and history: an actor's retraction crosses a segment's due boundary before it changes
 * the segment (its snapshot keeps the standings at the boundary, as the board's does); an item retracted
 * while a calendar archive is still being taken in chunks (EXPIRE_CHUNK 2: draining the closed day,
 * then writing its rows out, takes many calls), at every stage of it, on the board and in a segment:
 * the archive, once complete, never lists the item, and its rows are the day's best of the others
 * with consecutive ranks.
 */
describe.each(TOPOLOGIES)('retractions and the history of segments and chunked archives (%s)', (topology) => {
  const DAY_MS = 86_400_000;
  const TOP = 5;
  const DAY_ONE_MS = Date.parse('2031-03-03T00:00:00Z');
  const clock = new FakeClock(DAY_ONE_MS);
  const commands = new WriteCommands(clock);
  let redis: TestRedis;
  let redisService: RedisService;
  let graph: RankingGraph;

  beforeAll(async () => {
    redis = await startTestRedis(topology);
    const config = validateConfig({ ...redis.env, REDIS_COMMAND_TIMEOUT_MS: '5000', EXPIRE_CHUNK: '2' });
    redisService = new RedisService(RedisSettings.from(config), clock);
    await redisService.waitUntilReady(10_000);
    graph = await composeRanking(redisService, new RedisFunctions(redisService), config, clock);
  });

  afterAll(async () => {
    await graph.retractions.onApplicationShutdown();
    await redisService.onApplicationShutdown();
    await redis.stop();
  });

  /** The archive once complete (a read drains chunks; while one is pending it may answer WINDOW_DRAINING). */
  async function archived(
    name: string,
    segment?: string,
  ): Promise<Array<{ rank: number; item: string; score: number }>> {
    for (let i = 0; i < 50; i++) {
      try {
        const answer = await graph.ranking.archive(name, 'day', undefined, { offset: 0, limit: 100 }, { segment });
        return answer.items.map(({ rank, item, score }) => ({ rank, item, score }));
      } catch (error) {
        if ((error as { code?: string }).code !== 'WINDOW_DRAINING') throw error;
      }
    }
    throw new Error(`the archive of ${name} stayed pending`);
  }

  it("an actor's retraction crosses a segment's boundary first: its snapshot keeps the standings at the boundary", async () => {
    const FIVE_MIN_MS = 300_000;
    clock.setMs(Math.floor(DAY_ONE_MS / FIVE_MIN_MS) * FIVE_MIN_MS + 60_000);
    const windows = [{ name: 'hour', period: '1h', interval: '5m', snapshots: { keep: 3, top: 10 } }];
    await graph.ranking.putBoard({ name: 'kept', windows, shards: 1, segmentsMax: 2, actors: true });
    const events = [
      { item: 'x', amount: 5, actor: 'spam' },
      { item: 'x', amount: 2, actor: 'ann' },
      { item: 'y', amount: 4, actor: 'spam' },
    ];
    for (const e of events)
      await graph.ranking.increment(commands.increment({ board: 'kept', ...e, segments: ['en'] }));
    // Past the boundary, with no write, read or scheduler pass before the retraction.
    clock.advanceMs(FIVE_MIN_MS);
    const started = (await graph.retractions.start('kept', { kind: 'actor', id: 'spam' })).body;
    await graph.retractions.settled('kept', started.id);
    const rows = (found: { items: Array<{ item: string; score: number }> }) =>
      found.items.map(({ item, score }) => [item, score]);
    const atBoundary = [
      ['x', 7],
      ['y', 4],
    ];
    expect(rows(await graph.ranking.history('kept', 'hour', undefined))).toEqual(atBoundary);
    expect(rows(await graph.ranking.history('kept', 'hour', undefined, 'en'))).toEqual(atBoundary);
    expect(rows(await graph.ranking.top('kept', 'hour', 0, 10, { segment: 'en' }))).toEqual([['x', 2]]);
  });

  it.each(Array.from({ length: 10 }, (_, calls) => calls))(
    'retracted after %i chunk(s) of the archive: gone from it, the rest the best of the others',
    async (calls) => {
      const name = `pending${calls}`;
      clock.setMs(DAY_ONE_MS + 3_600_000);
      await graph.ranking.putBoard({
        name,
        windows: [{ name: 'day', calendar: 'day', archive: { keep: 2, top: TOP } }],
        shards: 1,
        segmentsMax: 2,
        actors: true,
      });
      // x scores best: its row is among the first written out.
      const scores = new Map([
        ['x', 50],
        ...Array.from({ length: 8 }, (_, i) => [`i${i}`, 10 + i] as [string, number]),
      ]);
      const entries = [...scores].map(([item, amount], i) => ({ item, amount, actor: `u${i % 3}`, segments: ['en'] }));
      await graph.ranking.incrementBatch(commands.batch({ board: name, entries }));
      clock.setMs(DAY_ONE_MS + DAY_MS + 60_000);
      // Each write drains (or writes out) one more chunk of the board's and the segment's archive.
      for (let i = 0; i < calls; i++)
        await graph.ranking.increment(commands.increment({ board: name, item: 'w', amount: 1, segments: ['en'] }));
      const started = (await graph.retractions.start(name, { kind: 'item', id: 'x' })).body;
      await graph.retractions.settled(name, started.id);
      expect(await graph.retractions.get(name, started.id)).toMatchObject({ state: 'done' });

      const others = [...scores]
        .filter(([item]) => item !== 'x')
        .sort(([, a], [, b]) => b - a)
        .map(([item, score], i) => ({ rank: i + 1, item, score }));
      for (const segment of [undefined, 'en']) {
        const rows = await archived(name, segment);
        // TOP - 1 rows when x's row was written out already (the rows after it moved up), else TOP.
        expect([TOP - 1, TOP]).toContain(rows.length);
        expect({ segment, rows }).toEqual({ segment, rows: others.slice(0, rows.length) });
      }
      await graph.ranking.deleteBoard(name);
    },
  );
});
