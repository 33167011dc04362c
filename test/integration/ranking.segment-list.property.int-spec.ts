import fc from 'fast-check';
import { RankingModel } from '../support/ranking-model';
import { useRankingService } from '../../harness/ranking';
import { TOPOLOGIES } from '../../harness/redis';

/**
 * Windows that hold different items: `long`'s one slot of 40 s may start after `short`'s oldest slot,
 * and negative amounts leave an item listed in one window only; so the window listing the most items
 * of a segment changes from read to read.
 */
const WINDOWS = [
  { name: 'short', periodSec: 30, intervalSec: 10 },
  { name: 'long', periodSec: 40, intervalSec: 40 },
];
const ITEMS = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];
/** Names in byte order: the listing drains and counts them in this order. */
const SEGMENTS = ['s1', 's2', 's3'];

type Op =
  | { kind: 'inc'; entries: Array<{ item: string; amount: number; segments: string[] }> }
  | { kind: 'advance'; ms: number };

const entry = fc.record({
  item: fc.constantFrom(...ITEMS),
  amount: fc.integer({ min: -2, max: 5 }).filter((n) => n !== 0),
  segments: fc.subarray(SEGMENTS, { minLength: 1 }),
});
const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant('inc' as const), entries: fc.array(entry, { maxLength: 8 }) }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 45_000 }) }),
  },
);

/** The brute-force oracle: every event kept; a segment is live while one of its events' slots is. */
class SegmentListModel {
  private readonly segments = new Map(SEGMENTS.map((s) => [s, new RankingModel(WINDOWS)]));
  private readonly events: Array<{ atSec: number; segments: string[] }> = [];

  add(nowMs: number, item: string, amount: number, segments: string[]): void {
    this.events.push({ atSec: Math.floor(nowMs / 1000), segments });
    for (const s of segments) this.segments.get(s)!.increment(nowMs, item, amount);
  }

  /** GET /segments: the live segments by name, each with the most items any one of its windows lists. */
  listed(nowMs: number): Array<{ name: string; items: number }> {
    const nowSec = Math.floor(nowMs / 1000);
    const live = new Set<string>();
    for (const { atSec, segments } of this.events) {
      const end = Math.max(...WINDOWS.map((w) => atSec - (atSec % w.intervalSec) + w.periodSec));
      if (end > nowSec) for (const s of segments) live.add(s);
    }
    return [...live].sort().map((name) => {
      const model = this.segments.get(name)!;
      const counts = WINDOWS.map((w) => [...model.sums(w.name, nowMs).values()].filter((n) => n > 0).length);
      return { name, items: Math.max(...counts) };
    });
  }
}

/**
 * GET /boards/:board/segments against the model, on 1 shard and 3: each segment's `items` is counted
 * over the whole board (not added up per shard), and only after its expired slots are drained, whichever
 * segments came before it on the page (a 2-field expiry chunk: a drain takes several calls).
 */
describe.each(TOPOLOGIES)('the segment listing against a model (property, %s)', (topology) => {
  const setup = useRankingService(topology, { EXPIRE_CHUNK: '2' });
  const { clock } = setup;
  let run = 0;

  it('lists every live segment with its items, sharded or not, after every step', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1_600_000_000_000, max: 1_900_000_000_000 }),
        fc.array(op, { minLength: 1, maxLength: 20 }),
        async (startMs, ops) => {
          run++;
          clock.setMs(startMs);
          const windows = WINDOWS.map((w) => ({ name: w.name, period: w.periodSec, interval: w.intervalSec }));
          const boards = [`l${run}`, `m${run}`];
          await setup.ranking.putBoard({ name: boards[0], windows, shards: 1, segmentsMax: 10 });
          await setup.ranking.putBoard({ name: boards[1], windows, shards: 3, segmentsMax: 10 });
          const model = new SegmentListModel();
          for (const step of ops) {
            if (step.kind === 'advance') clock.advanceMs(step.ms);
            else if (step.entries.length > 0) {
              for (const board of boards) await setup.ranking.incrementBatch(board, step.entries);
              for (const e of step.entries) model.add(clock.nowMs(), e.item, e.amount, e.segments);
            }
            const wanted = model.listed(clock.nowMs());
            for (const board of boards) expect([board, await listSegments(board)]).toEqual([board, wanted]);
          }
          for (const board of boards) await setup.ranking.deleteBoard(board);
        },
      ),
      { numRuns: topology === 'single' ? 40 : 15 },
    );
    // Over 14 s measured on a busy 2-core machine, where a 21 s test also ran past 60 s: room to spare.
  }, 180_000);

  /** The whole listing; a 503 WINDOW_DRAINING (expired slots of many chunks) is retried, as a client would. */
  async function listSegments(board: string) {
    for (let attempt = 1; ; attempt++) {
      try {
        return (await setup.ranking.listSegments(board, { offset: 0, limit: 100 })).segments;
      } catch (error) {
        if ((error as { code?: string }).code !== 'WINDOW_DRAINING' || attempt >= 20) throw error;
      }
    }
  }
});
