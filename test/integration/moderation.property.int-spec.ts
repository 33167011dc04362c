import fc from 'fast-check';
import { ADMIN } from '../../harness/app';
import { SHARD_CELLS } from '../../harness/redis';
import { useSharedTestApps } from '../support/app-world';

/**
 * Moderation against a brute force, on 1 and 3 shards (one Redis and a Cluster): after random
 * increments, clock moves that expire slots, and items hidden, allowed and cleared, every read (top
 * and a page of it, items, around, lookup, the review queue) lists exactly the model's visible items,
 * ranked among themselves (the gaps closed). Each run then clears (or, on a review board, allows)
 * every item and answers exactly as a twin board that received the same events and was never moderated.
 */
const T0 = 1_700_002_800_000;
const POOL = ['a', 'b', 'c', 'd', 'e', 'é', 'x y'];
const MINUTE_MS = 60_000;

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

const CASES = SHARD_CELLS.flatMap(([topology, cellShards]) =>
  (
    [
      [1, 'shared', false],
      [3, 'shared', false],
      [1, 'shared', true],
      [3, 'shared', true],
      [3, 'first', false],
      [1, 'first', true],
    ] as const
  )
    .filter(([shards]) => shards === cellShards)
    .map(([shards, ties, review]) => [topology, shards, ties, review] as const),
);

/** One app per topology for every case: each case names its boards apart and reads time relative to the clock. */
const appFor = useSharedTestApps(T0);

