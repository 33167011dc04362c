import fc from 'fast-check';
import { moveClock, RankingOp } from '../support/ranking-ops';
import { useRankingService } from '../../harness/ranking';
import { TOPOLOGIES } from '../../harness/redis';
import { TiesModel } from '../support/ties-model';
import { shardOf } from '../../src/ranking/core/shard-math';

const WINDOWS = [
  { name: 'short', periodSec: 30, intervalSec: 10 },
  { name: 'long', periodSec: 120, intervalSec: 40 },
];
const ITEMS = ['a', 'b', 'c', 'd', 'é', 'a b/c'];

/** Positive amounts only: a score then moves on every change, so "when it reached its score" is one moment. */
const item = fc.constantFrom(...ITEMS);
const amount = fc.integer({ min: 1, max: 3 });
const op: fc.Arbitrary<RankingOp> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('inc' as const), item, amount }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('batch' as const),
      entries: fc.array(fc.record({ item, amount }), { minLength: 1, maxLength: 5 }),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 50_000 }) }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('toBoundary' as const),
      intervalSec: fc.constantFrom(10, 40),
      offsetMs: fc.constantFrom(-1, 0, 1),
    }),
  },
);

/** Always among the runs: every item at one score, listed in both windows after three steps. */
const ALL_TIED: [number, RankingOp[]] = [
  1_600_000_000_000,
  [
    { kind: 'batch', entries: ITEMS.map((item) => ({ item, amount: 1 })) },
    { kind: 'advance', ms: 0 },
    { kind: 'advance', ms: 0 },
  ],
];

/** An increment's answer: its item's standing in each window. */
type Written = { item: string; windows: Record<string, { rank: number | null }> };

