import fc from 'fast-check';
import request from 'supertest';
import { ADMIN, startTestApp } from '../../harness/app';
import { TOPOLOGIES, SHARD_CELLS } from '../../harness/redis';
import { MODERATED_GROUP_ITEMS_PER_SHARD, MODERATED_GROUPS_PER_BOARD } from '../../src/ranking/core/ranking.limits';
import { useSharedTestApps, useTestApp } from '../support/app-world';

/**
 * Group moderation against a brute force, on 1 and 3 shards (one Redis and a Cluster): after random
 * increments naming each item's group (the latest names it, so items change group), clock moves that
 * expire slots, and items and groups hidden, allowed and cleared, every read (top and a page of it, a
 * segment's top, items, around, lookup, the review queue) lists exactly the model's visible items,
 * ranked among themselves. An item's state is its own, else its group's. Each run then clears (or
 * allows) every group and item and answers exactly as a twin board that received the same events and
 * was never moderated: hide, events, allow equals never hidden.
 */
const T0 = 1_700_002_800_000;
const POOL = ['a', 'b', 'c', 'd', 'é', 'x y'];
const GROUPS = ['g1', 'g2', 'gé'];
const MINUTE_MS = 60_000;

type State = 'hidden' | 'allowed' | null;
type Entry = { item: string; amount: number; group: string };
type Step =
  | { kind: 'batch'; entries: Entry[] }
  | { kind: 'move'; minutes: number }
  | { kind: 'item'; id: string; state: State }
  | { kind: 'group'; id: string; state: State };

const stateOf = fc.constantFrom<State>('hidden', 'allowed', null);
const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('batch' as const),
      entries: fc.array(
        fc.record({
          item: fc.constantFrom(...POOL),
          amount: fc.integer({ min: -2, max: 5 }).filter((n) => n !== 0),
          group: fc.constantFrom(...GROUPS),
        }),
        { minLength: 1, maxLength: 5 },
      ),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('move' as const), minutes: fc.integer({ min: 1, max: 2 }) }) },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('item' as const), id: fc.constantFrom(...POOL), state: stateOf }),
  },
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant('group' as const), id: fc.constantFrom(...GROUPS), state: stateOf }),
  },
);

type Row = { rank: number; item: string; score: number };
type Event = Entry & { minute: number };
const path = (id: string) => encodeURIComponent(id);
const key = (rows: Row[]) => rows.map(({ rank, item, score }) => `${rank} ${item} ${score}`);

const CASES = SHARD_CELLS.flatMap(([topology, cellShards]) =>
  (
    [
      [1, 'shared', false, false],
      [3, 'shared', false, false],
      [1, 'shared', true, false],
      [3, 'first', true, false],
      [3, 'shared', false, true],
      [1, 'shared', true, true],
    ] as const
  )
    .filter(([shards]) => shards === cellShards)
    .map(([shards, ties, review, asc]) => [topology, shards, ties, review, asc] as const),
);

/** The first grouped listing: every item in a group, g1 holding three of them (one allowed alone). */
const PRELUDE: Entry[] = POOL.map((item, i) => ({ item, amount: [3, 3, 5, 1, 2, 4][i], group: GROUPS[i % 2] }));

/** One app per topology for every case: each case names its boards apart and reads time relative to the clock. */
const appFor = useSharedTestApps(T0);

