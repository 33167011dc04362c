/**
 * Worst-case rows of moderation, run first: they leave the one-shard board of every option holding
 * the most moderated items a shard may (MODERATED_ITEMS_PER_SHARD, hidden), so every later row on it
 * (writes answering ranks, every read) pays what moderation adds at its maximum; the review queue is
 * read on the `last` board, which reviews.
 */
import { MODERATED_ITEMS_PER_SHARD, QUEUE_DEPTH_ITEMS } from '../../src/ranking/core/ranking.limits';
import type { HttpRequest, WorstRow } from './harness-types';

const hide = (item: string): HttpRequest => ({
  method: 'PUT',
  path: `/admin/boards/wc-sum/moderation/items/${item}`,
  body: { state: 'hidden' },
});

export const MODERATION_ROWS: WorstRow[] = [
  {
    route: 'PUT /admin/boards/{board}/moderation/items/{item}',
    worst: `the last state a shard takes (${MODERATED_ITEMS_PER_SHARD}): one call on the item's shard`,
    prepare: async (context) => {
      // Seeded items spread over the listing: each later read skips them at their places.
      const step = Math.max(1, Math.floor(context.sizes.items / MODERATED_ITEMS_PER_SHARD));
      for (let n = 1; n < MODERATED_ITEMS_PER_SHARD; n++) await context.send(hide(`i${n * step}`), 'admin');
    },
    request: () => hide('i0'),
    expect: [204],
  },
  {
    route: 'PUT /admin/boards/{board}/moderation/items/{item}',
    worst: 'a new state past the limit: refused, nothing stored',
    request: () => hide('not-yet-moderated'),
    expect: [429],
    times: 1,
  },
  {
    route: 'DELETE /admin/boards/{board}/moderation/items/{item}',
    worst: 'an item of a shard at its limit, cleared and hidden again',
    request: () => ({ method: 'DELETE', path: '/admin/boards/wc-sum/moderation/items/i0' }),
    settle: async (context) => {
      await context.send(hide('i0'), 'admin');
    },
    expect: [204],
  },
  {
    route: 'GET /admin/boards/{board}/moderation/queue',
    worst: `the deepest page (${QUEUE_DEPTH_ITEMS} rows) of a review board, every item waiting`,
    request: () => ({
      method: 'GET',
      path: `/admin/boards/wc-last/moderation/queue?window=l8&limit=100&cursor=${QUEUE_DEPTH_ITEMS - 100}`,
    }),
  },
];
