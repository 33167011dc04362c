import fc from 'fast-check';
import { WriteCommands } from '../../src/ranking/writes/write-commands';
import { FakeClock } from '../../harness/clock';
import { actorEntry, clockSteps, moveClock, startTimesMs } from '../support/ranking-ops';
import { putActorBoard, useRankingGraph } from '../support/ranking-graph';
import { shardsOn, TOPOLOGIES, type Topology } from '../../harness/redis';
import { ActorCapsModel, ModelEntry } from '../support/actor-caps-model';

const WINDOWS = [
  { name: 'short', periodSec: 30, intervalSec: 10 },
  { name: 'long', periodSec: 120, intervalSec: 40 },
];
const VIEWS = [{ name: 'people', mode: 'unique', window: 'long' }];
const ITEMS = ['a', 'b', 'é'];
const ACTORS = ['ann', 'bob', 'd:e'];
const SEGMENTS = ['en', 'fr'];
const PASS = { leaseMs: 30_000, claimBatch: 100 };

type Op =
  | { kind: 'inc'; entry: ModelEntry; retried: boolean }
  | { kind: 'together'; entries: ModelEntry[] }
  | { kind: 'batch'; entries: ModelEntry[] }
  | { kind: 'weigh'; actor: string; weight: number }
  | { kind: 'retract'; target: 'actor' | 'item'; id: string }
  | { kind: 'advance'; ms: number }
  | { kind: 'toBoundary'; intervalSec: number; offsetMs: number }
  | { kind: 'expire' };

