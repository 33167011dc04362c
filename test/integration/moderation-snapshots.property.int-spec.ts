import fc from 'fast-check';
import { ADMIN } from '../../harness/app';
import { SHARD_CELLS } from '../../harness/redis';
import { useSharedTestApps } from '../support/app-world';
import { path, POOL, runTwins } from '../support/moderation-twin';

/**
 * Moderation in the reads of kept snapshots (issue #49), against a brute force, on 1 and 3 shards (one
 * Redis and a Cluster): previous ranks (top rows, lookup) and an item's history leave out
 * the items hidden now (on a review board, all but the allowed ones) and rank the rest among
 * themselves, the gaps closed; an item left out answers its history `hidden: true`, every rank null.
 * The stored snapshots are the never-moderated twin's (same events, cut to the window's top); the
 * model filters and ranks them. Each run then clears (or allows) every item and answers exactly as
 * the twin.
 */
const T0 = 1_700_002_800_000;
const MINUTE_MS = 60_000;
const TOP = 4;
const WINDOWS = [{ name: 'w', period: '3m', interval: '1m', snapshots: { keep: 4, top: TOP } }];

type State = 'hidden' | 'allowed';
type Step =
  | { kind: 'batch'; entries: Array<{ item: string; amount: number }> }
  | { kind: 'move' }
  | { kind: 'state'; item: string; state: State | null };
type Row = { rank: number; item: string; score: number; previousRank?: number | null };
type Point = { at: number; rank: number | null; score: number | null };

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
  { weight: 2, arbitrary: fc.constant({ kind: 'move' as const }) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('state' as const),
      item: fc.constantFrom(...POOL),
      state: fc.constantFrom('hidden' as const, 'allowed' as const, null),
    }),
  },
);

const CASES = SHARD_CELLS.flatMap(([topology, shards]) =>
  [false, true].map((review) => [topology, shards, review] as const),
);

/** One app per topology for every case: each case names its boards apart and reads time relative to the clock. */
const appFor = useSharedTestApps(T0);

