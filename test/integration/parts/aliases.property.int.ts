import fc from 'fast-check';
import { WriteCommands } from '../../../src/ranking/writes/write-commands';
import { FakeClock } from '../../../harness/clock';
import { shardsOn, TOPOLOGIES } from '../../../harness/redis';
import { ActorCapsModel, ModelEntry } from '../../support/actor-caps-model';
import { actorEntry, clockSteps, moveClock, startTimesMs } from '../../support/ranking-ops';
import { putActorBoard, useRankingGraph } from '../../support/ranking-graph';

const WINDOWS = [
  { name: 'short', periodSec: 30, intervalSec: 10 },
  { name: 'long', periodSec: 120, intervalSec: 40 },
];
const VIEWS = [{ name: 'people', mode: 'unique', window: 'long' }];
const ITEMS = ['a', 'b', 'é'];
/** Spellings of an item: on 3 shards some live on another shard than the items they will name. */
const ALIASES = ['A', 'post-a', 'É'];
const ACTORS = ['ann', 'bob', 'd:e'];
const SEGMENTS = ['en', 'fr'];
const PASS = { leaseMs: 30_000, claimBatch: 100 };

type Op =
  | { kind: 'inc'; entry: ModelEntry }
  | { kind: 'batch'; entries: ModelEntry[] }
  | { kind: 'advance'; ms: number }
  | { kind: 'toBoundary'; intervalSec: number; offsetMs: number }
  | { kind: 'expire' };

const entry = actorEntry([...ITEMS, ...ALIASES], ACTORS, SEGMENTS);
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('inc' as const), entry }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('batch' as const),
      entries: fc.array(entry, { minLength: 1, maxLength: 5 }),
    }),
  },
  ...clockSteps(50_000, [10, 40]),
  { weight: 1, arbitrary: fc.constant({ kind: 'expire' as const }) },
);

/** Which spelling names which item, and when (the op's index) each alias is named. */
const naming = fc.record({
  canonical: fc.tuple(...ALIASES.map(() => fc.constantFrom(...ITEMS))),
  at: fc.tuple(...ALIASES.map(() => fc.nat())),
});

describe.each(TOPOLOGIES)(
  'aliases against a model where every event named the canonical item (property, %s)',
  (topology) => {
    const clock = new FakeClock(0);
    const commands = new WriteCommands(clock);
    const world = useRankingGraph(topology, clock);
    let board = 0;
    const seen = { moved: 0 };

    afterAll(() => {
      // Not vacuous: merges moved live counts of aliases.
      expect(seen.moved).toBeGreaterThan(0);
    });

    it.each(shardsOn(topology))(
      'every window, unique view and segment reads as if each alias had named its item from the start (%i shards)',
      async (shards) => {
        await fc.assert(
          fc.asyncProperty(
            startTimesMs,
            fc.array(op, { minLength: 1, maxLength: 25 }),
            naming,
            async (startMs, ops, named) => {
              clock.setMs(startMs);
              const name = `al${board++}`;
              await putActorBoard(world.graph, name, { windows: WINDOWS, shards, views: VIEWS, segmentsMax: 2 });
              const itemOf = new Map(ALIASES.map((alias, i) => [alias, named.canonical[i]]));
              const canonical = (e: ModelEntry) => ({ ...e, item: itemOf.get(e.item) ?? e.item });
              const model = new ActorCapsModel(WINDOWS, undefined);
              const namedAt = ALIASES.map((alias, i) => [alias, named.at[i] % (ops.length + 1)] as const);
              for (const [i, step] of [...ops, undefined].entries()) {
                for (const [alias, at] of namedAt) if (at === i) await nameAlias(name, alias, itemOf.get(alias)!);
                if (namedAt.every(([, at]) => at <= i)) await compare(name, model);
                if (step) await apply(name, model, step, canonical);
              }
              await world.graph.ranking.deleteBoard(name);
            },
          ),
          { numRuns: 15 },
        );
      },
    );

    async function nameAlias(name: string, alias: string, item: string): Promise<void> {
      const put = await world.graph.aliases.put(name, alias, item);
      expect(put.body).toMatchObject({ alias, item, id: expect.any(String) });
      await world.graph.aliases.settled(name, alias);
      const done = await world.graph.aliases.get(name, alias);
      expect(done).toMatchObject({ alias, item, state: 'done' });
      seen.moved += done.entries;
    }

    async function apply(name: string, model: ActorCapsModel, step: Op, canonical: (e: ModelEntry) => ModelEntry) {
      const nowMs = clock.nowMs();
      if (step.kind === 'inc') {
        await world.graph.ranking.increment(commands.increment({ board: name, ...step.entry }));
        model.write(nowMs, [canonical(step.entry)]);
      } else if (step.kind === 'batch') {
        await world.graph.ranking.incrementBatch(commands.batch({ board: name, entries: step.entries }));
        model.write(nowMs, step.entries.map(canonical));
      } else if (step.kind === 'expire') await world.graph.ranking.expireDue(PASS);
      else moveClock(clock, step);
    }

    async function compare(name: string, model: ActorCapsModel): Promise<void> {
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
    }
  },
);
