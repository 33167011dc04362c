import fc from 'fast-check';
import { FakeClock } from '../../harness/clock';
import type { ModelEntry } from './actor-caps-model';

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

/** An increment's entry with an actor and segments (each may be left out), over small sets of ids. */
export function actorEntry(items: string[], actors: string[], segments: string[]): fc.Arbitrary<ModelEntry> {
  return fc.record(
    {
      item: fc.constantFrom(...items),
      amount: fc.integer({ min: -3, max: 6 }).filter((n) => n !== 0),
      actor: fc.constantFrom(...actors),
      segments: fc.subarray(segments, { minLength: 1 }),
    },
    { requiredKeys: ['item', 'amount'] },
  );
}

/** Clock steps as weighted choices: moves of up to `maxAdvanceMs` (weight 3), edges of `intervalsSec`' slots (1). */
export function clockSteps(
  maxAdvanceMs: number,
  intervalsSec: number[],
): Array<fc.WeightedArbitrary<Extract<RankingOp, { kind: 'advance' | 'toBoundary' }>>> {
  return [
    {
      weight: 3,
      arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: maxAdvanceMs }) }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant('toBoundary' as const),
        intervalSec: fc.constantFrom(...intervalsSec),
        offsetMs: fc.constantFrom(-1, 0, 1),
      }),
    },
  ];
}

/** A run's start time (unix ms, 2020 to 2030): slot edges fall anywhere relative to the steps. */
export const startTimesMs = fc.integer({ min: 1_600_000_000_000, max: 1_900_000_000_000 });
