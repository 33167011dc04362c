import fc from 'fast-check';
import { ADMIN } from '../../harness/app';
import { SHARD_CELLS } from '../../harness/redis';
import { useSharedTestApps } from '../support/app-world';
import { type Row, rowsOf, visibleRowsModel } from '../support/archive-rows';
import {
  applyStep,
  clearAll,
  createTwins,
  GROUPS,
  Moderated,
  POOL,
  type Segmented,
  type SegmentedStep,
  segmentedSteps,
} from '../support/moderation-twin';

/**
 * Group moderation in a rolling window's kept snapshots (issue #49), the board's and a segment's,
 * against a brute force, on 1 and 3 shards (one Redis and a Cluster): a group hidden (on a review
 * board allowed) at any time applies to every snapshot row of each item whose latest group it is,
 * also once the item left every window while snapshots still keep its rows: `history` at each kept
 * boundary (board and `?segment=`) lists the twin's stored rows without the items left out now,
 * ranked among the rest, and (one shard) the previous ranks likewise. Each run then clears (allows)
 * every group and item and answers exactly as the twin.
 */
const T0 = Date.UTC(2026, 2, 2, 12);
const MINUTE_MS = 60_000;
const KEEP = 4;
const WINDOWS = [{ name: 'w', period: '2m', interval: '1m', snapshots: { keep: KEEP, top: 4 } }];
const SEGMENT = 's';

type Step = SegmentedStep<{ kind: 'move'; minutes: number }>;

const step = segmentedSteps(SEGMENT, fc.record({ kind: fc.constant('move' as const), minutes: fc.constantFrom(1, 2) }));

/**
 * Every item in a group, scores equal and distinct (more rows than the top); the segment holds those
 * scoring 3 or less, so its snapshots keep rows the board's top leaves out, also on each of 3 shards
 * (fillers the segment lacks, better than any, fill every shard's top).
 */
const PRELUDE: Segmented[] = [
  ...POOL.map((item, i) => {
    const amount = [3, 3, 5, 1, 2, 5, 4][i];
    return { item, amount, group: GROUPS[i % 2], segments: amount <= 3 ? [SEGMENT] : undefined };
  }),
  ...Array.from({ length: 24 }, (_, n) => ({ item: `f${n}`, amount: 10 + n, group: 'g2' })),
];

const CASES = SHARD_CELLS.flatMap(([topology, shards]) =>
  [false, true].map((review) => [topology, shards, review] as const),
);

const appFor = useSharedTestApps(T0);

describe.each(CASES)(
  'group moderation in kept snapshots (property, %s, %i shard(s), review %s)',
  (topology, shards, review) => {
    const { clock, http } = appFor(topology);
    let board = 0;

    it('a group state applies to the snapshot rows of its items, also after they left every window', async () => {
      let leftOut = 0;
      await fc.assert(
        fc.asyncProperty(fc.array(step, { minLength: 2, maxLength: 8 }), async (rest) => {
          // The prelude's items leave the window two minutes on, while four minutes of snapshots keep them;
          // the segment, not visited in between, stores its snapshot of them only after the board dropped them.
          const steps: Step[] = [
            { kind: 'batch', entries: PRELUDE },
            { kind: 'move', minutes: 2 },
            { kind: 'group', id: 'g1', state: review ? 'allowed' : 'hidden' },
            ...rest,
          ];
          const boards = { name: `hg${shards}${review ? 1 : 0}n${board++}`, twin: '' };
          boards.twin = `${boards.name}t`;
          const settings = { windows: WINDOWS, shards, groups: true, segments: { max: 4 } };
          await createTwins(http, boards, review, settings);
          const model = new Moderated(review);
          for (const [i, s] of steps.entries()) {
            await apply(boards, s, model);
            if (i === 2 || i === Math.floor(steps.length / 2) || i === steps.length - 1)
              leftOut += await compare(boards, (item) => model.visible(item));
          }
          await clearAll(http, boards.name, review);
          await compare(boards, () => true);
          for (const b of [boards.name, boards.twin]) await http().delete(`/admin/boards/${b}`).set(ADMIN).expect(204);
        }),
        // As many runs as find a group's state put over an item's own in the same cases as twice as many did.
        { numRuns: topology === 'single' ? 8 : 3 },
      );
      expect(leftOut).toBeGreaterThan(0); // not vacuous: some kept row was left out
    }, 300_000);

    async function apply(boards: { name: string; twin: string }, s: Step, model: Moderated): Promise<void> {
      if (s.kind === 'move') {
        clock.advanceMs(s.minutes * MINUTE_MS);
        // Crosses the boundary (the board's, then the segment's snapshots) and drains what expired:
        // an item leaves the board's window before the segment stores its row.
        for (const b of [boards.name, boards.twin])
          for (const query of ['', `&segment=${SEGMENT}`]) await settled(b, `/top?window=w&limit=1${query}`);
        return;
      }
      await applyStep(http, boards, s, model);
    }

    async function settled(b: string, route: string): Promise<Record<string, unknown>> {
      for (let attempt = 0; ; attempt++) {
        const { status, body } = await http().get(`/boards/${b}${route}`);
        if (status === 200 || status === 404) return { status, ...body };
        if (status !== 503 || attempt >= 20) throw new Error(`/boards/${b}${route} answered ${status}`);
      }
    }

    /** Every kept snapshot (board and segment) and one shard's previous ranks against the model; answers the rows left out. */
    async function compare(boards: { name: string; twin: string }, visible: (item: string) => boolean) {
      const nowSec = Math.floor(clock.nowMs() / 1000);
      let left = 0;
      for (const query of ['', `&segment=${SEGMENT}`])
        for (let k = 0; k <= KEEP; k++) {
          const route = `/history?window=w&at=${nowSec - 60 * k}${query}`;
          const theirs = await settled(boards.twin, route);
          const mine = await settled(boards.name, route);
          const stored = rowsOf(theirs.items ?? []);
          expect([route, mine.status, rowsOf(mine.items ?? [])]).toEqual([
            route,
            theirs.status,
            visibleRowsModel(stored, visible),
          ]);
          left += stored.filter((row: Row) => !visible(row.item)).length;
        }
      if (shards === 1) await comparePrevious(boards, visible);
      return left;
    }

    async function comparePrevious(boards: { name: string; twin: string }, visible: (item: string) => boolean) {
      const latest = rowsOf((await settled(boards.twin, '/history?window=w')).items ?? []);
      const previous = new Map(visibleRowsModel(latest, visible).map((row) => [row.item, row.rank]));
      const { body } = await http()
        .post(`/boards/${boards.name}/lookup`)
        .send({ window: 'w', items: POOL })
        .expect(200);
      expect(
        body.items.map((row: { item: string; previousRank: number | null }) => [row.item, row.previousRank]),
      ).toEqual(POOL.map((item) => [item, visible(item) ? (previous.get(item) ?? null) : null]));
    }
  },
);
