import { DURATION_SEC } from './limits';

/** Durations in the API and config: a positive integer of seconds, or `<n>s|m|h|d`. */
const UNIT_SEC: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400 };
const DURATION_RE = /^([1-9][0-9]{0,9})([smhd]?)$/;

/** Parses a duration to whole seconds; returns undefined when the value is not a valid duration. */
export function parseDurationSec(value: unknown): number | undefined {
  if (typeof value === 'number') {
    return Number.isInteger(value) && value >= DURATION_SEC.min && value <= DURATION_SEC.max ? value : undefined;
  }
  if (typeof value !== 'string') return undefined;
  const match = DURATION_RE.exec(value.trim());
  if (!match) return undefined;
  const seconds = Number(match[1]) * UNIT_SEC[match[2] || 's'];
  return seconds <= DURATION_SEC.max ? seconds : undefined;
}

/** How a refusal describes a duration, its cap named (a 401-day period is refused for being too long). */
export const DURATION_RULE = `seconds, or like 30s, 5m, 1h, 7d; at most ${DURATION_SEC.max / 86400}d`;

/**
 * The start of the step of `stepSec` seconds holding `timeSec`, floored below 0 too: a counter's slice,
 * a window's slot.
 */
export function stepStartSec(timeSec: number, stepSec: number): number {
  return timeSec - (((timeSec % stepSec) + stepSec) % stepSec);
}

export function isDuration(value: unknown): boolean {
  return parseDurationSec(value) !== undefined;
}