describe.each(CASES)('moderated snapshot reads (property, %s, %i shard(s), review %s)', (topology, shards, review) => {
  const world = appFor(topology);
  const { clock, http } = world;
  let board = 0;

  it('previous ranks and item histories rank the items shown now; clearing equals never moderated', async () => {
    let leftOut = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.shuffledSubarray(POOL, { minLength: 3, maxLength: 3 }),
        fc.array(step, { minLength: 2, maxLength: 7 }),
        async ([hidden, ...allowed], rest) => {
          // Every run keeps a snapshot of equal and distinct scores (more rows than its top) with a listed item left out.
          const steps: Step[] = [
            { kind: 'batch', entries: POOL.map((item, i) => ({ item, amount: [3, 3, 5, 1, 2, 5, 4][i] })) },
            { kind: 'move' },
            { kind: 'state', item: hidden, state: 'hidden' },
            ...allowed.map((item): Step => ({ kind: 'state', item, state: review ? 'allowed' : 'hidden' })),
            ...rest,
            { kind: 'move' },
          ];
          const name = `s${shards}${review ? 1 : 0}n${board++}`;
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
            same: () => sameAnswers(name, twin),
          });
        },
      ),
      { numRuns: topology === 'single' ? 6 : 3 },
    );
    expect(leftOut).toBeGreaterThan(0); // not vacuous: some kept row was left out
  }, 240_000);

  async function apply(name: string, twin: string, s: Step, states: Map<string, State>): Promise<void> {
    if (s.kind === 'move') {
      clock.advanceMs(MINUTE_MS);
      // Crosses the boundary (takes the snapshot) and drains what expired, on both boards.
      for (const b of [name, twin]) await drained(b);
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

  async function drained(b: string): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      const { status } = await http().get(`/boards/${b}/top?window=w&limit=1`);
      if (status === 200) return;
      if (status !== 503 || attempt >= 20) throw new Error(`/boards/${b}/top answered ${status}`);
    }
  }

  /** The brute force: a stored snapshot's rows without the items left out now, competition ranks among the rest. */
  function shownRows(stored: Row[], visible: (item: string) => boolean): Row[] {
    const rows = stored.filter((row) => visible(row.item));
    return rows.map((row) => ({ ...row, rank: 1 + rows.filter((other) => other.score > row.score).length }));
  }

  /** The twin's snapshot at a boundary (undefined: the latest), as stored: every row of its top. */
  async function stored(twin: string, atSec?: number): Promise<Row[]> {
    const at = atSec === undefined ? '' : `&at=${atSec}`;
    const { status, body } = await http().get(`/boards/${twin}/history?window=w${at}`);
    if (status === 404) return [];
    return (body.items as Row[]).map(({ rank, item, score }) => ({ rank, item, score }));
  }

  /** Compares previous ranks and item histories with the model; answers how many kept rows were left out. */
  async function compare(name: string, twin: string, states: Map<string, State>): Promise<number> {
    const visible = (item: string) => (review ? states.get(item) === 'allowed' : states.get(item) !== 'hidden');
    const latest = await stored(twin);
    const previous = new Map(shownRows(latest, visible).map((row) => [row.item, row.rank]));
    const top = (await http().get(`/boards/${name}/top?window=w&limit=20`).expect(200)).body.items as Row[];
    expect(top.map((row) => [row.item, row.previousRank])).toEqual(
      top.map((row) => [row.item, previous.get(row.item) ?? null]),
    );
    const { body } = await http().post(`/boards/${name}/lookup`).send({ window: 'w', items: POOL }).expect(200);
    expect(body.items.map((row: Row) => [row.item, row.previousRank])).toEqual(
      POOL.map((item) => [item, visible(item) ? (previous.get(item) ?? null) : null]),
    );
    for (const item of POOL) await compareItemHistory(name, twin, item, visible);
    return latest.filter((row) => !visible(row.item)).length;
  }

  /**
   * An item's history: listed where the twin lists it (its rank among every kept row within the top),
   * ranked 1 + the rows shown now that score above it in the twin's snapshot at that boundary.
   */
  async function compareItemHistory(name: string, twin: string, item: string, visible: (item: string) => boolean) {
    const [mine, theirs] = await Promise.all(
      [name, twin].map(async (b) => (await http().get(`/boards/${b}/items/${path(item)}/history?window=w`)).body),
    );
    const expected: Point[] = [];
    for (const point of theirs.points as Point[]) {
      if (point.score === null || !visible(item)) {
        expected.push({ ...point, rank: null });
        continue;
      }
      const above = (await stored(twin, point.at)).filter((row) => visible(row.item) && row.score > (point.score ?? 0));
      expected.push({ ...point, rank: above.length + 1 });
    }
    expect([item, mine.points, mine.hidden ?? false]).toEqual([item, expected, !visible(item)]);
  }

  /** Cleared, the moderated board answers every snapshot read as the never-moderated twin. */
  async function sameAnswers(name: string, twin: string) {
    const strip = (body: Record<string, unknown>) => ({ ...body, board: undefined });
    const reads = [
      '/top?window=w&limit=20',
      '/history?window=w',
      ...POOL.map((item) => `/items/${path(item)}/history?window=w`),
    ];
    for (const read of reads) {
      const [mine, theirs] = await Promise.all([
        http().get(`/boards/${name}${read}`),
        http().get(`/boards/${twin}${read}`),
      ]);
      expect([read, mine.status, strip(mine.body)]).toEqual([read, theirs.status, strip(theirs.body)]);
    }
    const lookup = (b: string) => http().post(`/boards/${b}/lookup`).send({ window: 'w', items: POOL }).expect(200);
    const [mine, theirs] = await Promise.all([lookup(name), lookup(twin)]);
    expect(strip(mine.body)).toEqual(strip(theirs.body));
  }
});
