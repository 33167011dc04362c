import fc from 'fast-check';
import { DomainError } from '../../src/common/errors';
import { shardOf } from '../../src/ranking/core/shard-math';
import { RankingModel } from '../support/ranking-model';
import { moveClock } from '../support/ranking-ops';
import { useRankingService } from '../support/ranking';
import { TOPOLOGIES } from '../support/redis';

const WINDOWS = [
  { name: 'short', periodSec: 30, intervalSec: 10 },
  { name: 'long', periodSec: 120, intervalSec: 40 },
];
/** `?span=80s` on `long` reads as a window of its newest two slots: the model has it as a window of its own. */
const SPAN = { name: 'long80', periodSec: 80, intervalSec: 40 };
const MODEL_WINDOWS = [...WINDOWS, SPAN];
const ITEMS = ['a', 'b', 'c', 'd', 'é', 'a b/c'];
const SEGMENTS = ['en', 'fr', 'de:x', 'pt.br'];
/** Small, so SEGMENT_LIMIT refusals and segments falling out of it both happen. */
const SEGMENTS_MAX = 2;
const PASS = { leaseMs: 30_000, claimBatch: 100 };

type Op =
  | { kind: 'inc'; item: string; amount: number; segments: string[] }
  | { kind: 'advance'; ms: number }
  | { kind: 'toBoundary'; intervalSec: number; offsetMs: number }
  | { kind: 'expire' };

const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant('inc' as const),
      item: fc.constantFrom(...ITEMS),
      amount: fc.integer({ min: -3, max: 6 }).filter((n) => n !== 0),
      segments: fc.subarray(SEGMENTS),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 90_000 }) }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('toBoundary' as const),
      intervalSec: fc.constantFrom(10, 40),
      offsetMs: fc.constantFrom(-1, 0, 1),
    }),
  },
  { weight: 2, arbitrary: fc.constant({ kind: 'expire' as const }) },
);

/**
 * The brute-force oracle: every event kept, the board's and each segment's listing recomputed from
 * them, and the segments live on a shard (an event in one whose newest slot has not expired).
 */
class SegmentModel {
  readonly board = new RankingModel(MODEL_WINDOWS);
  readonly segments = new Map(SEGMENTS.map((s) => [s, new RankingModel(MODEL_WINDOWS)]));
  private readonly events: Array<{ atMs: number; item: string; segments: string[] }> = [];

  constructor(readonly shards: number) {}

  /** Applies the event unless it would make more than SEGMENTS_MAX segments live on its shard; answers whether it did. */
  increment(nowMs: number, item: string, amount: number, segments: string[]): boolean {
    const live = this.live(shardOf(item, this.shards), nowMs);
    const fresh = segments.filter((s) => !live.has(s));
    if (fresh.length > 0 && live.size + fresh.length > SEGMENTS_MAX) return false;
    this.events.push({ atMs: nowMs, item, segments });
    this.board.increment(nowMs, item, amount);
    for (const s of segments) this.segments.get(s)!.increment(nowMs, item, amount);
    return true;
  }

  live(shard: number, nowMs: number): Set<string> {
    const nowSec = Math.floor(nowMs / 1000);
    const live = new Set<string>();
    for (const event of this.events) {
      if (shardOf(event.item, this.shards) !== shard) continue;
      const atSec = Math.floor(event.atMs / 1000);
      const end = Math.max(...WINDOWS.map((w) => atSec - (atSec % w.intervalSec) + w.periodSec));
      if (end > nowSec) for (const s of event.segments) live.add(s);
    }
    return live;
  }
}

describe.each(TOPOLOGIES)('segments against a model keeping every event (property, %s)', (topology) => {
  // A tiny chunk, so expiry of a slot often takes several calls.
  const setup = useRankingService(topology, { EXPIRE_CHUNK: '2' });
  const { clock } = setup;
  let board = 0;
  let refused = 0;

  it.each([1, 3])('each segment reads as a board of its events only (%i shards)', async (shards) => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1_600_000_000_000, max: 1_900_000_000_000 }),
        fc.array(op, { minLength: 1, maxLength: 30 }),
        async (startMs, ops) => {
          const name = `s${board++}`;
          clock.setMs(startMs);
          const windows = WINDOWS.map((w) => ({ name: w.name, period: w.periodSec, interval: w.intervalSec }));
          await setup.ranking.putBoard(name, windows, shards, false, undefined, undefined, SEGMENTS_MAX);
          const model = new SegmentModel(shards);
          for (const step of ops) {
            if (step.kind === 'inc') await increment(name, model, step);
            else if (step.kind === 'expire') await setup.ranking.expireDue(PASS);
            else moveClock(clock, step);
            await compare(name, model);
          }
          await setup.ranking.deleteBoard(name);
        },
      ),
      { numRuns: 15 },
    );
  });

  afterAll(() => {
    // Not vacuous: the limit refused some events.
    expect(refused).toBeGreaterThan(0);
  });

  async function increment(name: string, model: SegmentModel, step: Extract<Op, { kind: 'inc' }>): Promise<void> {
    const { item, amount } = step;
    const segments = step.segments.length === 0 ? undefined : step.segments;
    const applied = model.increment(clock.nowMs(), item, amount, step.segments);
    const written = setup.ranking.increment(name, item, amount, undefined, undefined, undefined, undefined, segments);
    if (applied) {
      await written;
      return;
    }
    refused++;
    await expect(written).rejects.toMatchObject({ code: 'SEGMENT_LIMIT' });
    await written.catch((error: unknown) => expect(error).toBeInstanceOf(DomainError));
  }

  async function compare(name: string, model: SegmentModel): Promise<void> {
    const nowMs = clock.nowMs();
    for (const w of WINDOWS) {
      const top = await readTop(name, w.name);
      expect(top).toEqual(model.board.listed(w.name, nowMs));
      for (const segment of SEGMENTS) {
        const segmentModel = model.segments.get(segment)!;
        expect(await readTop(name, w.name, segment)).toEqual(segmentModel.listed(w.name, nowMs));
        const sums = segmentModel.sums(w.name, nowMs);
        const listing = segmentModel.listing(w.name, nowMs);
        for (const id of ITEMS.slice(0, 2)) {
          const read = await setup.ranking.item(name, w.name, id, { segment });
          expect([id, read.score, read.rank]).toEqual([
            id,
            sums.get(id) ?? 0,
            listing.find((row) => row.item === id)?.rank ?? null,
          ]);
        }
      }
    }
    for (const segment of SEGMENTS) {
      const span = await setup.ranking.top(name, 'long', 0, 1000, { segment, span: '80s' });
      const rows = span.items.map(({ item, score, rank }) => ({ item, score, rank }));
      expect(rows).toEqual(model.segments.get(segment)!.listing(SPAN.name, nowMs));
    }
  }

  async function readTop(name: string, window: string, segment?: string) {
    let top = await setup.ranking.top(name, window, 0, 1000, { segment });
    for (let i = 0; top.draining && i < 50; i++) top = await setup.ranking.top(name, window, 0, 1000, { segment });
    expect(top.draining).toBe(false);
    return top.items;
  }
});
