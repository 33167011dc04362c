import fc from 'fast-check';
import { WriteCommands } from '../../src/ranking/writes/write-commands';
import { FakeClock } from '../../harness/clock';
import { actorEntry, clockSteps, moveClock } from '../support/ranking-ops';
import { useRankingGraph } from '../support/ranking-graph';
import { shardsOn, TOPOLOGIES } from '../../harness/redis';
import { FiltersService } from '../../src/ranking/filters/filters.service';
import { RedisService } from '../../src/redis/redis.service';
import { ActorCapsModel, ModelEntry, ModelRow } from '../support/actor-caps-model';

const WINDOWS = [
  { name: 'short', periodSec: 30, intervalSec: 10 },
  { name: 'long', periodSec: 120, intervalSec: 40 },
];
/** A unique, a hot and a decay view: `minActors` on a view counts the actors of the view's window. */
const VIEWS = [
  { name: 'people', mode: 'unique', window: 'long' },
  { name: 'hot', mode: 'hot', window: 'short' },
  { name: 'fading', mode: 'decay', window: 'long', halfLife: 30 },
];
const ITEMS = ['a', 'b', 'c', 'é'];
const ACTORS = ['ann', 'bob', 'd:e'];
/** Likers: their likes are events of their own (a like's user is its actor); never weighed nor retracted. */
const USERS = ['u1', 'u2'];
const SEGMENTS = ['en', 'fr'];
const PASS = { leaseMs: 30_000, claimBatch: 100 };
const FLOORS = [1, 2, 3];

type Op =
  | { kind: 'inc'; entry: ModelEntry }
  | { kind: 'batch'; entries: ModelEntry[] }
  | { kind: 'like'; item: string; user: string }
  | { kind: 'unlike'; item: string; user: string }
  | { kind: 'weigh'; actor: string; weight: number }
  | { kind: 'retract'; target: 'actor' | 'item'; id: string }
  | { kind: 'advance'; ms: number }
  | { kind: 'toBoundary'; intervalSec: number; offsetMs: number }
  | { kind: 'expire' };

const entry = actorEntry(ITEMS, ACTORS, SEGMENTS);
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('inc' as const), entry }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('batch' as const),
      entries: fc.array(entry, { minLength: 1, maxLength: 5 }),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constantFrom<'like' | 'unlike'>('like', 'unlike'),
      item: fc.constantFrom(...ITEMS),
      user: fc.constantFrom(...USERS),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('weigh' as const),
      actor: fc.constantFrom(...ACTORS),
      weight: fc.constantFrom(0, 1, 2),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.oneof(
      fc.record({
        kind: fc.constant('retract' as const),
        target: fc.constant('actor' as const),
        id: fc.constantFrom(...ACTORS),
      }),
      fc.record({
        kind: fc.constant('retract' as const),
        target: fc.constant('item' as const),
        id: fc.constantFrom(...ITEMS),
      }),
    ),
  },
  ...clockSteps(50_000, [10, 40]),
  { weight: 1, arbitrary: fc.constant({ kind: 'expire' as const }) },
);

/**
 * Always among the runs: three actors on `a`, two on `b`, one on `c` (each floor lists fewer rows, with
 * their board ranks); then an unlike, a retraction and the short window's expiry take actors away.
 */
const THREE_TWO_ONE: [number, Op[]] = [
  1_600_000_000_000,
  [
    {
      kind: 'batch',
      entries: [
        { item: 'c', amount: 9, actor: 'ann', segments: ['en'] },
        { item: 'b', amount: 3, actor: 'ann' },
        { item: 'b', amount: 2, actor: 'bob', segments: ['en'] },
        { item: 'a', amount: 1, actor: 'ann' },
        { item: 'a', amount: 1, actor: 'd:e', segments: ['en'] },
      ],
    },
    { kind: 'like', item: 'a', user: 'u1' },
    { kind: 'unlike', item: 'a', user: 'u1' },
    { kind: 'like', item: 'a', user: 'u2' },
    { kind: 'weigh', actor: 'ann', weight: 0 },
    { kind: 'retract', target: 'actor', id: 'bob' },
    { kind: 'toBoundary', intervalSec: 40, offsetMs: 0 },
    { kind: 'expire' },
  ],
];

/**
 * Always among the runs: a user who likes an item they already contribute to as an actor (one pair, two events
 * in one slot), then both windows' expiry: the item loses its only actor (the like must not count the pair anew).
 */
