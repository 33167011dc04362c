import { FakeClock } from '../../../harness/clock';
import { startTestRedis, TestRedis } from '../../../harness/redis';
import { validateConfig } from '../../../src/common/config';
import { composeRanking, RankingGraph } from '../../../harness/compose-ranking';
import { RedisService } from '../../../src/redis/redis.service';
import { RedisFunctions } from '../../../src/redis/redis-functions';
import { RedisSettings } from '../../../src/redis/redis.settings';
import { INGEST, IngestEntry } from '../../../src/ingest/ingest.functions';
import { groupsOf } from '../../../src/ingest/ingest-groups';
import { IngestStore } from '../../../src/ingest/ingest.store';
import { WriteCommands } from '../../../src/ranking/writes/write-commands';

const T0 = 1_700_000_000_000;
const WINDOWS = [{ name: 'hour', period: '1h', interval: '5m' }];
const PROGRESS = 'src:test';

/**
 * The apply functions of stream ingest against a real Redis: a batch part summed per group
 * (ingest_groups) counts as its events one by one would (ties: first, segments), and a part holding
 * messages applied before goes entry by entry (ingest_apply), each message counted once.
 */
describe('ingest apply (single)', () => {
  const clock = new FakeClock(T0);
  let redis: TestRedis;
  let redisService: RedisService;
  let functions: RedisFunctions;
  let graph: RankingGraph;
  let store: IngestStore;
  let seq = 0;

  beforeAll(async () => {
    redis = await startTestRedis('single');
    const config = validateConfig({ ...redis.env, REDIS_COMMAND_TIMEOUT_MS: '5000' });
    redisService = new RedisService(RedisSettings.from(config), clock);
    await redisService.waitUntilReady(10_000);
    functions = new RedisFunctions(redisService);
    graph = await composeRanking(redisService, functions, config, clock);
    store = new IngestStore(redisService, functions);
  });
  afterAll(async () => {
    await redisService.onApplicationShutdown();
    await redis.stop();
  });
  beforeEach(async () => {
    await redis.clear();
    clock.setMs(T0);
  });

  type Event = { item: string; amount?: number; segments?: string[]; actor?: string };
  const entries = (events: Event[], firstSeq?: number): IngestEntry[] => {
    seq = firstSeq ?? seq;
    return events.map(({ item, amount, segments, actor }) => ({
      id: `${++seq}-0`,
      item,
      amount: amount ?? 1,
      atMs: clock.nowMs(),
      ...(segments ? { segments } : {}),
      ...(actor ? { actor } : {}),
    }));
  };

  /** One board's part (a single shard): applied as the runner applies it; the outcomes' kinds. */
  async function ingest(board: string, part: IngestEntry[]): Promise<{ applied: number; outcomes: string[] }> {
    const prepared = await graph.cache.get(board);
    const reply = await store.apply({
      board: prepared,
      shard: prepared.shards[0],
      progress: PROGRESS,
      epoch: 1,
      entries: part,
      nowMs: clock.nowMs(),
      budgetFields: 1000,
    });
    const outcomes = reply.outcomes.map((o) => (o.kind === 'refused' ? `refused ${o.reason}` : o.kind));
    return { applied: reply.applied, outcomes };
  }

  async function listing(board: string, segment?: string): Promise<Array<[string, number]>> {
    const top = await graph.ranking.top(board, 'hour', 0, 100, segment ? { segment } : {});
    return top.items.map((row) => [row.item, row.score]);
  }

  /** The same events as HTTP increments, one by one; a refused one (SEGMENT_LIMIT) skipped. */
  async function increments(board: string, events: Event[]): Promise<void> {
    for (const { item, amount, segments } of events)
      await graph.ranking
        .increment(board, item, amount ?? 1, undefined, undefined, undefined, undefined, segments)
        .catch((error: unknown) => {
          if (!String(error).includes('segment limit')) throw error;
        });
  }

  it('counts a fresh part summed, the same part again not at all, an overlapping one from its new messages', async () => {
    await graph.ranking.putBoard({ name: 'a', windows: WINDOWS });
    const first = entries(
      ['x', 'y', 'x', 'z', 'x', 'y'].map((item, i) => ({ item, amount: i + 1 })),
      0,
    );
    const prepared = await graph.cache.get('a');
    const call = {
      board: prepared,
      shard: prepared.shards[0],
      progressKey: `${prepared.shards[0].keys.tag}:ingest:${PROGRESS}`,
      nowMs: T0,
      budgetFields: 1000,
      epoch: 1,
    };
    // The fast path takes the fresh part whole, summed into three groups...
    expect(groupsOf(first).groups).toHaveLength(3);
    expect(await functions.call(INGEST.functions.groups, { ...call, ...groupsOf(first) })).toEqual({
      draining: false,
      dueMs: expect.any(Number),
      applied: 6,
    });
    // ...and hands back one whose messages were applied already.
    expect(await functions.call(INGEST.functions.groups, { ...call, ...groupsOf(first) })).toBeUndefined();
    expect(await listing('a')).toEqual([
      ['x', 1 + 3 + 5],
      ['y', 2 + 6],
      ['z', 4],
    ]);

    expect(await ingest('a', first)).toEqual({ applied: 0, outcomes: Array(6).fill('skipped') });
    const overlapping = [...first.slice(3), ...entries([{ item: 'z', amount: 10 }, { item: 'w' }])];
    expect(await ingest('a', overlapping)).toEqual({
      applied: 2,
      outcomes: ['skipped', 'skipped', 'skipped', 'applied', 'applied'],
    });
    expect(await listing('a')).toEqual([
      ['z', 14],
      ['x', 9],
      ['y', 8],
      ['w', 1],
    ]);
  });

  it('ranks equal scores on a ties: first board as event-by-event increments do', async () => {
    for (const board of ['ingested', 'increments'])
      await graph.ranking.putBoard({ name: board, windows: WINDOWS, shards: 1, ties: 'first' });
    // x reaches 2 at the third event, y at the second, z at the fifth: y, x, z (a group per item
    // placed at its first event would answer x, y, z).
    const events: Event[] = [{ item: 'x' }, { item: 'y', amount: 2 }, { item: 'x' }, { item: 'z' }, { item: 'z' }];
    expect(await ingest('ingested', entries(events, 0))).toMatchObject({ applied: 5 });
    await increments('increments', events);
    expect(await listing('ingested')).toEqual([
      ['y', 2],
      ['x', 2],
      ['z', 2],
    ]);
    expect(await listing('ingested')).toEqual(await listing('increments'));
  });

  it('counts segments as increments with segments do, refusing a new one past segments.max', async () => {
    for (const board of ['ingested', 'increments'])
      await graph.ranking.putBoard({ name: board, windows: WINDOWS, shards: 1, segmentsMax: 2 });
    const fresh: Event[] = [
      { item: 'x', segments: ['en'] },
      { item: 'y', amount: 2, segments: ['en', 'us'] },
      { item: 'x', amount: 3 },
      { item: 'x', segments: ['en'] },
    ];
    expect(await ingest('ingested', entries(fresh, 0))).toEqual({ applied: 4, outcomes: Array(4).fill('applied') });
    clock.advanceMs(60_000);
    const later: Event[] = [
      { item: 'z', segments: ['us'] },
      { item: 'z', segments: ['fr'] }, // a third live segment: SEGMENT_LIMIT
      { item: 'y', segments: ['en', 'fr'] }, // so is this one
      { item: 'x', amount: 2, segments: ['us', 'en'] },
    ];
    expect(await ingest('ingested', entries(later))).toEqual({
      applied: 2,
      outcomes: ['applied', 'refused SEGMENT_LIMIT', 'refused SEGMENT_LIMIT', 'applied'],
    });
    clock.setMs(T0);
    await increments('increments', fresh);
    clock.advanceMs(60_000);
    await increments('increments', later);
    for (const segment of [undefined, 'en', 'us', 'fr'])
      expect([segment, await listing('ingested', segment)]).toEqual([segment, await listing('increments', segment)]);
    expect(await listing('ingested', 'en')).toEqual([
      ['x', 4],
      ['y', 2],
    ]);
  });

  describe('with actors', () => {
    const commands = new WriteCommands(clock);
    const VIEWS = [{ name: 'people', mode: 'unique' as const, window: 'hour' }];
    const BOARDS = ['grouped', 'entrywise', 'increments'];
    // u1 three times on x in one second (one contribution of three events, two of them alike), u2 on x
    // and y, no one on x; a second later u3 on y, u1 taking 2 back from x and adding to z.
    const FIRST: Event[] = [
      { item: 'x', actor: 'u1' },
      { item: 'x', amount: 2, actor: 'u1', segments: ['en'] },
      { item: 'x', amount: 5 },
      { item: 'y', amount: 3, actor: 'u2', segments: ['en', 'us'] },
      { item: 'x', actor: 'u2' },
      { item: 'x', amount: 4, segments: ['en'] },
      { item: 'x', actor: 'u1' },
    ];
    const LATER: Event[] = [
      { item: 'y', actor: 'u3', segments: ['us'] },
      { item: 'x', amount: -2, actor: 'u1' },
      { item: 'z', amount: 7, actor: 'u1' },
    ];

    beforeEach(async () => {
      for (const board of BOARDS)
        await graph.ranking.putBoard({
          name: board,
          windows: WINDOWS,
          shards: 1,
          views: VIEWS,
          segmentsMax: 4,
          actors: true,
        });
    });

    /** The part through ingest_apply itself (the general path), whatever the fast path would do. */
    async function applyEntrywise(board: string, part: IngestEntry[]): Promise<number> {
      const prepared = await graph.cache.get(board);
      const reply = await functions.call(INGEST.functions.apply, {
        board: prepared,
        shard: prepared.shards[0],
        progressKey: `${prepared.shards[0].keys.tag}:ingest:${PROGRESS}`,
        nowMs: clock.nowMs(),
        budgetFields: 1000,
        epoch: 1,
        entries: part,
      });
      return reply.applied;
    }

    async function incrementsWithActors(board: string, events: Event[]): Promise<void> {
      for (const { item, amount, segments, actor } of events)
        await graph.ranking.increment(commands.increment({ board, item, amount: amount ?? 1, segments, actor }));
    }

    /** Every listing of the board: its window, its unique view, its segments' windows and unique views. */
    async function everything(board: string): Promise<unknown> {
      const read = async (window: string, segment?: string) =>
        (await graph.ranking.top(board, window, 0, 100, segment ? { segment } : {})).items.map((row) => [
          row.item,
          row.score,
        ]);
      return {
        hour: await read('hour'),
        people: await read('people'),
        en: [await read('hour', 'en'), await read('people', 'en')],
        us: [await read('hour', 'us'), await read('people', 'us')],
      };
    }

    it("keeps an actor's share as increments with that actor do, in both functions, a redelivered part once", async () => {
      const first = entries(FIRST, 0);
      expect(groupsOf(first).groups.filter((group) => group.actor)).toHaveLength(5);
      expect(await ingest('grouped', first)).toMatchObject({ applied: 7 });
      expect(await applyEntrywise('entrywise', first)).toBe(7);
      clock.advanceMs(1000);
      const later = entries(LATER);
      expect(await ingest('grouped', later)).toMatchObject({ applied: 3 });
      expect(await applyEntrywise('entrywise', later)).toBe(3);
      clock.setMs(T0);
      await incrementsWithActors('increments', FIRST);
      clock.advanceMs(1000);
      await incrementsWithActors('increments', LATER);

      const expected = await everything('increments');
      expect(expected).toEqual({
        hour: [
          ['x', 12],
          ['z', 7],
          ['y', 4],
        ],
        people: [
          ['y', 2],
          ['x', 2],
          ['z', 1],
        ],
        en: [
          [
            ['x', 6],
            ['y', 3],
          ],
          [
            ['y', 1],
            ['x', 1],
          ],
        ],
        us: [[['y', 4]], [['y', 2]]],
      });
      // Redelivered (a consumer that crashed before its acknowledgement): counted once.
      expect(await ingest('grouped', [...first, ...later])).toEqual({
        applied: 0,
        outcomes: Array(10).fill('skipped'),
      });
      expect(await applyEntrywise('entrywise', [...first, ...later])).toBe(0);
      for (const board of ['grouped', 'entrywise']) expect([board, await everything(board)]).toEqual([board, expected]);

      // A retraction of u1 finds the same contributions, event by event, on every board.
      for (const board of BOARDS) {
        const started = (await graph.retractions.start(board, { kind: 'actor', id: 'u1' })).body;
        await graph.retractions.settled(board, started.id);
        const done = await graph.retractions.get(board, started.id);
        expect([board, done]).toMatchObject([board, { state: 'done', events: 5, amount: 1 + 2 + 1 - 2 + 7 }]);
      }
      const retracted = await everything('increments');
      expect(retracted).toMatchObject({
        hour: [
          ['x', 10],
          ['y', 4],
        ],
        people: [
          ['y', 2],
          ['x', 1],
        ],
      });
      for (const board of ['grouped', 'entrywise'])
        expect([board, await everything(board)]).toEqual([board, retracted]);
    });

    it('dead-letters the events of a blocked actor or item (RETRACTED), applying the later ones', async () => {
      for (const kind of ['actor', 'item'] as const)
        await graph.retractions.start('grouped', { kind, id: kind === 'actor' ? 'spam' : 'bad' }, 3600);
      const until = T0 + 3_600_000;
      const part = entries(
        [{ item: 'x', actor: 'u1' }, { item: 'x', actor: 'spam' }, { item: 'bad' }, { item: 'y', actor: 'u2' }],
        0,
      );
      expect(await ingest('grouped', part)).toEqual({
        applied: 2,
        outcomes: ['applied', `refused RETRACTED actor ${until}`, `refused RETRACTED item ${until}`, 'applied'],
      });
      // Redelivered: the refusals are remembered for their dead letters, nothing counted twice.
      expect(await ingest('grouped', part)).toEqual({
        applied: 0,
        outcomes: ['skipped', `refused RETRACTED actor ${until}`, `refused RETRACTED item ${until}`, 'skipped'],
      });
      expect(await listing('grouped')).toEqual([
        ['y', 1],
        ['x', 1],
      ]);
      // Once the block ends, the same actor counts again.
      clock.advanceMs(3_600_001);
      expect(await ingest('grouped', entries([{ item: 'x', actor: 'spam' }]))).toMatchObject({ applied: 1 });
    });
  });
});
