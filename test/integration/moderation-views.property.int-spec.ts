import fc from 'fast-check';
import { ADMIN } from '../../harness/app';
import { SHARD_CELLS } from '../../harness/redis';
import { useSharedTestApps } from '../support/app-world';

/**
 * Moderation of trending views, on 1 and 3 shards (one Redis and a Cluster): a moderated board and a
 * never-moderated twin receive the same events; after random increments, clock moves that expire
 * slots, and items hidden, allowed and cleared, every read of the moderated board's views (top and a
 * page of it, items, around) answers the twin's view listing without the items moderation leaves out,
 * ranks closing the gaps (a view's score is the twin's: only which rows are listed differs; an item
 * read of a left-out row answers its score with hidden: true and rank null), and so do
 * the views of a segment every event counts in. Each run
 * then clears (or, on a review board, allows) every item and answers exactly as the twin.
 */
const T0 = 1_700_002_800_000;
const POOL = ['a', 'b', 'c', 'd', 'e', 'é', 'x y'];
const MINUTE_MS = 60_000;
// No hot view here: a hot score keeps firstSeen while the sum is not 0, so it depends on when expiry
// ran, which a twin board need not share (the wilson test below checks a hot view's moderation).
const VIEWS = ['fade', 'up'];
/** Every event also counts in segment `s`: its views list what the board's do, moderated alike. */
const SEGMENTS = ['', '&segment=s'];

type Step =
  | { kind: 'batch'; entries: Array<{ item: string; amount: number }> }
  | { kind: 'move'; minutes: number }
  | { kind: 'state'; item: string; state: 'hidden' | 'allowed' | null };

const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('batch' as const),
      entries: fc.array(
        fc.record({ item: fc.constantFrom(...POOL), amount: fc.integer({ min: -2, max: 5 }).filter((n) => n !== 0) }),
        { minLength: 1, maxLength: 6 },
      ),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('move' as const), minutes: fc.integer({ min: 1, max: 2 }) }) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('state' as const),
      item: fc.constantFrom(...POOL),
      state: fc.constantFrom('hidden' as const, 'allowed' as const, null),
    }),
  },
);

type Row = { rank: number; item: string; score: number };

const path = (item: string) => encodeURIComponent(item);
const key = (rows: Row[]) => rows.map(({ rank, item, score }) => `${rank} ${item} ${score}`);

const CASES = SHARD_CELLS.flatMap(([topology, shards]) =>
  [false, true].map((review) => [topology, shards, review] as const),
);

/** One app per topology for every case: each case names its boards apart and reads time relative to the clock. */
const appFor = useSharedTestApps(T0);

