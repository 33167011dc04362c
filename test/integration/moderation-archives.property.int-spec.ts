import fc from 'fast-check';
import { ADMIN } from '../../harness/app';
import { SHARD_CELLS } from '../../harness/redis';
import { useSharedTestApps } from '../support/app-world';
import { readArchived, sameArchiveAnswers } from '../support/archive-rows';
import { path, POOL, runTwins } from '../support/moderation-twin';

/**
 * Moderation in a calendar window's archives (issue #49), against a brute force, on 1 and 3 shards
 * (one Redis and a Cluster): `archives` pages and `archive` pages (offset, limit, nextOffset) leave out
 * the items hidden now (on a review board, all but the allowed ones) and rank the rest among
 * themselves, the gaps closed, as do (on one shard) the previous ranks a new period reads from the last archive. The
 * stored archives are the never-moderated twin's (same events, cut to the window's top); the model
 * filters and ranks them. Each run then clears (or allows) every item and answers exactly as the twin.
 */
const T0 = Date.UTC(2026, 2, 2, 12);
const DAY_MS = 86_400_000;
const TOP = 4;
const WINDOWS = [{ name: 'day', calendar: 'day', archive: { keep: 3, top: TOP } }];

type State = 'hidden' | 'allowed';
type Step =
  | { kind: 'batch'; entries: Array<{ item: string; amount: number }> }
  | { kind: 'day' }
  | { kind: 'state'; item: string; state: State | null };
type Row = { rank: number; item: string; score: number };
type Period = { from: number; to: number; items: Row[]; nextOffset: number | null };

const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('batch' as const),
      entries: fc.array(
        fc.record({ item: fc.constantFrom(...POOL), amount: fc.integer({ min: -2, max: 5 }).filter((n) => n !== 0) }),
        { minLength: 1, maxLength: 5 },
      ),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'day' as const }) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('state' as const),
      item: fc.constantFrom(...POOL),
      state: fc.constantFrom('hidden' as const, 'allowed' as const, null),
    }),
  },
);

const rowsOf = (items: Row[]) => items.map(({ rank, item, score }) => ({ rank, item, score }));
const CASES = SHARD_CELLS.flatMap(([topology, shards]) =>
  [false, true].map((review) => [topology, shards, review] as const),
);

/** One app per topology for every case: each case names its boards apart and reads time relative to the clock. */
const appFor = useSharedTestApps(T0);

describe.each(CASES)('moderated archives (property, %s, %i shard(s), review %s)', (topology, shards, review) => {
  const world = appFor(topology);
  const { clock, http } = world;
  let board = 0;

  it('archive pages and previous ranks rank the items shown now; clearing equals never moderated', async () => {
    let leftOut = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.shuffledSubarray(POOL, { minLength: 3, maxLength: 3 }),
        fc.array(step, { minLength: 2, maxLength: 7 }),
        async ([hidden, ...allowed], rest) => {
          // Every run keeps an archive of equal and distinct scores (more rows than its top) with a listed item left out.
          const steps: Step[] = [
            { kind: 'batch', entries: POOL.map((item, i) => ({ item, amount: [3, 3, 5, 1, 2, 5, 4][i] })) },
            { kind: 'day' },
            { kind: 'state', item: hidden, state: 'hidden' },
            ...allowed.map((item): Step => ({ kind: 'state', item, state: review ? 'allowed' : 'hidden' })),
            ...rest,
          ];
          const name = `a${shards}${review ? 1 : 0}n${board++}`;
          const twin = `${name}t`;
          leftOut += await runTwins({
            http,
            boards: { name, twin },
            windows: WINDOWS,
            shards,
            review,
            steps,
            apply: (s, states) => apply(name, twin, s, states),
            compare: (states) => compare(name, twin, states),
            same: () => sameArchiveAnswers(http, { name, twin }),
          });
        },
      ),
      { numRuns: topology === 'single' ? 12 : 5 },
    );
    expect(leftOut).toBeGreaterThan(0); // not vacuous: some archived row was left out
  }, 240_000);

  async function apply(name: string, twin: string, s: Step, states: Map<string, State>): Promise<void> {
    if (s.kind === 'day') {
      clock.advanceMs(DAY_MS);
      // Archives the day that closed on both boards (a read drains it in chunks).
      for (const b of [name, twin]) await read(b, '/archives?window=day&limit=10');
      return;
    }
    if (s.kind === 'batch') {
      for (const b of [name, twin]) await http().post(`/boards/${b}/increments`).send({ items: s.entries }).expect(200);
      return;
    }
    const at = `/admin/boards/${name}/moderation/items/${path(s.item)}`;
    if (s.state === null) await http().delete(at).set(ADMIN).expect(204);
    else await http().put(at).set(ADMIN).send({ state: s.state }).expect(204);
    if (s.state === null) states.delete(s.item);
    else states.set(s.item, s.state);
  }

  const read = (b: string, route: string) => readArchived(http, b, route);

  /** The brute force: stored rows without the items left out now, competition ranks among the rest. */
  function shownRows(stored: Row[], visible: (item: string) => boolean): Row[] {
    const rows = stored.filter((row) => visible(row.item));
    return rows.map((row) => ({ ...row, rank: 1 + rows.filter((other) => other.score > row.score).length }));
  }

  /** Compares archive reads and previous ranks with the model; answers how many archived rows were left out. */
  async function compare(name: string, twin: string, states: Map<string, State>): Promise<number> {
    const visible = (item: string) => (review ? states.get(item) === 'allowed' : states.get(item) !== 'hidden');
    const stored = (await read(twin, '/archives?window=day&limit=10')).body.periods as Period[];
    const mine = (await read(name, '/archives?window=day&limit=10')).body.periods as Period[];
    const expected = stored.map((period) => ({ ...period, items: shownRows(rowsOf(period.items), visible) }));
    expect(mine.map((period) => [period.from, rowsOf(period.items)])).toEqual(
      expected.map((period) => [period.from, period.items]),
    );
    for (const period of expected) {
      const page = await read(name, `/archive?window=day&at=${period.from}&offset=1&limit=2`);
      const more = period.items.length > 3;
      expect([period.from, page.status, rowsOf((page.body.items as Row[]) ?? []), page.body.nextOffset]).toEqual([
        period.from,
        200,
        period.items.slice(1, 3),
        more ? 3 : null,
      ]);
    }
    // One shard: a sharded board's previous listing of a calendar window merges each shard's latest
    // archive, of different periods where a shard scored nothing in the newest (found unmoderated too).
    if (shards > 1) return stored.flatMap((period) => period.items).filter((row) => !visible(row.item)).length;
    const previous = new Map((expected[0]?.items ?? []).map((row) => [row.item, row.rank]));
    const { body } = await http().post(`/boards/${name}/lookup`).send({ window: 'day', items: POOL }).expect(200);
    expect(
      body.items.map((row: { item: string; previousRank: number | null }) => [row.item, row.previousRank]),
    ).toEqual(POOL.map((item) => [item, visible(item) ? (previous.get(item) ?? null) : null]));
    return stored.flatMap((period) => period.items).filter((row) => !visible(row.item)).length;
  }
});
