import { GROWTH_KINDS, GrowthKind } from '../common/growth-kinds';

/**
 * A write script refused to create entries beyond its client's allowance (`TB_QUOTA <kind> <wanted>`):
 * nothing was applied.
 */
export class QuotaRefusal extends Error {
  constructor(
    readonly kind: GrowthKind,
    readonly wanted: number,
  ) {
    super(`TB_QUOTA ${kind} ${wanted}`);
  }
}

/**
 * A write script refused to create entries beyond a cap: a board's maxItems on one shard
 * (`TB_BOARD_FULL <held> <cap> <wanted>`) or a global cap (`TB_CAPACITY <held> <cap> <wanted>`):
 * nothing was applied.
 */
export class CapRefusal extends Error {
  constructor(
    readonly held: number,
    readonly cap: number,
    readonly wanted: number,
  ) {
    super(`TB_CAP ${held} ${cap} ${wanted}`);
  }
}

export type GrowthRefusal = QuotaRefusal | CapRefusal;

/** The growth refusal a script's error reply carries, or undefined for any other error. */
export function growthRefusalOf(error: unknown): GrowthRefusal | undefined {
  if (error instanceof QuotaRefusal || error instanceof CapRefusal) return error;
  const message = error instanceof Error ? error.message : '';
  const quota = /^TB_QUOTA (?<kind>\w+) (?<wanted>\d+)/.exec(message)?.groups;
  if (quota && (GROWTH_KINDS as readonly string[]).includes(quota.kind))
    return new QuotaRefusal(quota.kind as GrowthKind, Number(quota.wanted));
  const cap = /^TB_(?:BOARD_FULL|CAPACITY) (?<held>\d+) (?<cap>\d+) (?<wanted>\d+)/.exec(message)?.groups;
  if (cap) return new CapRefusal(Number(cap.held), Number(cap.cap), Number(cap.wanted));
  return undefined;
}
