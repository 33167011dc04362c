import { FakeClock } from '../support/clock';
import { startTestRedis, TestRedis } from '../support/redis';
import { validateConfig } from '../../src/common/config';
import { createRankingGraph, RankingGraph } from '../../src/ranking/ranking.factory';
import { RedisService } from '../../src/redis/redis.service';
import { RedisFunctions } from '../../src/redis/redis-functions';
import { RedisSettings } from '../../src/redis/redis.settings';
import { INGEST, IngestEntry } from '../../src/ingest/ingest.functions';
import { groupsOf } from '../../src/ingest/ingest-groups';
import { IngestStore } from '../../src/ingest/ingest.store';

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
    graph = createRankingGraph(redisService, functions, config, clock);
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

  type Event = { item: string; amount?: number; segments?: string[] };
  const entries = (events: Event[], firstSeq?: number): IngestEntry[] => {
    seq = firstSeq ?? seq;
    return events.map(({ item, amount, segments }) => ({
      id: `${++seq}-0`,
      item,
      amount: amount ?? 1,
      atMs: clock.nowMs(),
      ...(segments ? { segments } : {}),
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
});
