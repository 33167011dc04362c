import type { Clock } from '../../src/common/clock';
import { GROWTH_KINDS, type GrowthKind } from '../../src/common/growth-kinds';
import { GrowthQuota } from '../../src/governance/growth-quota';
import { ClientBudget } from '../../src/governance/growth-quotas';

/** A quota's allowances per interval: every growth kind at 0 but those given. */
export function allowances(given: Partial<Record<GrowthKind, number>>): Record<GrowthKind, number> {
  return Object.fromEntries(GROWTH_KINDS.map((kind) => [kind, given[kind] ?? 0])) as Record<GrowthKind, number>;
}

/** One client's budget on its own quota of `limits` per hour (kinds left out at 0, no quota). */
export function clientBudget(
  limits: Partial<Record<GrowthKind, number>>,
  clock: Clock,
  client = 'ip:192.0.2.1',
  maxClients = 10,
): ClientBudget {
  return new ClientBudget(
    new GrowthQuota({ perInterval: allowances(limits), intervalMs: 3_600_000, maxClients }),
    client,
    clock,
  );
}
