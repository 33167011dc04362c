import fc from 'fast-check';
import { ADMIN } from '../../harness/app';
import { MODERATED_GROUP_ARCHIVED_ITEMS_PER_SHARD } from '../../src/ranking/core/ranking.limits';
import { TOPOLOGIES, SHARD_CELLS } from '../../harness/redis';
import { useSharedTestApps } from '../support/app-world';
import { readArchived, type Row, rowsOf, sameArchiveAnswers, visibleRowsModel } from '../support/archive-rows';
import {
  applyStep,
  clearAll,
  type Entry,
  GROUPS,
  Moderated,
  POOL,
  type State,
  createTwins,
} from '../support/moderation-twin';

/**
 * Group moderation in a calendar window's archives (issue #49), against a brute force, on 1 and 3
 * shards (one Redis and a Cluster): a group hidden (on a review board allowed) at any time applies to
 * every archived row of each item whose latest group it is, also once the period's items left every
 * window (a day closed and nothing named them since), and to the rows of an item a newer archive
 * trimmed out while an older one still holds it (groups_lib's archives_left keeps its group then):
 * `archives` pages and `archive` pages (offset, limit, nextOffset) list the twin's stored rows without
 * the items left out now, ranked among the rest, and (one shard) the previous ranks of the last
 * archive likewise. An item's own state wins over
 * its group's. Each run then clears (allows) every group and item and answers exactly as the twin.
 */
const T0 = Date.UTC(2026, 2, 2, 12);
const DAY_MS = 86_400_000;
const TOP = 4;
const WINDOWS = [{ name: 'day', calendar: 'day', archive: { keep: 3, top: TOP } }];

type Step =
  { kind: 'batch'; entries: Entry[] } | { kind: 'day' } | { kind: 'item' | 'group'; id: string; state: State };
type Period = { from: number; items: Row[] };

const stateOf = fc.constantFrom<State>('hidden', 'allowed', null);
// Amounts above 0: an item leaves the window only as its day closes, under its latest group.
const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('batch' as const),
      entries: fc.array(
        fc.record({
          item: fc.constantFrom(...POOL),
          amount: fc.integer({ min: 1, max: 5 }),
          group: fc.constantFrom(...GROUPS),
        }),
        { minLength: 1, maxLength: 4 },
      ),
    }),
  },
  { weight: 2, arbitrary: fc.constant({ kind: 'day' as const }) },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('item' as const), id: fc.constantFrom(...POOL), state: stateOf }),
  },
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant('group' as const), id: fc.constantFrom(...GROUPS), state: stateOf }),
  },
);

/** Every item in a group, scores equal and distinct (more rows than the top). */
const PRELUDE: Entry[] = POOL.map((item, i) => ({ item, amount: [3, 3, 5, 1, 2, 5, 4][i], group: GROUPS[i % 2] }));

/**
 * The next day names every item again and two more, amounts and groups drawn: each shard's archive
 * keeps only its best TOP ('h' and 'o' join a, b, d and 'x y' on shard 1 of 3: shardOf), so most runs
 * trim out of it an item the first day's archive still holds (archives_left).
 */
const secondDay: fc.Arbitrary<Entry[]> = fc.tuple(
  ...[...POOL, 'h', 'o'].map((item) =>
    fc.record({ item: fc.constant(item), amount: fc.integer({ min: 1, max: 5 }), group: fc.constantFrom(...GROUPS) }),
  ),
);

const CASES = SHARD_CELLS.flatMap(([topology, shards]) =>
  [false, true].map((review) => [topology, shards, review] as const),
);

const appFor = useSharedTestApps(T0);

