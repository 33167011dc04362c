import fc from 'fast-check';
import { LiveHub, LiveListing } from '../../../src/live/live-hub';
import { ADMIN } from '../../../harness/app';
import { SseReader } from '../../support/sse';
import { E2eContext, T0, useClusterApp, useSingleNodeApp } from '../../support/e2e';

/**
 * The stream's filters and moderation, on one Redis (1 and 3 shards) and a Cluster (3 shards): after
 * random increments (each by an actor, naming a group) and items hidden and allowed, every frame a
 * stream with `minActors` or `perGroup` sends lists exactly what a brute force of the events lists
 * (items with at least n distinct actors, at most k of a group, board ranks kept, hidden items left out,
 * ranks closed). A hidden item leaves the next frame; allowed again, it comes back.
 */
const ITEMS = ['a', 'b', 'c', 'd', 'e'];
const ACTORS = ['ann', 'bob', 'cy'];
const GROUPS = ['g1', 'g2'];
const LIMIT = 3;

type Event = { item: string; amount: number; actor: string; group: string };
type Step = { kind: 'events'; events: Event[] } | { kind: 'state'; item: string; state: 'hidden' | null };
type Row = { rank: number; item: string; score: number };

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('events' as const),
      events: fc.array(
        fc.record({
          item: fc.constantFrom(...ITEMS),
          amount: fc.integer({ min: 1, max: 4 }),
          actor: fc.constantFrom(...ACTORS),
          group: fc.constantFrom(...GROUPS),
        }),
        { minLength: 1, maxLength: 4 },
      ),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('state' as const),
      item: fc.constantFrom(...ITEMS),
      state: fc.constantFrom('hidden' as const, null),
    }),
  },
);

/** The brute force: visible sums, competition ranks among visible items, then the filter keeps the rows it passes. */
function expectedRows(events: Event[], hidden: Set<string>, filter: { minActors?: number; perGroup?: number }): Row[] {
  const sums = new Map<string, number>();
  const actors = new Map<string, Set<string>>();
  const groupOf = new Map<string, string>();
  for (const e of events) {
    sums.set(e.item, (sums.get(e.item) ?? 0) + e.amount);
    actors.set(e.item, (actors.get(e.item) ?? new Set()).add(e.actor));
    groupOf.set(e.item, e.group);
  }
  const shown = [...sums].filter(([item]) => !hidden.has(item));
  const ranked = shown
    .map(([item, score]) => ({ item, score, rank: 1 + shown.filter(([, other]) => other > score).length }))
    .sort((a, b) => a.rank - b.rank || (b.item > a.item ? 1 : -1));
  const perGroup = new Map<string, number>();
  return ranked
    .filter((row) => (actors.get(row.item)?.size ?? 0) >= (filter.minActors ?? 0))
    .filter((row) => {
      const taken = perGroup.get(groupOf.get(row.item)!) ?? 0;
      perGroup.set(groupOf.get(row.item)!, taken + 1);
      return filter.perGroup === undefined || taken < filter.perGroup;
    })
    .slice(0, LIMIT);
}

const rowsOf = (rows: Row[]) => rows.map(({ rank, item, score }) => `${rank} ${item} ${score}`);
const sameRows = (rows: Row[], expected: string[]) => JSON.stringify(rowsOf(rows)) === JSON.stringify(expected);

function streamProperty(e2e: E2eContext, shards: number) {
  const { http } = e2e;
  let runs = 0;
  const readers: SseReader[] = [];
  afterEach(() => {
    for (const reader of readers.splice(0)) reader.close();
  });

  /** The stream's latest frame's rows (snapshot or top). */
  const latest = (reader: SseReader) => {
    const frames = reader.events.filter((event) => event.event === 'snapshot' || event.event === 'top');
    return (JSON.parse(frames[frames.length - 1].data!) as LiveListing).items as Row[];
  };

  it(`${shards} shard(s): every frame of a filtered stream equals the brute force; hide drops, allow restores`, async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(stepArb, { minLength: 3, maxLength: 8 }), async (steps) => {
        const board = `sf${shards}n${runs++}`;
        const windows = [{ name: 'h', period: '1h', interval: '1m' }];
        await http()
          .put(`/admin/boards/${board}`)
          .set(ADMIN)
          .send({ windows, shards, actors: true, groups: true })
          .expect(201);
        const filters = [{ minActors: 2 }, { perGroup: 1 }, {}];
        const streams = await Promise.all(
          filters.map(async (filter) => {
            const query = Object.entries(filter)
              .map(([k, v]) => `&${k}=${v}`)
              .join('');
            const reader = await SseReader.open(
              `http://127.0.0.1:${e2e.port()}/boards/${board}/stream?window=h&limit=${LIMIT}${query}`,
            );
            readers.push(reader);
            await reader.waitFor(1);
            return { filter, reader };
          }),
        );
        const events: Event[] = [];
        const hidden = new Set<string>();
        for (const s of steps) {
          if (s.kind === 'events') {
            await http().post(`/boards/${board}/increments`).send({ items: s.events }).expect(200);
            events.push(...s.events);
          } else {
            const at = `/admin/boards/${board}/moderation/items/${s.item}`;
            if (s.state === null) await http().delete(at).set(ADMIN).expect(204);
            else await http().put(at).set(ADMIN).send({ state: s.state }).expect(204);
            if (s.state === null) hidden.delete(s.item);
            else hidden.add(s.item);
          }
          const before = streams.map(({ reader }) => reader.events.length);
          await e2e.app().get(LiveHub).tick();
          for (const [i, { filter, reader }] of streams.entries()) {
            const expected = rowsOf(expectedRows(events, hidden, filter));
            // A frame comes when the rows changed (it may still be on its way), else the last one sent holds.
            for (let seen = before[i]; !sameRows(latest(reader), expected) && seen < before[i] + 3; seen++)
              await reader.waitFor(seen + 1, 2000).catch(() => undefined);
            expect([filter, rowsOf(latest(reader))]).toEqual([filter, expected]);
          }
        }
        for (const { reader } of streams) reader.close();
        await http().delete(`/admin/boards/${board}`).set(ADMIN).expect(204);
      }),
      {
        numRuns: 4,
        examples: [
          // Hide the top item: the next frame drops it (ranks closed); allow it: it comes back.
          [
            [
              {
                kind: 'events',
                events: [
                  { item: 'a', amount: 5, actor: 'ann', group: 'g1' },
                  { item: 'a', amount: 1, actor: 'bob', group: 'g1' },
                  { item: 'b', amount: 3, actor: 'ann', group: 'g2' },
                  { item: 'b', amount: 1, actor: 'cy', group: 'g2' },
                  { item: 'c', amount: 2, actor: 'bob', group: 'g1' },
                ],
              },
              { kind: 'state', item: 'a', state: 'hidden' },
              { kind: 'state', item: 'a', state: null },
            ],
          ],
        ],
      },
    );
  }, 120_000);
}

describe('stream filters and moderation (one Redis)', () => {
  const e2e = useSingleNodeApp({ startMs: T0, env: { STREAM_COALESCE_MS: '60000' } });
  describe.each([1, 3])('%i shard(s)', (shards) => streamProperty(e2e, shards));
});

describe('stream filters and moderation (Cluster)', () => {
  const e2e = useClusterApp({ startMs: T0, env: { STREAM_COALESCE_MS: '60000' } });
  streamProperty(e2e, 3);
});
