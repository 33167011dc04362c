import { GROWTH_KINDS, type GrowthKind } from '../../src/common/growth-kinds';

/** A quota's allowances per interval: every growth kind at 0 but those given. */
export function allowances(given: Partial<Record<GrowthKind, number>>): Record<GrowthKind, number> {
  return Object.fromEntries(GROWTH_KINDS.map((kind) => [kind, given[kind] ?? 0])) as Record<GrowthKind, number>;
}