describe.each(CASES)(
  'group moderation against a brute force (property, %s, %i shard(s), ties %s, review %s, lowest max first %s)',
  (topology, shards, ties, review, asc) => {
    // asc: a max board ranking the lowest first (every score listed), which takes no segments.
    const options = asc ? { aggregate: 'max', order: 'asc' } : { segments: { max: 4 } };
    const reads = asc ? ['/top?window=w&limit=20'] : ['/top?window=w&limit=20', '/top?window=w&segment=s&limit=20'];
    const world = appFor(topology);
    const { clock, http } = world;
    let board = 0;

    it('every read lists the visible items only; an item state wins over its group; allowing equals never hidden', async () => {
      let byGroup = 0;
      await fc.assert(
        fc.asyncProperty(fc.array(step, { minLength: 2, maxLength: 7 }), async (rest) => {
          const steps: Step[] = [
            { kind: 'batch', entries: PRELUDE },
            { kind: 'group', id: 'g1', state: review ? 'allowed' : 'hidden' },
            { kind: 'item', id: 'a', state: review ? 'hidden' : 'allowed' },
            ...rest,
          ];
          const name = `mg${shards}${ties[0]}${review ? 1 : 0}${asc ? 1 : 0}n${board++}`;
          const twin = `${name}t`;
          const windows = [{ name: 'w', period: '3m', interval: '1m' }];
          for (const [b, moderation] of [
            [name, { review }],
            [twin, undefined],
          ] as const)
            await http()
              .put(`/admin/boards/${b}`)
              .set(ADMIN)
              .send({ windows, shards, ties, moderation, groups: true, ...options })
              .expect(201);
          const model = { events: [] as Event[], items: new Map<string, State>(), groups: new Map<string, State>() };
          for (const [i, s] of steps.entries()) {
            await apply(name, twin, s, model);
            if (i === Math.floor(steps.length / 2) || i === steps.length - 1)
              byGroup += await compare(name, twin, model);
          }
          for (const [i, group] of GROUPS.entries()) {
            const at = `/admin/boards/${name}/moderation/groups/${path(group)}`;
            if (review || i % 2 === 1) await http().put(at).set(ADMIN).send({ state: 'allowed' }).expect(204);
            else await http().delete(at).set(ADMIN).expect(204);
          }
          for (const item of POOL)
            await http()
              .delete(`/admin/boards/${name}/moderation/items/${path(item)}`)
              .set(ADMIN)
              .expect(204);
          await sameAnswers(name, twin);
          for (const b of [name, twin]) await http().delete(`/admin/boards/${b}`).set(ADMIN).expect(204);
        }),
        {
          // The mistakes of the moderation property, and a group's state overwriting its items' own in modeff,
          // failed 6-12 of the 12 blocks at these counts; 10 and 6 cost twice as much. An item changing group
          // that takes its new group's state over its own (modeff's group_changed) fails by the third example.
          numRuns: topology === 'single' ? 5 : 3,
          examples: [
            // Equal scores reached in one millisecond on different shards: a segment's order of them is its own.
            [
              [
                { kind: 'group', id: 'g2', state: 'allowed' },
                { kind: 'group', id: 'g1', state: 'hidden' },
                {
                  kind: 'batch',
                  entries: [
                    { item: 'c', amount: -2, group: 'g2' },
                    { item: 'a', amount: 1, group: 'g1' },
                  ],
                },
              ],
            ],
            // The middle comparison runs with g1 moderated and `a` (of g1) holding its own state; then `c`
            // moves from g1 to g2 and `d` from g2 to g1.
            [
              [
                { kind: 'move', minutes: 1 },
                {
                  kind: 'batch',
                  entries: [
                    { item: 'c', amount: 1, group: 'g2' },
                    { item: 'd', amount: 2, group: 'g1' },
                  ],
                },
              ],
            ],
            // `a`, holding its own state, moves to a hidden group: its own state still wins.
            [
              [
                { kind: 'group', id: 'g2', state: 'hidden' },
                { kind: 'batch', entries: [{ item: 'a', amount: 1, group: 'g2' }] },
              ],
            ],
          ],
        },
      );
      expect(byGroup).toBeGreaterThan(0); // not vacuous: some listed item took its group's state (certain in the example)
    }, 240_000);

    async function apply(name: string, twin: string, s: Step, model: Model): Promise<void> {
      if (s.kind === 'move') {
        clock.advanceMs(s.minutes * MINUTE_MS);
        for (const b of [name, twin]) await drained(b);
        return;
      }
      if (s.kind === 'batch') {
        const items = s.entries.map((e) =>
          asc ? { item: e.item, score: e.amount, group: e.group } : { ...e, segments: ['s'] },
        );
        for (const b of [name, twin]) await http().post(`/boards/${b}/increments`).send({ items }).expect(200);
        const minute = Math.floor(clock.nowMs() / MINUTE_MS);
        model.events.push(...s.entries.map((e) => ({ ...e, minute })));
        return;
      }
      const at = `/admin/boards/${name}/moderation/${s.kind === 'item' ? 'items' : 'groups'}/${path(s.id)}`;
      if (s.state === null) await http().delete(at).set(ADMIN).expect(204);
      else await http().put(at).set(ADMIN).send({ state: s.state }).expect(204);
      (s.kind === 'item' ? model.items : model.groups).set(s.id, s.state);
    }

    async function drained(b: string): Promise<void> {
      for (let attempt = 0; ; attempt++) {
        const { status } = await http().get(`/boards/${b}/top?window=w&limit=1`);
        if (status === 200) return;
        if (status !== 503 || attempt >= 20) throw new Error(`/boards/${b}/top answered ${status}`);
      }
    }

    type Model = { events: Event[]; items: Map<string, State>; groups: Map<string, State> };

    /** Live sums above 0 (asc: every live maximum); an item's state is its own, else its latest group's; competition ranks. */
    function expected(model: Model) {
      const now = Math.floor(clock.nowMs() / MINUTE_MS);
      const sums = new Map<string, number>();
      const groupOf = new Map<string, string>();
      for (const e of model.events) groupOf.set(e.item, e.group);
      for (const e of model.events.filter((ev) => ev.minute > now - 3))
        sums.set(e.item, asc ? Math.max(sums.get(e.item) ?? -Infinity, e.amount) : (sums.get(e.item) ?? 0) + e.amount);
      const listed = new Map([...sums].filter(([, score]) => asc || score > 0));
      const ahead = (other: number, score: number) => (asc ? other < score : other > score);
      const own = (item: string) => model.items.get(item) ?? null;
      const state = (item: string) => own(item) ?? model.groups.get(groupOf.get(item) ?? '') ?? null;
      const visible = (item: string) => (review ? state(item) === 'allowed' : state(item) !== 'hidden');
      const shown = [...listed].filter(([item]) => visible(item)).map(([item, score]) => ({ item, score }));
      const rows = shown.map((row) => ({
        ...row,
        rank: 1 + shown.filter((other) => ahead(other.score, row.score)).length,
      }));
      const byGroup = [...listed.keys()].filter((item) => own(item) === null && state(item) !== null).length;
      return { rows, listed, visible, waiting: [...listed].filter(([item]) => state(item) === null), byGroup };
    }

    /** Compares every read with the model; answers how many listed items took their group's state. */
    async function compare(name: string, twin: string, model: Model): Promise<number> {
      const m = expected(model);
      // Strict ties: the twin's same read (a segment draws its own marks, so equal scores reached in one
      // millisecond on different shards may come in another order than the board's) without the left-out items.
      const strict = async (read: string) =>
        ((await http().get(`/boards/${twin}${read}`).expect(200)).body.items as Row[])
          .filter((row) => m.visible(row.item))
          .map((row, i) => ({ rank: i + 1, item: row.item, score: row.score }));
      const rowsOf = async (read: string): Promise<Row[]> =>
        ties === 'first' ? strict(read) : [...m.rows].sort((a, b) => a.rank - b.rank || b.item.localeCompare(a.item));
      for (const read of reads) {
        const rows = await rowsOf(read);
        const top = (await http().get(`/boards/${name}${read}`).expect(200)).body.items as Row[];
        expect([read, key(top).sort()]).toEqual([read, key(rows).sort()]);
        expect(top.map((row) => row.rank)).toEqual(rows.map((row) => row.rank));
      }
      const rows = await rowsOf('/top?window=w&limit=20');
      const top = (await http().get(`/boards/${name}/top?window=w&limit=20`).expect(200)).body.items as Row[];
      const page = (await http().get(`/boards/${name}/top?window=w&offset=1&limit=2`).expect(200)).body.items as Row[];
      expect(key(page)).toEqual(key(top.slice(1, 3)));
      const percentile = (rank: number) =>
        rows.length <= 1 ? 100 : Math.round(((rows.length - rank) / (rows.length - 1)) * 10000) / 100;
      for (const item of POOL) {
        const { body } = await http()
          .get(`/boards/${name}/items/${path(item)}?window=w`)
          .expect(200);
        const row = rows.find((r) => r.item === item);
        expect({ item, rank: body.rank, percentile: body.percentile, hidden: body.hidden ?? false }).toEqual({
          item,
          rank: row?.rank ?? null,
          percentile: row ? percentile(row.rank) : null,
          hidden: m.listed.has(item) && !row,
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
          rows.find((r) => r.item === item)?.rank ?? null,
          m.listed.has(item) && !m.visible(item),
        ]),
      );
      if (review) await compareQueue(name, m.waiting);
      return m.byGroup;
    }

    /** The review queue, read 3 rows a page: every listed item with no state of its own or its group's. */
    async function compareQueue(name: string, waiting: Array<[string, number]>) {
      const read: Array<{ item: string; score: number }> = [];
      let cursor: string | null = '';
      while (cursor !== null) {
        const asked: string = cursor === '' ? '' : `&cursor=${cursor}`;
        const page: { body: { items: Array<{ item: string; score: number }>; nextCursor: string | null } } =
          await http().get(`/admin/boards/${name}/moderation/queue?window=w&limit=3${asked}`).set(ADMIN).expect(200);
        read.push(...page.body.items);
        cursor = page.body.nextCursor;
      }
      expect(read.map((r) => r.score)).toEqual(waiting.map(([, score]) => score).sort((a, b) => (asc ? a - b : b - a)));
      expect(read.map((r) => r.item).sort()).toEqual(waiting.map(([item]) => item).sort());
    }

    /** Every read of the moderated board, once allowed or cleared, answers what the never-moderated twin answers. */
    async function sameAnswers(name: string, twin: string) {
      const strip = (body: Record<string, unknown>) => ({ ...body, board: undefined });
      const all = [
        ...reads,
        '/top?window=w&offset=1&limit=2',
        ...POOL.flatMap((item) => [`/items/${path(item)}?window=w`, `/items/${path(item)}/around?window=w&radius=1`]),
      ];
      for (const read of all) {
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

/** Not of the board's options: once per topology and shard count, on the property's app. */
describe.each(TOPOLOGIES.flatMap((topology) => [1, 3].map((shards) => [topology, shards] as const)))(
  'group moderation across instances (%s, %i shard(s))',
  (topology, shards) => {
    const world = appFor(topology);
    const { clock, http } = world;

    it('a group hidden through one instance is hidden on another at its next read; validated like an item id', async () => {
      const other = await startTestApp(world.redis, clock, { EXPIRE_CHUNK: '3' });
      try {
        const name = `mgx${shards}`;
        const windows = [{ name: 'w', period: '3m', interval: '1m' }];
        await http().put(`/admin/boards/${name}`).set(ADMIN).send({ windows, shards, groups: true }).expect(201);
        const items = ['p', 'q'].map((item) => ({ item, amount: 2, group: 'jose\u0301' }));
        await http().post(`/boards/${name}/increments`).send({ items }).expect(200);
        const read = () => request(other.getHttpServer()).get(`/boards/${name}/top?window=w`).expect(200);
        expect((await read()).body.items).toHaveLength(2);
        // The group named in NFC is the group the writes named in NFD.
        const at = `/admin/boards/${name}/moderation/groups/${path('jos\u00e9')}`;
        await http().put(at).set(ADMIN).set('Idempotency-Key', 'hide-1').send({ state: 'hidden' }).expect(204);
        expect((await read()).body.items).toEqual([]);
        await http().put(at).set(ADMIN).set('Idempotency-Key', 'hide-1').send({ state: 'hidden' }).expect(204);
        await http().delete(at).set(ADMIN).expect(204);
        expect((await read()).body.items).toHaveLength(2);
        const plain = `${name}p`;
        await http().put(`/admin/boards/${plain}`).set(ADMIN).send({ windows }).expect(201);
        await http().put(`/admin/boards/${plain}/moderation/groups/g`).set(ADMIN).send({ state: 'hidden' }).expect(400);
        for (const b of [name, plain]) await http().delete(`/admin/boards/${b}`).set(ADMIN).expect(204);
      } finally {
        await other.close();
      }
    }, 60_000);
  },
);

describe('group moderation bounds (3 shards)', () => {
  const { http } = useTestApp('single', T0);
  const windows = [{ name: 'w', period: '3m', interval: '1m' }];
  const at = (board: string, group: string) => `/admin/boards/${board}/moderation/groups/${group}`;

  it(`refuses a group state past ${MODERATED_GROUPS_PER_BOARD} groups (409) or past ${MODERATED_GROUP_ITEMS_PER_SHARD} of their items on a shard (422), storing nothing`, async () => {
    await http().put('/admin/boards/mgb').set(ADMIN).send({ windows, shards: 3, groups: true }).expect(201);
    // big and small hold the bound over all 3 shards; more holds it on each shard.
    const items = Array.from({ length: MODERATED_GROUP_ITEMS_PER_SHARD }, (_, n) => ({
      item: `i${n}`,
      amount: 1,
      group: n < 10 ? 'small' : 'big',
    }));
    await http().post('/boards/mgb/increments').send({ items }).expect(200);
    await http().put(at('mgb', 'big')).set(ADMIN).send({ state: 'hidden' }).expect(204);
    await http().put(at('mgb', 'small')).set(ADMIN).send({ state: 'hidden' }).expect(204);
    const more = Array.from({ length: 3 * MODERATED_GROUP_ITEMS_PER_SHARD }, (_, n) => ({
      item: `j${n}`,
      amount: 1,
      group: 'more',
    }));
    await http().post('/boards/mgb/increments').send({ items: more }).expect(200);
    const refused = await http().put(at('mgb', 'more')).set(ADMIN).send({ state: 'hidden' }).expect(422);
    expect(refused.body.code).toBe('REQUEST_TOO_COSTLY');
    expect((await http().get('/boards/mgb/top?window=w&limit=5').expect(200)).body.items[0].group).toBe('more');
    for (let g = 2; g < MODERATED_GROUPS_PER_BOARD; g++)
      await http()
        .put(at('mgb', `g${g}`))
        .set(ADMIN)
        .send({ state: 'allowed' })
        .expect(204);
    const full = await http().put(at('mgb', 'g-last')).set(ADMIN).send({ state: 'allowed' }).expect(409);
    expect(full.body.code).toBe('MODERATED_GROUPS_FULL');
    await http().put(at('mgb', 'g2')).set(ADMIN).send({ state: 'hidden' }).expect(204); // a held group changes
    await http().delete(at('mgb', 'g2')).set(ADMIN).expect(204);
    await http().put(at('mgb', 'g-last')).set(ADMIN).send({ state: 'allowed' }).expect(204);
    await http().delete('/admin/boards/mgb').set(ADMIN).expect(204);
  }, 120_000);
});
