/**
 * What a write may create, each kind with a quota of its own (governance/growth-quota.ts) that the
 * write scripts enforce and name when they refuse (redis/refusals.ts). idempotentAnswers: the answers
 * of keyed writes Redis keeps for IDEMPOTENCY_TTL_SEC, an answer kept shorter its share (see
 * governance/answer-budget.ts). actorEntries:
 * contributions an actor makes new (its first event on an item in one slot of one window, a board's or a
 * segment's: actor_lib). segmentEntries: an item's first amount in one slot of one segment window,
 * and a segment's keys on a shard where it is new (segment_growth_lib). itemDataBytes: bytes an item's data grows by (a longer replacement counts its growth).
 */
export const GROWTH_KINDS = [
  'items',
  'likeUsers',
  'counters',
  'statsPairs',
  'idempotentAnswers',
  'actorEntries',
  'segmentEntries',
  'itemDataBytes',
] as const;
export type GrowthKind = (typeof GROWTH_KINDS)[number];