describe.each(CASES)(
  'group moderation in archives (property, %s, %i shard(s), review %s)',
  (topology, shards, review) => {
    const world = appFor(topology);
    const { clock, http } = world;
    let board = 0;

    it('a group state applies to the archived rows of its items, also after they left every window', async () => {
      let leftOut = 0;
      let archivedGroups = 0;
      await fc.assert(
        fc.asyncProperty(secondDay, fc.array(step, { minLength: 1, maxLength: 6 }), async (second, rest) => {
          // Two days' items leave the window as each closes; only then is their group moderated.
          const steps: Step[] = [
            { kind: 'batch', entries: PRELUDE },
            { kind: 'day' },
            { kind: 'batch', entries: second },
            { kind: 'day' },
            { kind: 'group', id: 'g1', state: review ? 'allowed' : 'hidden' },
            ...rest,
          ];
          const boards = { name: `ag${shards}${review ? 1 : 0}n${board++}`, twin: '' };
          boards.twin = `${boards.name}t`;
          await createTwins(http, boards, review, { windows: WINDOWS, shards, groups: true });
          const model = new Moderated(review);
          for (const [i, s] of steps.entries()) {
            await apply(boards, s, model);
            if (i === 4 || i === Math.floor(steps.length / 2) || i === steps.length - 1)
              leftOut += await compare(boards, (item) => model.visible(item));
          }
          archivedGroups += await boundedByArchives(boards);
          await clearAll(http, boards.name, review);
          await compare(boards, () => true);
          await sameArchiveAnswers(http, boards);
          for (const b of [boards.name, boards.twin]) await http().delete(`/admin/boards/${b}`).set(ADMIN).expect(204);
        }),
        { numRuns: topology === 'single' ? 25 : 10 },
      );
      expect(leftOut).toBeGreaterThan(0); // not vacuous: some archived row was left out
      expect(archivedGroups).toBeGreaterThan(0); // and some group was kept for archived rows only
    }, 300_000);

    async function apply(boards: { name: string; twin: string }, s: Step, model: Moderated): Promise<void> {
      if (s.kind === 'day') {
        clock.advanceMs(DAY_MS);
        // Archives the day that closed on both boards (a read drains it in chunks).
        for (const b of [boards.name, boards.twin]) await read(b, '/archives?window=day&limit=10');
        return;
      }
      await applyStep(http, boards, s, model);
    }

    const read = (b: string, route: string) => readArchived(http, b, route);

    /** Archive reads (and one shard's previous ranks) against the model; answers the archived rows left out. */
    async function compare(boards: { name: string; twin: string }, visible: (item: string) => boolean) {
      const stored = (await read(boards.twin, '/archives?window=day&limit=10')).body.periods as Period[];
      const mine = (await read(boards.name, '/archives?window=day&limit=10')).body.periods as Period[];
      const expected = stored.map((period) => ({
        from: period.from,
        items: visibleRowsModel(rowsOf(period.items), visible),
      }));
      expect(mine.map((period) => [period.from, rowsOf(period.items)])).toEqual(
        expected.map((period) => [period.from, period.items]),
      );
      for (const period of expected) {
        const page = await read(boards.name, `/archive?window=day&at=${period.from}&offset=1&limit=2`);
        expect([period.from, page.status, rowsOf(page.body.items ?? []), page.body.nextOffset]).toEqual([
          period.from,
          200,
          period.items.slice(1, 3),
          period.items.length > 3 ? 3 : null,
        ]);
      }
      if (shards === 1) {
        const previous = new Map((expected[0]?.items ?? []).map((row) => [row.item, row.rank]));
        const { body } = await http()
          .post(`/boards/${boards.name}/lookup`)
          .send({ window: 'day', items: POOL })
          .expect(200);
        expect(
          body.items.map((row: { item: string; previousRank: number | null }) => [row.item, row.previousRank]),
        ).toEqual(POOL.map((item) => [item, visible(item) ? (previous.get(item) ?? null) : null]));
      }
      return stored.flatMap((period) => period.items).filter((row) => !visible(row.item)).length;
    }

    /**
     * The groups kept for archived rows (groups_lib's archived map) and the items the archives hold
     * (archive_held_lib) are, on each shard, only items with a row in one of its kept archives' texts;
     * none is pending once every archive is written. Answers how many items the archived maps hold.
     */
    async function boundedByArchives(boards: { name: string; twin: string }): Promise<number> {
      const client = world.redis.client;
      const cfgs = [
        ...(await world.redis.keys(`board:${boards.name}}:cfg`)),
        ...(await world.redis.keys(`board:${boards.name}/*}:cfg`)),
      ];
      let kept = 0;
      for (const cfg of cfgs) {
        const tag = cfg.slice(0, -'cfg'.length);
        const snaps = await world.redis.keys(`${tag.slice(tag.indexOf('board:'))}day:snap:*`);
        const texts = await Promise.all(snaps.map((key) => client.get(key)));
        const archived = new Set(
          texts.flatMap((text) =>
            (text ?? '')
              .split('\x1e')
              .slice(1)
              .map((row) => row.split('\x1f')[0]),
          ),
        );
        const outside = (items: string[]) => items.filter((item) => !archived.has(item));
        const groups = await client.hkeys(`${tag}grouparch`);
        kept += groups.length;
        expect([
          cfg,
          outside(groups),
          outside(await client.zrange(`${tag}day:archheld`, 0, -1)),
          await client.zrange(`${tag}day:archpend`, 0, -1),
        ]).toEqual([cfg, [], [], []]);
      }
      return kept;
    }
  },
);

describe.each(TOPOLOGIES)('archived items a group state may reach (%s)', (topology) => {
  const { clock, http } = appFor(topology);

  it(`refuses a group state reaching past ${MODERATED_GROUP_ARCHIVED_ITEMS_PER_SHARD} archived items on a shard, nothing stored`, async () => {
    const most = MODERATED_GROUP_ARCHIVED_ITEMS_PER_SHARD;
    const windows = [{ name: 'day', calendar: 'day', archive: { keep: 1, top: most + 1 } }];
    await http().put('/admin/boards/arch-bound').set(ADMIN).send({ windows, groups: true }).expect(201);
    const items = Array.from({ length: most + 1 }, (_, n) => ({ item: `i${n}`, amount: 1 + n, group: 'big' }));
    for (let first = 0; first < items.length; first += 200)
      await http()
        .post('/boards/arch-bound/increments')
        .send({ items: items.slice(first, first + 200) })
        .expect(200);
    clock.advanceMs(DAY_MS);
    // The app drains 3 fields a call here (EXPIRE_CHUNK): the period's archive takes a few hundred reads.
    await readArchived(http, 'arch-bound', '/archives?window=day&limit=1', 2000);
    const at = '/admin/boards/arch-bound/moderation/groups/big';
    const refused = await http().put(at).set(ADMIN).send({ state: 'hidden' });
    expect([refused.status, refused.body.code]).toEqual([422, 'REQUEST_TOO_COSTLY']);
    const { body } = await readArchived(http, 'arch-bound', '/archive?window=day&limit=1');
    expect((body.items as Row[]).map((row) => row.item)).toEqual([`i${most}`]);
    await http().delete('/admin/boards/arch-bound').set(ADMIN).expect(204);
  }, 120_000);
});