const LIKER_ALSO_ACTOR: [number, Op[]] = [
  1_600_000_000_000,
  [
    { kind: 'inc', entry: { item: 'a', amount: 2, actor: 'ann' } },
    { kind: 'like', item: 'a', user: 'ann' },
    { kind: 'advance', ms: 130_000 },
    { kind: 'expire' },
  ],
];

/** The oracle: ActorCapsModel (no cap) and the likes counted (a user's like of an item counts once while live). */
class MinActorsModel extends ActorCapsModel {
  private readonly likes = new Map<string, number>();

  like(nowMs: number, item: string, user: string): void {
    const key = `${item}\u001f${user}`;
    const earlier = this.likes.get(key);
    if (earlier !== undefined && this.holds(earlier, nowMs)) return;
    this.likes.set(key, nowMs);
    this.write(nowMs, [{ item, amount: 1, actor: user }]);
  }

  unlike(nowMs: number, item: string, user: string): void {
    const key = `${item}\u001f${user}`;
    const likedMs = this.likes.get(key);
    if (likedMs === undefined) return;
    this.likes.delete(key);
    this.takeBack(nowMs, likedMs, user, item);
  }

  /** An item retraction forgets its likes too. */
  forgetLikes(item: string): void {
    for (const key of [...this.likes.keys()]) if (key.startsWith(`${item}\u001f`)) this.likes.delete(key);
  }

  private holds(atMs: number, nowMs: number): boolean {
    return WINDOWS.some((w) => {
      const slot = (ms: number) => Math.floor(ms / 1000 / w.intervalSec) * w.intervalSec;
      return slot(atMs) > slot(nowMs) - w.periodSec;
    });
  }
}

