import { parseDurationSec, stepStartSec } from '../common/duration';
import { MAX_ABS_COUNT, MAX_FUTURE_SKEW_SEC, MAX_PRECISION_SEC } from './counters.limits';

/**
 * Pure counter maths (no Nest, no Redis). Times are unix seconds (integers).
 *
 * A precision p cuts time into slices [s, s + p) with s = floor(t / p) * p. With N samples kept, the
 * live slices at time `now` are those whose start is > now - N * p: exactly the N newest slice starts up
 * to and including the current one. The increment script, the read script and the cleaner all use this
 * one rule, so a read never shows a slice the cleaner would remove.
 */

/** A count an increment may add: a non-zero integer with |count| <= MAX_ABS_COUNT. */
export function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value !== 0 && Math.abs(value) <= MAX_ABS_COUNT;
}

export interface Sample {
  /** Slice start, unix seconds. */
  t: number;
  count: number;
}

/** Slices whose start is <= this are outside the retention of precision p (the cleaner removes them). */
export function retentionCutoff(nowSec: number, samples: number, precisionSec: number): number {
  return nowSec - samples * precisionSec;
}

export function isLive(sliceStartSec: number, nowSec: number, samples: number, precisionSec: number): boolean {
  return sliceStartSec > retentionCutoff(nowSec, samples, precisionSec);
}

/** The start of the oldest live slice of precision p. */
export function oldestLiveSlice(nowSec: number, samples: number, precisionSec: number): number {
  return stepStartSec(nowSec, precisionSec) - (samples - 1) * precisionSec;
}

/** The precisions (of `precisions`) whose retention still covers a sample at `atSec`. */
export function precisionsCovering(
  atSec: number,
  nowSec: number,
  samples: number,
  precisions: readonly number[],
): number[] {
  return precisions.filter((p) => isLive(stepStartSec(atSec, p), nowSec, samples, p));
}

/** How many cleaner passes (one-minute cycle) between two visits of a precision: max(1, floor(p / 60)). */
export function passesBetweenVisits(precisionSec: number): number {
  return Math.max(1, Math.floor(precisionSec / 60));
}

export function isDueOnPass(precisionSec: number, pass: number): boolean {
  return pass % passesBetweenVisits(precisionSec) === 0;
}

/**
 * Parses a comma-separated list of precisions (seconds). Returns them sorted ascending, or a message
 * saying what is wrong.
 */
export function parsePrecisionList(value: string): { precisions: number[] } | { error: string } {
  const parts = value.split(',').map((part) => part.trim());
  const precisions: number[] = [];
  for (const part of parts) {
    if (!/^[0-9]+$/.test(part)) return { error: `"${part}" is not a positive integer of seconds` };
    const p = Number(part);
    if (p < 1 || p > MAX_PRECISION_SEC) return { error: `${part} must be between 1 and ${MAX_PRECISION_SEC} seconds` };
    if (precisions.includes(p)) return { error: `${part} is listed twice` };
    precisions.push(p);
  }
  return { precisions: precisions.sort((a, b) => a - b) };
}

/** Resolves a requested precision (seconds or a duration like 5s, 1m) to one of the configured ones. */
export function resolvePrecision(value: unknown, configured: readonly number[]): number | undefined {
  const seconds = typeof value === 'string' || typeof value === 'number' ? parseDurationSec(value) : undefined;
  return seconds !== undefined && configured.includes(seconds) ? seconds : undefined;
}

/** Why an `at` is refused, or undefined when at least one precision keeps it. */
export function atProblem(
  atSec: number,
  nowSec: number,
  samples: number,
  precisions: readonly number[],
): { kind: 'future' | 'past'; message: string } | undefined {
  if (atSec > nowSec + MAX_FUTURE_SKEW_SEC) {
    return {
      kind: 'future',
      message: `at must not be more than ${MAX_FUTURE_SKEW_SEC} s in the future (at ${atSec}, now ${nowSec})`,
    };
  }
  if (precisionsCovering(atSec, nowSec, samples, precisions).length === 0) {
    const longest = Math.max(...precisions);
    return {
      kind: 'past',
      message:
        `at is older than the longest retention (${samples} samples x ${longest} s): ` +
        `the oldest accepted is ${oldestLiveSlice(nowSec, samples, longest)} (at ${atSec}, now ${nowSec})`,
    };
  }
  return undefined;
}

/**
 * The slices to answer for one precision: live (start > cutoff), overlapping [from, to] (a slice
 * [t, t + p) is in range when t <= to and t + p > from), oldest first. With `fill`, every slice start
 * from the first in range up to the one holding min(to, now) is present, zero when empty; stored slices
 * beyond that (a sample up to 5 s ahead) are still answered.
 */
export function shapeSamples(
  stored: readonly Sample[],
  options: { nowSec: number; samples: number; precisionSec: number; fromSec?: number; toSec?: number; fill: boolean },
): Sample[] {
  const { nowSec, samples, precisionSec: p } = options;
  const from = options.fromSec ?? Number.NEGATIVE_INFINITY;
  const to = options.toSec ?? Number.POSITIVE_INFINITY;
  const inRange = (t: number) => isLive(t, nowSec, samples, p) && t <= to && t + p > from;
  const byStart = new Map<number, number>();
  for (const sample of stored) if (inRange(sample.t)) byStart.set(sample.t, sample.count);
  if (options.fill) {
    const first = Math.max(
      oldestLiveSlice(nowSec, samples, p),
      Number.isFinite(from) ? stepStartSec(from, p) : Number.NEGATIVE_INFINITY,
    );
    const last = stepStartSec(Math.min(to, nowSec), p);
    for (let t = first; t <= last; t += p) if (!byStart.has(t)) byStart.set(t, 0);
  }
  return [...byStart.entries()].sort((a, b) => a[0] - b[0]).map(([t, count]) => ({ t, count }));
}