const entry = actorEntry(ITEMS, ACTORS, SEGMENTS);
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('inc' as const), entry, retried: fc.boolean() }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('together' as const),
      // Requests in flight together have no order: positive amounts, whose capped sum is the same in any.
      entries: fc.array(
        entry.map((e) => ({ ...e, amount: Math.abs(e.amount) })),
        { minLength: 2, maxLength: 4 },
      ),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('batch' as const),
      entries: fc.array(entry, { minLength: 1, maxLength: 5 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('weigh' as const),
      actor: fc.constantFrom(...ACTORS),
      weight: fc.constantFrom(0, 1, 2, 3),
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

// An actor's negative amount, then more than the cap in a later slot: once the negative's slot leaves
// the short window, the pair would hold more than the cap had the cap been held against the net sum.
const NEGATIVE_FIRST: Op[] = [
  { kind: 'inc', entry: { item: 'b', amount: -1, actor: 'ann' }, retried: false },
  { kind: 'advance', ms: 10_000 },
  {
    kind: 'together',
    entries: [
      { item: 'b', amount: 5, actor: 'ann' },
      { item: 'a', amount: 1 },
    ],
  },
  { kind: 'toBoundary', intervalSec: 40, offsetMs: -1 },
];

// A capped contribution lowered in its slot, then its actor given the weight it has: nothing is counted again.
const SAME_WEIGHT: Op[] = [
  {
    kind: 'together',
    entries: [
      { item: 'é', amount: 5, actor: 'bob' },
      { item: 'a', amount: 1 },
    ],
  },
  { kind: 'batch', entries: [{ item: 'é', amount: -1, actor: 'bob' }] },
  { kind: 'weigh', actor: 'bob', weight: 1 },
];

/** The cases whose shard count is one of SHARD_CELLS' on `topology`. */
const onCells = (topology: Topology, cases: Array<[1 | 3, number | undefined]>) =>
  cases.filter(([shards]) => shardsOn(topology).includes(shards));

describe.each(TOPOLOGIES)(
  'actor weights and caps against a model keeping every contribution (property, %s)',
  (topology) => {
    const clock = new FakeClock(0);
    const commands = new WriteCommands(clock);
    const world = useRankingGraph(topology, clock);
    let board = 0;
    let keyed = 0;
    const seen = { capped: 0, reweighted: 0 };

    afterAll(() => {
      // Not vacuous: caps cut contributions, and re-weightings counted live events again.
      expect(seen.capped).toBeGreaterThan(0);
      expect(seen.reweighted).toBeGreaterThan(0);
    });

    it.each(
      onCells(topology, [
        [1, 4],
        [3, 5],
        [1, undefined],
      ]),
    )(
      'every window, unique view and segment reads as the model, under retries, coalescing, retraction, expiry and re-weighting (%i shards, cap %s)',
      async (shards, cap) => {
        const shape = { windows: WINDOWS, shards, views: VIEWS, segmentsMax: SEGMENTS.length, capPerItem: cap ?? 0 };
        const examples: Array<[number, Op[]]> = [
          [1_600_000_000_000, NEGATIVE_FIRST],
          [1_600_000_000_000, SAME_WEIGHT],
        ];
        await world.assertOverBoards(
          shape,
          fc.array(op, { minLength: 1, maxLength: 25 }),
          { numRuns: 20, examples },
          async (name, ops) => {
            const model = new ActorCapsModel(WINDOWS, cap);
            for (const step of ops) {
              await apply(name, model, step);
              await compare(name, model, cap);
            }
          },
        );
      },
    );

    it.each(
      onCells(topology, [
        [1, undefined],
        [3, undefined],
        [1, 4],
        [3, 5],
      ]),
    )(
      'a re-weighted actor reads as having written with that weight from the start (%i shards, cap %s)',
      async (shards, cap) => {
        const writes = op.filter((step) =>
          ['inc', 'together', 'batch', 'advance', 'toBoundary', 'expire'].includes(step.kind),
        );
        await fc.assert(
          fc.asyncProperty(
            startTimesMs,
            fc.array(writes, { minLength: 1, maxLength: 20 }),
            fc.nat(),
            fc.constantFrom(...ACTORS),
            fc.constantFrom(0, 2, 5),
            async (startMs, ops, at, actor, weight) => {
              clock.setMs(startMs);
              const [late, early] = [`r${board++}`, `r${board++}`];
              for (const name of [late, early])
                await putActorBoard(world.graph, name, {
                  ...{ windows: WINDOWS, shards, views: VIEWS, segmentsMax: 2 },
                  capPerItem: cap ?? 0,
                });
              await world.graph.actorWeights.put(early, actor, weight);
              const model = new ActorCapsModel(WINDOWS, cap);
              for (const [i, step] of ops.entries()) {
                if (i === at % ops.length) {
                  await world.graph.actorWeights.put(late, actor, weight);
                  await world.graph.actorWeights.settled(late, actor);
                }
                // A clock step or an expiry pass once, for both boards; a write to each.
                const boards = ['inc', 'together', 'batch'].includes(step.kind) ? [late, early] : [late];
                for (const name of boards) await apply(name, model, step);
              }
              await world.graph.actorWeights.settled(late, actor);
              for (const segment of [undefined, ...SEGMENTS]) {
                for (const source of [...WINDOWS.map((w) => w.name), 'people']) {
                  const [a, b] = await Promise.all(
                    [late, early].map((name) => world.top(name, source, 0, 1000, { segment })),
                  );
                  expect({ source, segment, rows: a.items }).toEqual({ source, segment, rows: b.items });
                }
              }
              await Promise.all([late, early].map((name) => world.graph.ranking.deleteBoard(name)));
            },
          ),
          { numRuns: 15 },
        );
      },
    );

    async function apply(name: string, model: ActorCapsModel, step: Op): Promise<void> {
      const nowMs = clock.nowMs();
      if (step.kind === 'inc') {
        const idemKey = `k${keyed++}`;
        const command = () => commands.increment({ board: name, ...step.entry }, { idemKey });
        await world.graph.ranking.increment(command());
        // A retry of the same request (same key): a replay, counted once.
        if (step.retried) await world.graph.ranking.increment(command());
        model.write(nowMs, [step.entry]);
      } else if (step.kind === 'together') {
        // Started in one turn: one shard's requests share a call.
        await Promise.all(
          step.entries.map((e) => world.graph.ranking.increment(commands.increment({ board: name, ...e }))),
        );
        model.write(nowMs, step.entries);
      } else if (step.kind === 'batch') {
        await world.graph.ranking.incrementBatch(commands.batch({ board: name, entries: step.entries }));
        model.write(nowMs, step.entries);
      } else if (step.kind === 'weigh') {
        const events = model.reweight(nowMs, step.actor, step.weight, 'long');
        await world.graph.actorWeights.put(name, step.actor, step.weight);
        await world.graph.actorWeights.settled(name, step.actor);
        const done = await world.graph.actorWeights.get(name, step.actor);
        expect(done).toEqual({ actor: step.actor, weight: step.weight, state: 'done', events: expect.any(Number) });
        seen.reweighted += events;
      } else if (step.kind === 'retract') {
        const expected = model.retract(nowMs, step.target, step.id, 'long');
        const started = (await world.graph.retractions.start(name, { kind: step.target, id: step.id })).body;
        await world.graph.retractions.settled(name, started.id);
        expect(await world.graph.retractions.get(name, started.id)).toMatchObject({ state: 'done', ...expected });
      } else if (step.kind === 'expire') await world.graph.ranking.expireDue(PASS);
      else moveClock(clock, step);
    }

    async function compare(name: string, model: ActorCapsModel, cap: number | undefined): Promise<void> {
      const nowMs = clock.nowMs();
      for (const segment of [undefined, ...SEGMENTS]) {
        for (const source of [...WINDOWS.map((w) => w.name), 'people']) {
          const top = await world.top(name, source, 0, 1000, { segment });
          const rows =
            source === 'people' ? model.listing('long', nowMs, segment, true) : model.listing(source, nowMs, segment);
          expect({ source, segment, rows: top.items.map(({ rank, item, score }) => ({ rank, item, score })) }).toEqual({
            source,
            segment,
            rows,
          });
        }
      }
      if (cap !== undefined) {
        const most = model.mostHeld(nowMs);
        expect(most).toBeLessThanOrEqual(cap);
        if (most === cap) seen.capped++;
      }
    }
  },
);