describe.each(TOPOLOGIES)('minActors against a model keeping every contribution (property, %s)', (topology) => {
  const clock = new FakeClock(0);
  const commands = new WriteCommands(clock);
  const world = useRankingGraph(topology, clock);
  const seen = { thinned: 0, thinnedViews: 0 };

  afterAll(() => {
    // Not vacuous (certain with THREE_TWO_ONE): some floor listed rows and left out others.
    expect(seen.thinned).toBeGreaterThan(0);
    expect(seen.thinnedViews).toBeGreaterThan(0);
  });

  it.each(shardsOn(topology))(
    'top and POST .../query with minActors list what the model lists, with board ranks, under writes, likes, re-weighting, retraction and expiry (%i shards)',
    async (shards) => {
      await world.assertOverBoards(
        { windows: WINDOWS, shards, views: VIEWS, segmentsMax: SEGMENTS.length },
        fc.array(op, { minLength: 1, maxLength: 25 }),
        { numRuns: 20, examples: [THREE_TWO_ONE, LIKER_ALSO_ACTOR] },
        async (name, ops) => {
          const model = new MinActorsModel(WINDOWS, undefined);
          for (const step of ops) {
            await apply(name, model, step);
            await compare(name, model);
          }
        },
      );
    },
    180_000,
  );

  it('a window whose pairs predate the counts (an upgrade) is refused until its pairs are gone, then exact', async () => {
    const { ranking } = world.graph;
    const name = `up${topology}`;
    clock.setMs(1_600_000_000_000);
    await ranking.putBoard({
      name,
      windows: [{ name: 'w', period: 30, interval: 10 }],
      views: VIEWS.slice(0, 1).map((v) => ({ ...v, window: 'w' })),
      actors: true,
    } as never);
    await ranking.incrementBatch(commands.batch({ board: name, entries: [{ item: 'a', amount: 1, actor: 'ann' }] }));
    // As a version that kept no counts left it: the pairs without their mark and a's count.
    const board = await world.graph.cache.get(name);
    const pairsKey = board.shards[0].keys.slots('w').replace(/slots$/, 'pairs');
    await world.graph.module.get(RedisService).client.hdel(pairsKey, '\u001f', '\u001fa');
    const read = (window: string) => ranking.topFiltered(name, { window, limit: 10, minActors: 1 }, () => {});
    for (const window of ['w', 'people'])
      await expect(read(window)).rejects.toMatchObject({ code: 'ACTOR_COUNTS_PENDING' });
    // A later actor is counted, yet the window stays refused while the old pair lives.
    clock.advanceMs(10_000);
    await ranking.incrementBatch(commands.batch({ board: name, entries: [{ item: 'a', amount: 1, actor: 'bob' }] }));
    await expect(read('w')).rejects.toMatchObject({ code: 'ACTOR_COUNTS_PENDING' });
    // Every pair gone (the read drains them first): a new pair marks the hash again, and the counts hold every pair.
    clock.advanceMs(40_000);
    expect((await read('w')).items).toEqual([]);
    await ranking.incrementBatch(commands.batch({ board: name, entries: [{ item: 'b', amount: 2, actor: 'cy' }] }));
    expect((await read('w')).items.map(({ item, rank }) => [item, rank])).toEqual([['b', 1]]);
    await ranking.deleteBoard(name);
  });

  async function apply(name: string, model: MinActorsModel, step: Op): Promise<void> {
    const nowMs = clock.nowMs();
    const { ranking, actorWeights, retractions } = world.graph;
    if (step.kind === 'inc') {
      await ranking.increment(commands.increment({ board: name, ...step.entry }));
      model.write(nowMs, [step.entry]);
    } else if (step.kind === 'batch') {
      await ranking.incrementBatch(commands.batch({ board: name, entries: step.entries }));
      model.write(nowMs, step.entries);
    } else if (step.kind === 'like') {
      await ranking.like(commands.like({ board: name, item: step.item, userId: step.user }));
      model.like(nowMs, step.item, step.user);
    } else if (step.kind === 'unlike') {
      await ranking.like(commands.unlike({ board: name, item: step.item, userId: step.user }));
      model.unlike(nowMs, step.item, step.user);
    } else if (step.kind === 'weigh') {
      model.reweight(nowMs, step.actor, step.weight, 'long');
      await actorWeights.put(name, step.actor, step.weight);
      await actorWeights.settled(name, step.actor);
    } else if (step.kind === 'retract') {
      model.retract(nowMs, step.target, step.id, 'long');
      if (step.target === 'item') model.forgetLikes(step.id);
      const started = (await retractions.start(name, { kind: step.target, id: step.id })).body;
      await retractions.settled(name, started.id);
    } else if (step.kind === 'expire') await ranking.expireDue(PASS);
    else moveClock(clock, step);
  }

  /** Each view read with minActors lists the view's own rows whose items have that many actors in its window. */
  async function compareViews(name: string, model: MinActorsModel): Promise<void> {
    const nowMs = clock.nowMs();
    const rows = (page: { items: ModelRow[] }) => page.items.map(({ rank, item, score }) => ({ rank, item, score }));
    for (const view of VIEWS) {
      const actors = new Map(model.listing(view.window, nowMs, undefined, true).map((row) => [row.item, row.score]));
      const all = rows(await world.top(name, view.name, 0, 1000));
      for (const minActors of FLOORS) {
        const want = all.filter((row) => (actors.get(row.item) ?? 0) >= minActors);
        if (want.length > 0 && want.length < all.length) seen.thinnedViews++;
        const read = await world.graph.ranking.topFiltered(name, { window: view.name, limit: 20, minActors }, () => {});
        expect({ view: view.name, minActors, truncated: read.truncated, rows: rows(read) }).toEqual({
          view: view.name,
          minActors,
          truncated: false,
          rows: want,
        });
      }
    }
  }

  async function compare(name: string, model: MinActorsModel): Promise<void> {
    const nowMs = clock.nowMs();
    const rows = (page: { items: ModelRow[] }) => page.items.map(({ rank, item, score }) => ({ rank, item, score }));
    for (const window of WINDOWS.map((w) => w.name)) {
      for (const minActors of FLOORS) {
        const want = model.withActors(window, nowMs, minActors);
        if (want.length > 0 && want.length < model.listing(window, nowMs).length) seen.thinned++;
        const top = await world.graph.ranking.topFiltered(name, { window, limit: 20, minActors }, () => undefined);
        expect({ window, minActors, truncated: top.truncated, rows: rows(top) }).toEqual({
          window,
          minActors,
          truncated: false,
          rows: want,
        });
        const page = await world.graph.ranking.topFiltered(name, { window, offset: 1, limit: 1, minActors }, () => {});
        expect({ window, minActors, rows: rows(page) }).toEqual({ window, minActors, rows: want.slice(1, 2) });
      }
      await compareViews(name, model);
      // A segment's window counts the actors of the segment's events only.
      const segment = SEGMENTS[0];
      const read = await world.graph.module
        .get(FiltersService)
        .read({ board: name, window, segment, offset: 0, limit: 20, minActors: 2 });
      expect({ window, segment, rows: rows(read) }).toEqual({
        window,
        segment,
        rows: model.withActors(window, nowMs, 2, segment),
      });
    }
  }
});