describe.each(TOPOLOGIES)('ties: first against a brute-force model (property, %s)', (topology) => {
  const setup = useRankingService(topology);
  const { clock } = setup;
  let board = 0;
  let equalScores = 0;

  // Sharded: top pages merge the shards by score and tie mark, an item's rank counts the items ahead
  // of its mark on every shard, lookups and around read the same order.
  it.each([
    [1, 25],
    [3, 25],
  ])(
    '%i shard(s): every listing is strict and orders equal scores by when they were reached, on every read',
    async (shards, numRuns) => {
      equalScores = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 1_600_000_000_000, max: 1_900_000_000_000 }),
          fc.array(op, { minLength: 1, maxLength: 40 }),
          async (startMs, ops) => {
            const name = `t${board++}`;
            clock.setMs(startMs);
            const windows = WINDOWS.map((w) => ({ name: w.name, period: w.periodSec, interval: w.intervalSec }));
            await setup.ranking.putBoard({ name, windows, shards, ties: 'first' });
            const model = new TiesModel(WINDOWS, shards > 1 ? (id) => shardOf(id, shards) : undefined);
            for (const step of ops) {
              const nowMs = clock.nowMs();
              let written: Written | undefined;
              if (step.kind === 'inc') {
                const answer = await setup.ranking.increment(name, step.item, step.amount);
                written = { item: step.item, windows: answer.body.windows };
                model.increment(nowMs, step.item, step.amount);
              } else if (step.kind === 'batch') {
                await setup.ranking.incrementBatch(name, step.entries);
                model.expire(nowMs);
                for (const e of step.entries) model.increment(nowMs, e.item, e.amount);
              } else if (step.kind === 'advance' || step.kind === 'toBoundary') {
                moveClock(clock, step);
                model.expire(clock.nowMs());
              }
              for (const w of WINDOWS) await compare(name, w.name, model, written);
            }
            await setup.ranking.deleteBoard(name);
          },
        ),
        { numRuns, examples: [ALL_TIED] },
      );
      // Not vacuous: many listings held equal scores (ALL_TIED alone: 30 adjacent pairs).
      expect(equalScores).toBeGreaterThan(20);
    },
  );

  // Long runs of one score: more ties on a shard than tie_ahead reads in one call (TIE.RUN_READ, 32),
  // so ranks come from its binary search over the rest.
  it('3 shards: 150 items tied at one score rank in the order they reached it, on every read', async () => {
    clock.setMs(1_700_000_000_000);
    const windows = [{ name: 'w', period: 3600, interval: 60 }];
    await setup.ranking.putBoard({ name: 'long', windows, shards: 3, ties: 'first' });
    const ids = Array.from({ length: 150 }, (_, i) => `id${(i * 37) % 150}`);
    for (const id of ids) {
      await setup.ranking.increment('long', id, 1);
      clock.advanceMs(1);
    }
    const top = await setup.ranking.top('long', 'w', 0, 200);
    expect(top.items.map((row) => [row.rank, row.item])).toEqual(ids.map((id, i) => [i + 1, id]));
    for (const at of [0, 40, 77, 149]) {
      expect((await setup.ranking.item('long', 'w', ids[at])).rank).toBe(at + 1);
      const around = await setup.ranking.around('long', 'w', ids[at], 2);
      expect(around.items.map((row) => row.item)).toEqual(ids.slice(Math.max(0, at - 2), at + 3));
    }
    const ranks = await setup.lookup.lookup({
      name: 'long',
      window: 'w',
      items: ids,
      relative: false,
      withData: false,
    });
    expect(ranks.items.map((row) => row.rank)).toEqual(ids.map((_, i) => i + 1));
    const late = await setup.ranking.increment('long', 'late', 1);
    expect(late.body.windows.w.rank).toBe(151);
    await setup.ranking.deleteBoard('long');
  });

  async function compare(name: string, window: string, model: TiesModel, written?: Written): Promise<void> {
    const expected = model.rows(window);
    const top = await setup.ranking.top(name, window, 0, 100);
    const listed = top.items.map((row) => row.item);
    // The write's answer ranked the item where the listing puts it (nothing moved since).
    if (written)
      expect([written.item, written.windows[window].rank]).toEqual([written.item, listed.indexOf(written.item) + 1]);
    expect(top.items.map((row) => [row.rank, row.score])).toEqual(expected.map((row, i) => [i + 1, row.score]));
    expect([...listed].sort()).toEqual(expected.map((row) => row.item).sort());
    for (let i = 1; i < listed.length; i++) {
      expect([listed[i - 1], listed[i], model.mayPrecede(window, listed[i - 1], listed[i])]).toEqual([
        listed[i - 1],
        listed[i],
        true,
      ]);
      if (top.items[i].score === top.items[i - 1].score) equalScores++;
    }
    // The same order read another way: each item's own rank, and a page from the middle.
    // Percentile: the share of the other listed items ranked after it, in the same strict order as ranks.
    const percentile = (i: number) =>
      listed.length === 1 ? 100 : Math.round(((listed.length - 1 - i) / (listed.length - 1)) * 10000) / 100;
    for (const [i, item] of listed.entries()) {
      const read = await setup.ranking.item(name, window, item);
      expect([item, read.rank, read.percentile]).toEqual([item, i + 1, percentile(i)]);
    }
    if (listed.length > 2) {
      const page = await setup.ranking.top(name, window, 1, 2);
      expect(page.items.map((row) => [row.rank, row.item])).toEqual([
        [2, listed[1]],
        [3, listed[2]],
      ]);
      const around = await setup.ranking.around(name, window, listed[1], 1);
      expect(around.items.map((row) => [row.rank, row.item])).toEqual(listed.slice(0, 3).map((id, i) => [i + 1, id]));
    }
    // Lookups: board ranks, and ranks among the ids given (every other listed id, and one absent).
    if (listed.length === 0) return;
    const asked = [...listed.filter((_, i) => i % 2 === 1), 'absent'];
    const ranks = await setup.lookup.lookup({ name, window, items: listed, relative: false, withData: false });
    expect(ranks.items.map((row) => row.rank)).toEqual(listed.map((_, i) => i + 1));
    const among = await setup.lookup.lookup({ name, window, items: asked, relative: true, withData: false });
    expect(among.items.map((row) => row.rank)).toEqual(asked.map((id, i) => (id === 'absent' ? null : i + 1)));
  }
});