describe.each(CASES)(
  'moderation against a brute force (property, %s, %i shard(s), ties %s, review %s)',
  (topology, shards, ties, review) => {
    const world = appFor(topology);
    const { clock, http } = world;
    let board = 0;

    it('every read lists the visible items only, ranked among themselves; clearing equals never moderated', async () => {
      let leftOut = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.shuffledSubarray(POOL, { minLength: 3, maxLength: 3 }),
          fc.array(step, { minLength: 2, maxLength: 7 }),
          async ([hidden, ...allowed], rest) => {
            // Every run starts with a listing of equal and distinct scores and a listed item left out.
            const steps: Step[] = [
              { kind: 'batch', entries: POOL.map((item, i) => ({ item, amount: [3, 3, 5, 1, 2, 5, 4][i] })) },
              { kind: 'state', item: hidden, state: 'hidden' },
              ...allowed.map((item): Step => ({ kind: 'state', item, state: review ? 'allowed' : 'hidden' })),
              ...rest,
            ];
            const name = `m${shards}${ties[0]}${review ? 1 : 0}n${board++}`;
            const twin = `${name}t`;
            const windows = [{ name: 'w', period: '3m', interval: '1m' }];
            for (const [b, moderation] of [
              [name, { review }],
              [twin, undefined],
            ] as const)
              await http().put(`/admin/boards/${b}`).set(ADMIN).send({ windows, shards, ties, moderation }).expect(201);
            const events: Array<{ item: string; amount: number; minute: number }> = [];
            const states = new Map<string, 'hidden' | 'allowed'>();
            for (const [i, s] of steps.entries()) {
              await apply(name, twin, s, events, states);
              if (i === Math.floor(steps.length / 2) || i === steps.length - 1)
                leftOut += await compare(name, twin, expectedRows(events, states), states);
            }
            for (const item of POOL) {
              const moderate = http().delete(`/admin/boards/${name}/moderation/items/${path(item)}`);
              if (!review) await moderate.set(ADMIN).expect(204);
              else
                await http()
                  .put(`/admin/boards/${name}/moderation/items/${path(item)}`)
                  .set(ADMIN)
                  .send({ state: 'allowed' })
                  .expect(204);
            }
            await sameAnswers(name, twin);
            for (const b of [name, twin]) await http().delete(`/admin/boards/${b}`).set(ADMIN).expect(204);
          },
        ),
        {
          // Each of these mistakes planted in order_lib.lua failed 6-12 of the 12 blocks at these counts (8 and
          // 5 cost twice as much): equal scores' exceptions always counted ahead (a read's count, a write's), a
          // page past the top skipping one row too few or reading one row short, a review page's last row.
          numRuns: topology === 'single' ? 4 : 3,
          // Two steps after the prelude: its middle comparison runs while the three moderated items are listed.
          examples: [
            [
              ['a', 'b', 'c'],
              [
                { kind: 'move', minutes: 1 },
                { kind: 'batch', entries: [{ item: 'd', amount: 1 }] },
              ],
            ],
            // The prelude expires, one moderation PUT, then a write reaching equal scores in the same ms.
            [
              ['d', 'e', 'x y'],
              [
                { kind: 'move', minutes: 3 },
                { kind: 'state', item: 'a', state: 'hidden' },
                {
                  kind: 'batch',
                  entries: [
                    { item: 'a', amount: 4 },
                    { item: 'd', amount: -1 },
                    { item: 'd', amount: 5 },
                    { item: 'é', amount: -2 },
                  ],
                },
              ],
            ],
            // Issue #49: the prelude's slot drains in 3 calls and brings a (hidden, then allowed) and e to one score.
            [
              ['a', 'c', 'e'],
              [
                { kind: 'move', minutes: 2 },
                {
                  kind: 'batch',
                  entries: [
                    { item: 'a', amount: 1 },
                    { item: 'a', amount: 1 },
                    { item: 'e', amount: 2 },
                  ],
                },
                { kind: 'move', minutes: 1 },
              ],
            ],
          ],
        },
      );
      expect(leftOut).toBeGreaterThan(0); // not vacuous: some listed item was left out (certain in the example)
    }, 240_000);

    async function apply(
      name: string,
      twin: string,
      s: Step,
      events: Array<{ item: string; amount: number; minute: number }>,
      states: Map<string, 'hidden' | 'allowed'>,
    ): Promise<void> {
      if (s.kind === 'move') {
        clock.advanceMs(s.minutes * MINUTE_MS);
        // Drains what expired on both boards now: the strict order places an expiry when its slot is
        // drained, which a call on one board only (a moderation PUT) would otherwise do on that one alone.
        for (const b of [name, twin]) await drained(b);
        return;
      }
      if (s.kind === 'batch') {
        for (const b of [name, twin])
          await http().post(`/boards/${b}/increments`).send({ items: s.entries }).expect(200);
        const minute = Math.floor(clock.nowMs() / MINUTE_MS);
        events.push(...s.entries.map((e) => ({ ...e, minute })));
        return;
      }
      const at = `/admin/boards/${name}/moderation/items/${path(s.item)}`;
      if (s.state === null) await http().delete(at).set(ADMIN).expect(204);
      else await http().put(at).set(ADMIN).send({ state: s.state }).expect(204);
      if (s.state === null) states.delete(s.item);
      else states.set(s.item, s.state);
    }

    /** Reads the board until no expired slot is left to drain (a read drains chunks; 503 WINDOW_DRAINING while some are left). */
    async function drained(b: string): Promise<void> {
      for (let attempt = 0; ; attempt++) {
        const { status } = await http().get(`/boards/${b}/top?window=w&limit=1`);
        if (status === 200) return;
        if (status !== 503 || attempt >= 20) throw new Error(`/boards/${b}/top answered ${status}`);
      }
    }

    /** The model: live sums above 0, visible unless hidden (on a review board: only allowed), competition ranks. */
    function expectedRows(
      events: Array<{ item: string; minute: number; amount: number }>,
      states: Map<string, string>,
    ) {
      const now = Math.floor(clock.nowMs() / MINUTE_MS);
      const sums = new Map<string, number>();
      for (const e of events.filter((ev) => ev.minute > now - 3)) sums.set(e.item, (sums.get(e.item) ?? 0) + e.amount);
      const held = [...sums].filter(([, score]) => score > 0);
      const visible = (item: string) => (review ? states.get(item) === 'allowed' : states.get(item) !== 'hidden');
      const shown = held.filter(([item]) => visible(item)).map(([item, score]) => ({ item, score }));
      const rows = shown.map((row) => ({ ...row, rank: 1 + shown.filter((other) => other.score > row.score).length }));
      return { rows, listed: new Map(held), visible };
    }

    /** Compares every read with the model; answers how many listed items were left out. */
    async function compare(
      name: string,
      twin: string,
      model: ReturnType<typeof expectedRows>,
      states: Map<string, string>,
    ): Promise<number> {
      const full = (await http().get(`/boards/${twin}/top?window=w&limit=20`).expect(200)).body.items as Row[];
      // Strict ties: the twin's order (never moderated) without the left-out items, ranked by position.
      const expected: Row[] =
        ties === 'first'
          ? full
              .filter((row) => model.visible(row.item))
              .map((row, i) => ({ rank: i + 1, item: row.item, score: row.score }))
          : [...model.rows].sort((a, b) => a.rank - b.rank || b.item.localeCompare(a.item));
      const key = (rows: Row[]) => rows.map(({ rank, item, score }) => `${rank} ${item} ${score}`);
      const top = (await http().get(`/boards/${name}/top?window=w&limit=20`).expect(200)).body.items as Row[];
      expect(key(top).sort()).toEqual(key(expected).sort());
      expect(top.map((row) => row.rank)).toEqual(expected.map((row) => row.rank));
      const page = (await http().get(`/boards/${name}/top?window=w&offset=1&limit=2`).expect(200)).body.items as Row[];
      expect(key(page)).toEqual(key(top.slice(1, 3)));
      const percentile = (rank: number) =>
        expected.length <= 1 ? 100 : Math.round(((expected.length - rank) / (expected.length - 1)) * 10000) / 100;
      for (const item of POOL) {
        const { body } = await http()
          .get(`/boards/${name}/items/${path(item)}?window=w`)
          .expect(200);
        const row = expected.find((r) => r.item === item);
        const score = model.listed.get(item);
        expect({ item, rank: body.rank, percentile: body.percentile, hidden: body.hidden ?? false }).toEqual({
          item,
          rank: row?.rank ?? null,
          percentile: row ? percentile(row.rank) : null,
          hidden: score !== undefined && !row,
        });
      }
      for (const [i, row] of top.entries()) {
        const { body } = await http()
          .get(`/boards/${name}/items/${path(row.item)}/around?window=w&radius=1`)
          .expect(200);
        expect(key(body.items)).toEqual(key(top.slice(Math.max(0, i - 1), i + 2)));
      }
      const { body } = await http().post(`/boards/${name}/lookup`).send({ window: 'w', items: POOL }).expect(200);
      expect(body.items.map((r: Row & { hidden?: true }) => [r.item, r.rank, r.hidden ?? false])).toEqual(
        POOL.map((item) => [
          item,
          expected.find((r) => r.item === item)?.rank ?? null,
          model.listed.has(item) && !model.visible(item),
        ]),
      );
      if (review) await compareQueue(name, model, states);
      return [...model.listed.keys()].filter((item) => !model.visible(item)).length;
    }

    /** The review queue, read 2 rows a page: every held item with no state, best first. */
    async function compareQueue(name: string, model: ReturnType<typeof expectedRows>, states: Map<string, string>) {
      const waiting = [...model.listed]
        .filter(([item]) => !states.has(item))
        .map(([item, score]) => ({ item, score }))
        .sort((a, b) => b.score - a.score);
      const read: Array<{ item: string; score: number }> = [];
      let cursor: string | null = '';
      while (cursor !== null) {
        const asked: string = cursor === '' ? '' : `&cursor=${cursor}`;
        const page: { body: { items: Array<{ item: string; score: number }>; nextCursor: string | null } } =
          await http().get(`/admin/boards/${name}/moderation/queue?window=w&limit=2${asked}`).set(ADMIN).expect(200);
        read.push(...page.body.items);
        cursor = page.body.nextCursor;
      }
      expect(read.map((r) => r.score)).toEqual(waiting.map((r) => r.score));
      expect(read.map((r) => r.item).sort()).toEqual(waiting.map((r) => r.item).sort());
    }

    /** Every read of the moderated board, once cleared, answers what the never-moderated twin answers. */
    async function sameAnswers(name: string, twin: string) {
      const strip = (body: Record<string, unknown>) => ({ ...body, board: undefined });
      const reads = [
        '/top?window=w&limit=20',
        '/top?window=w&offset=1&limit=2',
        ...POOL.flatMap((item) => [`/items/${path(item)}?window=w`, `/items/${path(item)}/around?window=w&radius=1`]),
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
  },
);
