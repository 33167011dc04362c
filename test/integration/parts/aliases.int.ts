import { AppConfig } from '../../../src/common/config';
import { ConflictError, InvalidInputError } from '../../../src/common/errors';
import { AliasesStore } from '../../../src/ranking/aliases/aliases.store';
import { WriteCommands } from '../../../src/ranking/writes/write-commands';
import { RedisFunctions } from '../../../src/redis/redis-functions';
import { RedisService } from '../../../src/redis/redis.service';
import { composeRanking, RankingGraph } from '../../../harness/compose-ranking';
import { FakeClock } from '../../../harness/clock';
import { putActorBoard, useRankingGraph } from '../../support/ranking-graph';

const WINDOWS = [
  { name: 'short', periodSec: 60, intervalSec: 10 },
  { name: 'long', periodSec: 600, intervalSec: 60 },
];

describe('aliases: a second instance, reads, refusals, a merge resumed after a stop (single node)', () => {
  const clock = new FakeClock(1_700_000_000_000);
  const commands = new WriteCommands(clock);
  const world = useRankingGraph('single', clock);
  let other: RankingGraph;

  beforeAll(async () => {
    const redis = world.graph.module.get(RedisService);
    other = await composeRanking(redis, new RedisFunctions(redis), world.graph.module.get(AppConfig), clock);
  });
  afterAll(() => other.aliases.onApplicationShutdown());

  const inc = (graph: RankingGraph, board: string, item: string, amount: number, actor?: string) =>
    graph.ranking.increment(commands.increment({ board, item, amount, actor }));
  const raw = () => world.graph.module.get(RedisService).client;
  const rows = async (board: string, window: string) =>
    (await world.graph.ranking.top(board, window, 0, 100)).items.map(({ item, score }) => ({ item, score }));

  it("an instance whose map misses a new alias writes its events to the canonical item (the alias's block refuses them, the map is read again)", async () => {
    await putActorBoard(world.graph, 'stale', { windows: WINDOWS, shards: 3 });
    await inc(other, 'stale', 'A', 2);
    await inc(other, 'stale', 'a', 1);
    await world.graph.aliases.put('stale', 'A', 'a');
    await world.graph.aliases.settled('stale', 'A');
    // The other instance read the map less than a second ago: it still knows no alias.
    const written = await inc(other, 'stale', 'A', 4);
    expect(written.body.item).toBe('a');
    expect(await rows('stale', 'long')).toEqual([{ item: 'a', score: 7 }]);
    const read = await world.graph.ranking.item('stale', 'long', 'A');
    expect(read).toMatchObject({ item: 'a', score: 7, rank: 1, canonical: 'a', aliases: ['A'] });
    // The canonical item's read lists its spellings too; an item without any names none.
    await world.graph.aliases.put('stale', 'a-post', 'a');
    await world.graph.aliases.settled('stale', 'a-post');
    expect((await world.graph.ranking.item('stale', 'long', 'a')).aliases).toEqual(['A', 'a-post']);
    expect(await world.graph.ranking.item('stale', 'long', 'b')).not.toHaveProperty('aliases');
  });

  it("a batch over shards from such an instance writes the alias's entry to its item and every other entry once", async () => {
    await putActorBoard(world.graph, 'stale-batch', { windows: WINDOWS, shards: 3 });
    const items = Array.from({ length: 12 }, (_, i) => `item-${i}`);
    await inc(other, 'stale-batch', 'B', 1);
    await world.graph.aliases.put('stale-batch', 'B', 'item-0');
    await world.graph.aliases.settled('stale-batch', 'B');
    const entries = [...items, 'B'].map((item) => ({ item, amount: 1 }));
    const written = await other.ranking.incrementBatch(commands.batch({ board: 'stale-batch', entries }));
    expect(written.body.count).toBe(13);
    const scores = new Map((await rows('stale-batch', 'long')).map(({ item, score }) => [item, score]));
    expect(Object.fromEntries(scores)).toEqual({
      ...Object.fromEntries(items.map((item) => [item, 1])),
      'item-0': 3,
    });
  });

  it.each([1, 3])(
    "on a capped board the merged contributions respect capPerItem, the canonical item's own counted first (%i shards)",
    async (shards) => {
      const name = `capped${shards}`;
      await putActorBoard(world.graph, name, { windows: WINDOWS, shards, capPerItem: 5 });
      await inc(world.graph, name, 'a', 4, 'ann');
      clock.advanceMs(20_000);
      await inc(world.graph, name, 'A', 4, 'ann');
      await inc(world.graph, name, 'A', 3, 'bob');
      await inc(world.graph, name, 'A', 2);
      await world.graph.aliases.put(name, 'A', 'a');
      await world.graph.aliases.settled(name, 'A');
      // ann: 4 of her own to a, then 1 of the 4 merged (the cap); bob's 3 and the 2 of no actor in full.
      const capped = [{ item: 'a', score: 5 + 3 + 2 }];
      expect(await rows(name, 'long')).toEqual(capped);
      expect(await rows(name, 'short')).toEqual(capped);
      // Later events of ann's (naming the alias) stay within the cap: the merge moved her held sum too.
      await inc(world.graph, name, 'A', 3, 'ann');
      expect(await rows(name, 'long')).toEqual(capped);
    },
  );

  it('refuses an alias of itself, a second canonical item, a chain; an alias named as canonical stands for its own item', async () => {
    await putActorBoard(world.graph, 'rules', { windows: WINDOWS });
    await expect(world.graph.aliases.put('rules', 'x', 'x')).rejects.toBeInstanceOf(InvalidInputError);
    const first = await world.graph.aliases.put('rules', 'x', 'y');
    const again = await world.graph.aliases.put('rules', 'x', 'y');
    expect(again.body.id).toBe(first.body.id);
    await expect(world.graph.aliases.put('rules', 'x', 'z')).rejects.toMatchObject({ code: 'ALIAS_CONFLICT' });
    await expect(world.graph.aliases.put('rules', 'y', 'w')).rejects.toBeInstanceOf(ConflictError);
    expect((await world.graph.aliases.put('rules', 'z', 'x')).body).toMatchObject({ alias: 'z', item: 'y' });
    await world.graph.aliases.settled('rules', 'x');
    await world.graph.aliases.settled('rules', 'z');
  });

  it('a merge stopped between a take and its give, on another shard than its item, ends exact once resumed', async () => {
    await putActorBoard(world.graph, 'resume', { windows: WINDOWS, shards: 3 });
    for (let n = 0; n < 60; n++) {
      await inc(world.graph, 'resume', 'A', 1, `u${n}`);
      await inc(world.graph, 'resume', 'a', 2, `u${n % 7}`);
      clock.advanceMs(5_000);
    }
    const before = await world.graph.ranking.item('resume', 'long', 'a');
    const alias = await world.graph.ranking.item('resume', 'long', 'A');
    await other.aliases.put('resume', 'A', 'a');
    await other.aliases.onApplicationShutdown();
    // A take whose give never ran: its chunk is out of the alias and not yet in the item.
    const board = await other.cache.get('resume');
    const named = (await other.module.get(AliasesStore).lookup(board, 'A'))!;
    const take = { mode: 'take' as const, alias: 'A', item: 'a', run: named.run, most: 32, fresh: true, here: false };
    await other.module.get(AliasesStore).step(board, { ...take, acked: 0, seq: 0, chunk: '', nowMs: clock.nowMs() });
    expect((await world.graph.aliases.get('resume', 'A')).state).toBe('running');
    await world.graph.aliases.settled('resume', 'A');
    expect(await world.graph.aliases.get('resume', 'A')).toMatchObject({ state: 'done', item: 'a' });
    const after = await world.graph.ranking.item('resume', 'long', 'a');
    expect(after.score).toBe(before.score + alias.score);
    const people = await rows('resume', 'long');
    expect(people).toEqual([{ item: 'a', score: before.score + alias.score }]);
  });

  it("a give into another metric's window answers the slot it made on the canonical item's shard: the expiry is scheduled", async () => {
    const windows = WINDOWS.map((w) => ({ name: w.name, period: w.periodSec, interval: w.intervalSec }));
    await world.graph.ranking.putBoard({ name: 'due', windows, shards: 3, metrics: ['up', 'down'] });
    await world.graph.ranking.increment(commands.increment({ board: 'due', item: 'A', amount: 3, metric: 'down' }));
    const board = await world.graph.cache.get('due');
    expect(board.shardOf('A')).not.toBe(board.shardOf('a'));
    const store = world.graph.module.get(AliasesStore);
    const nowMs = clock.nowMs();
    const { run } = await store.put(board, { alias: 'A', item: 'a', run: 'r1', most: 10, nowMs });
    const step = { alias: 'A', item: 'a', run, most: 32, fresh: true, here: false, acked: 0, nowMs };
    const taken = await store.step(board, { ...step, mode: 'take', seq: 0, chunk: '' });
    const given = await store.step(board, { ...step, mode: 'give', seq: taken.seq, chunk: taken.chunk });
    // The short window's slot (10 s) of the event expires first: 60 s after its start.
    expect(given.dueMs).toBe((Math.floor(nowMs / 10_000) * 10 + 60) * 1000);
    await world.graph.ranking.deleteBoard('due');
  });

  it.each(['up', 'down'])(
    "a give drains every metric's expired slots on the canonical item's shard before it changes them (%s expired)",
    async (metric) => {
      const name = `drain-${metric}`;
      const windows = [{ name: 'short', period: 60, interval: 10 }];
      await world.graph.ranking.putBoard({ name, windows, shards: 3, metrics: ['up', 'down'] });
      const board = await world.graph.cache.get(name);
      const near = ['b', 'c', 'd', 'e', 'f', 'g', 'h', 'k'].filter((i) => board.shardOf(i) === board.shardOf('a'));
      expect([board.shardOf('A') === board.shardOf('a'), near.length >= 2]).toEqual([false, true]);
      // Three expired fields of `metric` (the board's own windows, or another metric's) on the canonical
      // item's shard: more than a call's drain (EXPIRE_CHUNK 2), so a give first answers it gave nothing yet.
      for (const item of ['a', ...near.slice(0, 2)])
        await world.graph.ranking.increment(commands.increment({ board: name, item, amount: 2, metric }));
      const expiredKeys = board.metric(metric).shardOf('a').keys;
      const [expired] = await raw().zrange(expiredKeys.slots('short'), 0, 0);
      clock.advanceMs(50_000);
      await world.graph.ranking.increment(commands.increment({ board: name, item: 'A', amount: 3, metric: 'down' }));
      clock.advanceMs(15_000);
      const store = world.graph.module.get(AliasesStore);
      const nowMs = clock.nowMs();
      const { run } = await store.put(board, { alias: 'A', item: 'a', run: 'r2', most: 10, nowMs });
      const step = { alias: 'A', item: 'a', run, most: 32, fresh: true, here: false, acked: 0, nowMs };
      const taken = await store.step(board, { ...step, mode: 'take', seq: 0, chunk: '' });
      const give = { ...step, mode: 'give' as const, seq: taken.seq, chunk: taken.chunk };
      const answers = [await store.step(board, give)];
      while (answers[answers.length - 1].seq === 0 && answers.length < 5) answers.push(await store.step(board, give));
      expect(answers.map((answer) => answer.seq)).toEqual([0, taken.seq]);
      // The raw state, as no read has drained it: the expired slot gone, the item holding the alias's 3 alone.
      expect(await raw().zrange(expiredKeys.slots('short'), 0, -1)).not.toContain(expired);
      const down = board.metric('down').shardOf('a').keys;
      expect(await raw().zscore(down.top('short'), 'a')).toBe('3');
      await world.graph.ranking.deleteBoard(name);
    },
  );
});
