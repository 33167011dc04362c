import fc from 'fast-check';
import { RankingModel } from '../support/ranking-model';
import { moveClock, RankingOp, rankingOps } from '../support/ranking-ops';
import { useRankingService } from '../../harness/ranking';
import { SHARD_CELLS } from '../../harness/redis';

/** One window of six 20 s slots; spans of 1, 2, 3 and 6 slots are read from it and checked against windows of that period. */
const WINDOW = { name: 'w', periodSec: 120, intervalSec: 20 };
const SPANS_SEC = [20, 40, 60, 120];
const MODEL_WINDOWS = [
  WINDOW,
  ...SPANS_SEC.map((spanSec) => ({ name: `s${spanSec}`, periodSec: spanSec, intervalSec: 20 })),
];
const ITEMS = ['a', 'b', 'c', 'd', 'é', 'a b/c', 'z'];

const op = rankingOps({ items: ITEMS, users: ['u'], maxAdvanceMs: 90_000, boundaries: [20] }).filter(
  (step): step is Exclude<RankingOp, { kind: 'like' | 'unlike' }> => step.kind !== 'like' && step.kind !== 'unlike',
);
const CASES = SHARD_CELLS;

describe.each(CASES)(
  'spans chosen at read time against an in-memory model (property, %s, %i shard(s))',
  (topology, shards) => {
    const setup = useRankingService(topology, { EXPIRE_CHUNK: '3' });
    const { clock } = setup;
    let board = 0;
    let listedRows = 0;

    it("top, item and around over a span equal a window of the span's period, after every step", async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 1_600_000_000_000, max: 1_900_000_000_000 }),
          fc.array(op, { minLength: 1, maxLength: 25 }),
          async (startMs, ops) => {
            const name = `sp${board++}`;
            clock.setMs(startMs);
            await setup.ranking.putBoard({
              name,
              windows: [{ name: WINDOW.name, period: WINDOW.periodSec, interval: WINDOW.intervalSec }],
              shards,
            });
            const model = new RankingModel(MODEL_WINDOWS);
            for (const step of ops) {
              const nowMs = clock.nowMs();
              if (step.kind === 'inc') {
                await setup.ranking.increment(name, step.item, step.amount);
                model.increment(nowMs, step.item, step.amount);
              } else if (step.kind === 'batch') {
                await setup.ranking.incrementBatch(name, step.entries);
                for (const entry of step.entries) model.increment(nowMs, entry.item, entry.amount);
              } else {
                moveClock(clock, step);
              }
              for (const spanSec of SPANS_SEC) await compare(name, model, spanSec);
            }
            await setup.ranking.deleteBoard(name);
          },
        ),
        {
          numRuns: 12,
          // Always among the runs: every item in every span, compared twice (56 rows).
          examples: [
            [
              1_600_000_000_000,
              [
                { kind: 'batch', entries: ITEMS.map((item, i) => ({ item, amount: i + 1 })) },
                { kind: 'advance', ms: 0 },
              ],
            ],
          ],
        },
      );
      expect(listedRows).toBeGreaterThan(50); // not vacuous: many listings held rows
    });

    async function compare(name: string, model: RankingModel, spanSec: number): Promise<void> {
      const nowMs = clock.nowMs();
      const span = `${spanSec}s`;
      const expected = model.listing(`s${spanSec}`, nowMs);
      listedRows += expected.length;
      const rows = (items: Array<{ rank: number; item: string; score: number }>) =>
        items.map(({ rank, item, score }) => ({ rank, item, score }));
      const top = await setup.ranking.top(name, 'w', 0, 10, { span });
      expect(rows(top.items)).toEqual(expected.slice(0, 10));
      expect(Number(top.to) - Number(top.from)).toBe(spanSec);
      expect(rows((await setup.ranking.top(name, 'w', 2, 3, { span })).items)).toEqual(expected.slice(2, 5));
      const sums = model.sums(`s${spanSec}`, nowMs);
      // One expect for all items: an expectation costs more to build than a row to compare.
      const reads = [];
      for (const item of ITEMS) {
        const answer = await setup.ranking.item(name, 'w', item, { span });
        const around = await setup.ranking.around(name, 'w', item, 2, { span });
        reads.push({ item, score: answer.score, rank: answer.rank, around: rows(around.items) });
      }
      expect(reads).toEqual(
        ITEMS.map((item) => {
          const at = expected.findIndex((row) => row.item === item);
          return {
            item,
            score: sums.get(item) ?? 0,
            rank: expected[at]?.rank ?? null,
            around: at === -1 ? [] : expected.slice(Math.max(0, at - 2), at + 3),
          };
        }),
      );
    }
  },
);
