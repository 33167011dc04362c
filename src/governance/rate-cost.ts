import { SetMetadata } from '@nestjs/common';

/** Metadata key of a route's rate cost (read by RateLimitGuard). */
export const RATE_COST = 'trendboard:rate-cost';

/** How many requests of its kind one request counts for, from its parsed body (not yet validated). */
export type RateCostOf = (body: unknown) => number;

/**
 * A route whose one request does the work of several: it counts `of(body)` against its client's rate
 * budget (at least 1), so a batch of 1 000 entries spends what 1 000 single writes would.
 */
export const RateCost = (of: RateCostOf) => SetMetadata(RATE_COST, of);

/** A batch body's cost: its entries (`items`), 1 when it holds none or is not a batch at all. */
export const entriesOfBatch: RateCostOf = (body) => {
  const items = (body as { items?: unknown } | null | undefined)?.items;
  return Array.isArray(items) ? Math.max(1, items.length) : 1;
};
