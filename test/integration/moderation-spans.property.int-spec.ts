import fc from 'fast-check';
import { ADMIN } from '../../harness/app';
import { SHARD_CELLS } from '../../harness/redis';
import { useSharedTestApps } from '../support/app-world';
import {
  applyStep,
  clearAll,
  compareListing,
  MINUTE_MS,
  Moderated,
  path,
  POOL,
  PRELUDE,
  sameAnswers,
  Step,
  step,
  createTwins,
} from '../support/moderation-twin';

/**
 * Moderation of span reads (`?span=`), on 1 and 3 shards (one Redis and a Cluster): a moderated board
 * and a never-moderated twin receive the same events (each naming its item's group); after random
 * increments, clock moves, and items and groups hidden, allowed and cleared, every span read of the
 * moderated board (top and a page of it, items, around) answers the twin's span listing without the
 * items moderation leaves out (an item's state is its own, else its group's), ranks closing the gaps;
 * an item read of a left-out row answers its score, hidden: true and rank null. Each run then clears
 * (or, on a review board, allows) every group and item and answers exactly as the twin.
 */
const T0 = 1_700_002_800_000;
const SPANS = ['1m', '4m'];

const CASES = SHARD_CELLS.flatMap(([topology, shards]) =>
  [false, true].map((review) => [topology, shards, review] as const),
);

/** One app per topology for every case: each case names its boards apart and reads time relative to the clock. */
const appFor = useSharedTestApps(T0);

describe.each(CASES)('moderation of spans (property, %s, %i shard(s), review %s)', (topology, shards, review) => {
  const world = appFor(topology);
  const { clock, http } = world;
  let board = 0;

  it("every span read lists the twin's span rows that are visible, ranks closed; clearing equals never moderated", async () => {
    let leftOut = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.shuffledSubarray(POOL, { minLength: 3, maxLength: 3 }),
        fc.array(step, { minLength: 2, maxLength: 6 }),
        async ([hidden, ...allowed], rest) => {
          // Every run starts with a listing of equal and distinct scores and a listed item left out.
          const steps: Step[] = [
            { kind: 'batch', entries: PRELUDE },
            { kind: 'item', id: hidden, state: 'hidden' },
            ...allowed.map((id): Step => ({ kind: 'item', id, state: review ? 'allowed' : 'hidden' })),
            ...rest,
          ];
          const boards = { name: `ms${shards}${review ? 1 : 0}n${board++}`, twin: '' };
          boards.twin = `${boards.name}t`;
          const windows = [{ name: 'w', period: '4m', interval: '1m' }];
          await createTwins(http, boards, review, { windows, shards, groups: true });
          const model = new Moderated(review);
          for (const [i, s] of steps.entries()) {
            if (s.kind === 'move') clock.advanceMs(s.minutes * MINUTE_MS);
            await applyStep(http, boards, s, model);
            if (i === Math.floor(steps.length / 2) || i === steps.length - 1)
              for (const span of SPANS)
                leftOut += await compareListing(http, boards, `window=w&span=${span}`, (item) => model.visible(item));
          }
          await clearAll(http, boards.name, review);
          const reads = SPANS.flatMap((span) => [
            `/top?window=w&span=${span}&limit=50`,
            `/top?window=w&span=${span}&offset=1&limit=2`,
            ...POOL.flatMap((item) => [
              `/items/${path(item)}?window=w&span=${span}`,
              `/items/${path(item)}/around?window=w&span=${span}&radius=1`,
            ]),
          ]);
          await sameAnswers(http, boards, reads);
          for (const b of [boards.name, boards.twin]) await http().delete(`/admin/boards/${b}`).set(ADMIN).expect(204);
        },
      ),
      {
        numRuns: topology === 'single' ? 4 : 3,
        examples: [
          // The middle comparison runs while the three moderated items are listed, then a group is moderated.
          // A hidden item whose span sum falls below 0 answers it (not listed, not hidden), as the twin.
          [
            ['a', 'd', 'e'],
            [
              { kind: 'item', id: 'd', state: 'hidden' },
              { kind: 'group', id: 'g1', state: 'hidden' },
              {
                kind: 'batch',
                entries: [
                  { item: 'd', amount: -2, group: 'g1' },
                  { item: 'a', amount: 1, group: 'g1' },
                ],
              },
            ],
          ],
          // Every event leaves the window; a span read (which drains nothing) answers no group, as the twin.
          [
            ['d', 'b', 'x y'],
            [
              { kind: 'move', minutes: 4 },
              { kind: 'batch', entries: [{ item: 'a', amount: 1, group: 'g1' }] },
              { kind: 'item', id: 'a', state: 'hidden' },
            ],
          ],
          [
            ['a', 'b', 'c'],
            [
              { kind: 'move', minutes: 1 },
              { kind: 'batch', entries: [{ item: 'd', amount: 1, group: 'g2' }] },
              { kind: 'group', id: 'g2', state: review ? 'allowed' : 'hidden' },
            ],
          ],
        ],
      },
    );
    expect(leftOut).toBeGreaterThan(0); // not vacuous: some listed item was left out (certain in the example)
  }, 180_000);
});
