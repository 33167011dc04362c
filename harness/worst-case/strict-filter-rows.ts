/**
 * Worst-case rows of filtered reads on a board of strict ranks (`ties: first`, issue #49) and of its
 * view: wc-tf-groups (./boards.ts) holds the groups board's items, all of one score, one group holding
 * the head (seed.ts), so each scan reads the strict order's members, every row with its tie mark, and
 * the shards' rows are merged and ranked by (score, mark); its decay view's scan reads as many rows.
 */
import { EXCLUDE_GROUPS_MAX, groupScan } from '../../src/ranking/options/groups/groups.limits';
import { post } from './board-rows';
import type { HttpRequest, WorstRow } from './harness-types';
import { HEAD_EXCLUDED } from './read-rows';

/** How a scan without minActors reads a shard: rows a call, calls at most. */
const { scan, calls } = groupScan();
const get = (path: string): HttpRequest => ({ method: 'GET', path });

export const STRICT_FILTER_ROWS: WorstRow[] = [
  {
    route: 'POST /boards/{board}/query',
    worst: `1 000 excluded items and ${EXCLUDE_GROUPS_MAX} excluded groups, perGroup 1, limit 1 000 on a 64-shard ties-first board, one group holding the head, every item of one score: ${calls} scans of ${scan} strict-order rows with their tie marks per shard at most`,
    request: () =>
      post('/boards/wc-tf-groups/query', { window: 'm', limit: 1000, perGroup: 1, exclude: HEAD_EXCLUDED }),
  },
  {
    route: 'GET /boards/{board}/top',
    worst: `perGroup 1, limit 1 000 on a 64-shard ties-first board, one group holding the head, every item of one score: ${calls} scans of ${scan} strict-order rows with their tie marks per shard at most`,
    request: () => get('/boards/wc-tf-groups/top?window=m&perGroup=1&limit=1000'),
  },
  {
    route: 'POST /boards/{board}/query',
    worst: `1 000 excluded items and ${EXCLUDE_GROUPS_MAX} excluded groups, perGroup 1, limit 1 000 on a decay view of that 64-shard board: ${calls} scans of ${scan} view rows per shard at most, each row's group looked up`,
    request: () =>
      post('/boards/wc-tf-groups/query', { window: 'fading', limit: 1000, perGroup: 1, exclude: HEAD_EXCLUDED }),
  },
];
