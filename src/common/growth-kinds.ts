/**
 * What a write may create, each kind with a quota of its own (governance/growth-quota.ts) that the
 * write scripts enforce and name when they refuse (redis/refusals.ts). idempotentAnswers: the answers
 * of keyed writes Redis keeps for IDEMPOTENCY_TTL_SEC (see governance/answer-budget.ts).
 */
export const GROWTH_KINDS = ['items', 'likeUsers', 'counters', 'statsPairs', 'idempotentAnswers'] as const;
export type GrowthKind = (typeof GROWTH_KINDS)[number];
