import fc from 'fast-check';
import { FakeClock } from '../../harness/clock';

/** One step of a random ranking workload (property tests). */
export type RankingOp =
  | { kind: 'inc'; item: string; amount: number }
  | { kind: 'batch'; entries: Array<{ item: string; amount: number }> }
  | { kind: 'like' | 'unlike'; item: string; user: string }
  | { kind: 'advance'; ms: number }
  | { kind: 'toBoundary'; intervalSec: number; offsetMs: number };

export interface RankingOpOptions {
  items: string[];
  users: string[];
  maxAdvanceMs: number;
  /** Slot intervals (s) to jump to the edges of (-1, 0, +1 ms); none: no such steps. */
  boundaries?: number[];
  maxBatch?: number;
}

/** Increments (some negative), batches, likes, unlikes and clock moves over a small set of ids. */
export function rankingOps(options: RankingOpOptions): fc.Arbitrary<RankingOp> {
  const item = fc.constantFrom(...options.items);
  const amount = fc.integer({ min: -4, max: 6 }).filter((n) => n !== 0);
  const steps: Array<fc.WeightedArbitrary<RankingOp>> = [
    { weight: 5, arbitrary: fc.record({ kind: fc.constant('inc' as const), item, amount }) },
    {
      weight: 2,
      arbitrary: fc.record({
        kind: fc.constant('batch' as const),
        entries: fc.array(fc.record({ item, amount }), { minLength: 1, maxLength: options.maxBatch ?? 6 }),
      }),
    },
    {
      weight: 3,
      arbitrary: fc.record({
        kind: fc.constantFrom('like' as const, 'unlike' as const),
        item,
        user: fc.constantFrom(...options.users),
      }),
    },
    {
      weight: 3,
      arbitrary: fc.record({
        kind: fc.constant('advance' as const),
        ms: fc.integer({ min: 0, max: options.maxAdvanceMs }),
      }),
    },
  ];
  if (options.boundaries?.length) {
    steps.push({
      weight: 2,
      arbitrary: fc.record({
        kind: fc.constant('toBoundary' as const),
        intervalSec: fc.constantFrom(...options.boundaries),
        offsetMs: fc.constantFrom(-1, 0, 1),
      }),
    });
  }
  return fc.oneof(...steps);
}

/** Applies a clock step: 'advance', or 'toBoundary' (just before, at or after the next slot edge). */
export function moveClock(clock: FakeClock, step: Extract<RankingOp, { kind: 'advance' | 'toBoundary' }>): void {
  if (step.kind === 'advance') {
    clock.advanceMs(step.ms);
    return;
  }
  const intervalMs = step.intervalSec * 1000;
  clock.setMs(Math.ceil((clock.nowMs() + 1) / intervalMs) * intervalMs + step.offsetMs);
}