describe.each(CASES)('moderation of views (property, %s, %i shard(s), review %s)', (topology, shards, review) => {
  const world = appFor(topology);
  const { clock, http } = world;
  let board = 0;

  it("every view read lists the twin's view rows that are visible, ranks closed; clearing equals never moderated", async () => {
    let leftOut = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.shuffledSubarray(POOL, { minLength: 3, maxLength: 3 }),
        fc.array(step, { minLength: 2, maxLength: 6 }),
        async ([hidden, ...allowed], rest) => {
          // Every run starts with a listing of equal and distinct scores and a listed item left out.
          const steps: Step[] = [
            { kind: 'batch', entries: POOL.map((item, i) => ({ item, amount: [3, 3, 5, 1, 2, 5, 4][i] })) },
            { kind: 'state', item: hidden, state: 'hidden' },
            ...allowed.map((item): Step => ({ kind: 'state', item, state: review ? 'allowed' : 'hidden' })),
            ...rest,
          ];
          const name = `mv${shards}${review ? 1 : 0}n${board++}`;
          const twin = `${name}t`;
          const windows = [
            { name: 'w', period: '3m', interval: '1m' },
            { name: 'base', period: '12m', interval: '1m' },
          ];
          const views = [
            { name: 'fade', mode: 'decay', window: 'w', halfLife: '1m' },
            { name: 'up', mode: 'rising', window: 'w', baseline: 'base', minCount: 1 },
          ];
          for (const [b, moderation] of [
            [name, { review }],
            [twin, undefined],
          ] as const)
            await http()
              .put(`/admin/boards/${b}`)
              .set(ADMIN)
              .send({ windows, views, shards, moderation, segments: { max: 10 } })
              .expect(201);
          const states = new Map<string, 'hidden' | 'allowed'>();
          for (const [i, s] of steps.entries()) {
            await apply(name, twin, s, states);
            if (i === Math.floor(steps.length / 2) || i === steps.length - 1)
              for (const view of VIEWS)
                for (const segment of SEGMENTS) leftOut += await compare(name, twin, `${view}${segment}`, states);
          }
          for (const item of POOL) {
            const at = `/admin/boards/${name}/moderation/items/${path(item)}`;
            if (review) await http().put(at).set(ADMIN).send({ state: 'allowed' }).expect(204);
            else await http().delete(at).set(ADMIN).expect(204);
          }
          await sameAnswers(name, twin);
          for (const b of [name, twin]) await http().delete(`/admin/boards/${b}`).set(ADMIN).expect(204);
        },
      ),
      {
        // Each of these mistakes planted in view_except_lib.lua failed the same blocks (2-8 of 8) at these
        // counts as at 6 and 4: equal-score exceptions always ahead, a count past its lowest score, a page
        // past the top shifted or read one row short, a review page's ties in reverse.
        numRuns: topology === 'single' ? 3 : 2,
        examples: [
          // The moderated board's reads drained the baseline window (a rising view's `since`) before the twin's.
          [
            ['c', 'b', 'e'],
            [
              { kind: 'move', minutes: 1 },
              { kind: 'move', minutes: 2 },
              { kind: 'state', item: 'x y', state: 'hidden' },
              { kind: 'batch', entries: [{ item: 'b', amount: 2 }] },
            ],
          ],
          // Two steps after the prelude: the middle comparison runs while the three moderated items are listed.
          [
            ['a', 'b', 'c'],
            [
              { kind: 'move', minutes: 1 },
              { kind: 'batch', entries: [{ item: 'd', amount: 1 }] },
            ],
          ],
        ],
      },
    );
    expect(leftOut).toBeGreaterThan(0); // not vacuous: some listed item was left out (certain in the example)
  }, 180_000);

  it('a wilson and a hot view leave a hidden item out, and list it again once cleared', async () => {
    if (review) return; // the property above covers review boards; this one checks the metrics' view mode
    const name = `mw${shards}n${board++}`;
    await http()
      .put(`/admin/boards/${name}`)
      .set(ADMIN)
      .send({
        windows: [{ name: 'w', period: '3m', interval: '1m' }],
        metrics: ['up', 'down'],
        views: [
          { name: 'best', mode: 'wilson', window: 'w', positive: 'up', negative: 'down' },
          { name: 'hot', mode: 'hot', window: 'w' },
        ],
        shards,
      })
      .expect(201);
    const votes = [
      ['a', 40, 35],
      ['b', 6, 1],
      ['c', 9, 0],
      ['d', 3, 3],
    ] as const;
    // One batch per metric (a batch names one metric for all its entries).
    for (const [metric, at] of [
      ['up', 1],
      ['down', 2],
    ] as const) {
      const items = votes.map((vote) => ({ item: vote[0], amount: vote[at], metric })).filter((e) => e.amount !== 0);
      await http().post(`/boards/${name}/increments`).send({ items }).expect(200);
    }
    const read = async (view = 'best') =>
      ((await http().get(`/boards/${name}/top?window=${view}&limit=10`).expect(200)).body.items as Row[]).map(
        (row) => `${row.rank} ${row.item}`,
      );
    const before = await read();
    expect(before).toEqual(['1 c', '2 b', '3 a', '4 d']);
    // The hot view ranks by the first metric (up), every item first seen at once.
    const hotBefore = await read('hot');
    expect(hotBefore).toEqual(['1 a', '2 c', '3 b', '4 d']);
    const at = `/admin/boards/${name}/moderation/items/b`;
    await http().put(at).set(ADMIN).send({ state: 'hidden' }).expect(204);
    expect(await read()).toEqual(['1 c', '2 a', '3 d']);
    expect(await read('hot')).toEqual(['1 a', '2 c', '3 d']);
    expect((await http().get(`/boards/${name}/items/d?window=hot`).expect(200)).body.rank).toBe(3);
    const { body } = await http().get(`/boards/${name}/items/a?window=best`).expect(200);
    expect(body.rank).toBe(2);
    await http().delete(at).set(ADMIN).expect(204);
    expect(await read()).toEqual(before);
    expect(await read('hot')).toEqual(hotBefore);
    await http().delete(`/admin/boards/${name}`).set(ADMIN).expect(204);
  });

  async function apply(name: string, twin: string, s: Step, states: Map<string, 'hidden' | 'allowed'>): Promise<void> {
    if (s.kind === 'move') {
      clock.advanceMs(s.minutes * MINUTE_MS);
      for (const b of [name, twin]) await drained(b);
      return;
    }
    if (s.kind === 'batch') {
      const items = s.entries.map((entry) => ({ ...entry, segments: ['s'] }));
      for (const b of [name, twin]) await http().post(`/boards/${b}/increments`).send({ items }).expect(200);
      return;
    }
    const at = `/admin/boards/${name}/moderation/items/${path(s.item)}`;
    if (s.state === null) await http().delete(at).set(ADMIN).expect(204);
    else await http().put(at).set(ADMIN).send({ state: s.state }).expect(204);
    if (s.state === null) states.delete(s.item);
    else states.set(s.item, s.state);
  }

  /**
   * Reads every window and view of the board and of its segment until no expired slot is left to drain
   * (503 WINDOW_DRAINING while some are left): a rising view's `since` follows when a slot is drained,
   * so both boards drain at the same point of their history.
   */
  async function drained(b: string): Promise<void> {
    for (const source of ['w', 'base', ...VIEWS])
      for (const segment of ['', '&segment=s'])
        for (let attempt = 0; ; attempt++) {
          const { status } = await http().get(`/boards/${b}/top?window=${source}${segment}&limit=1`);
          if (status === 200) break;
          if (status !== 503 || attempt >= 20) throw new Error(`/boards/${b}/top answered ${status}`);
        }
  }

  /** Compares the view's reads with the twin's rows left visible; answers how many listed rows were left out. */
  async function compare(name: string, twin: string, view: string, states: Map<string, string>): Promise<number> {
    const visible = (item: string) => (review ? states.get(item) === 'allowed' : states.get(item) !== 'hidden');
    const full = (await http().get(`/boards/${twin}/top?window=${view}&limit=50`).expect(200)).body.items as Row[];
    // A competition rank counts the rows of a better score: the left-out ones among them no longer do.
    const expected = full
      .filter((row) => visible(row.item))
      .map((row) => ({ ...row, rank: row.rank - full.filter((o) => !visible(o.item) && o.rank < row.rank).length }));
    const top = (await http().get(`/boards/${name}/top?window=${view}&limit=50`).expect(200)).body.items as Row[];
    expect([view, key(top)]).toEqual([view, key(expected)]);
    const page = (await http().get(`/boards/${name}/top?window=${view}&offset=1&limit=2`).expect(200)).body.items;
    expect(key(page)).toEqual(key(expected.slice(1, 3)));
    for (const item of POOL) {
      const read = `/items/${path(item)}?window=${view}`;
      const [{ body }, { body: theirs }] = await Promise.all([
        http().get(`/boards/${name}${read}`).expect(200),
        http().get(`/boards/${twin}${read}`).expect(200),
      ]);
      // A row the twin lists that moderation leaves out answers its score, hidden: true, rank null (as a window's).
      const hidden = theirs.rank !== null && !visible(item);
      expect([view, item, body.rank, body.hidden ?? false, body.score]).toEqual([
        view,
        item,
        expected.find((r) => r.item === item)?.rank ?? null,
        hidden,
        theirs.score,
      ]);
    }
    for (const [i, row] of expected.entries()) {
      const { body } = await http()
        .get(`/boards/${name}/items/${path(row.item)}/around?window=${view}&radius=1`)
        .expect(200);
      expect([view, row.item, key(body.items)]).toEqual([
        view,
        row.item,
        key(expected.slice(Math.max(0, i - 1), i + 2)),
      ]);
    }
    return full.length - expected.length;
  }

  /** Every view read of the moderated board, once cleared, answers what the never-moderated twin answers. */
  async function sameAnswers(name: string, twin: string) {
    const strip = (body: Record<string, unknown>) => ({ ...body, board: undefined });
    const reads = VIEWS.flatMap((name) => SEGMENTS.map((segment) => `${name}${segment}`)).flatMap((view) => [
      `/top?window=${view}&limit=50`,
      `/top?window=${view}&offset=1&limit=2`,
      ...POOL.flatMap((item) => [
        `/items/${path(item)}?window=${view}`,
        `/items/${path(item)}/around?window=${view}&radius=1`,
      ]),
    ]);
    for (const read of reads) {
      const [mine, theirs] = await Promise.all([
        http().get(`/boards/${name}${read}`),
        http().get(`/boards/${twin}${read}`),
      ]);
      expect([read, mine.status, strip(mine.body)]).toEqual([read, theirs.status, strip(theirs.body)]);
    }
  }
});
