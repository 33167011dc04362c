/**
 * Worst-case rows of filtered reads over a span with minActors (the contributions of its slots read),
 * and of the same board's window read without them (its scan split as a window's, issue #45).
 */
import {
  MIN_ACTORS,
  SPAN_MAX_FIELDS,
  SPAN_STAGE_FIELDS_PER_CALL,
  SPAN_STAGED_READS_PER_SHARD,
} from '../../src/ranking/core/ranking.limits';
import { GROUP_SCAN_ROWS, groupScan } from '../../src/ranking/options/groups/groups.limits';
import { post } from './board-rows';
import type { HarnessContext, WorstRow } from './harness-types';
import { STAGED_SPANS } from './held-keys';
import { HEAD_EXCLUDED } from './read-rows';
import { batches } from './seed';

const MINUTE_SEC = 60;
/** Rows a call scans over a staged span, minActors or not (its actor counts are staged with its sums). */
const { scan, calls } = groupScan();
/** One item more than a full page past every exclusion reaches (GROUP_SCAN_ROWS): the span holds the most contributions beside. */
const ITEMS = GROUP_SCAN_ROWS + 1;
/** Rows a call scans of a window's listing without minActors, and the most calls per shard. */
const WINDOW_SCAN = groupScan();

/**
 * wc-spanactors' ITEMS items, each one field of one of the window's 60 minute slots, their head in one
 * group and the last 100 in a group each; the first SPAN_MAX_FIELDS - ITEMS with an actor of their own:
 * a span read of the whole window holds exactly the bound. Seeded by the row, once, so that no earlier
 * row's clock step has expired its oldest slots.
 */
async function seedSpanActors(context: HarnessContext): Promise<void> {
  if (context.state.has('spanactors')) return;
  context.state.set('spanactors', 'wc-spanactors');
  const nowSec = context.nowSec();
  await batches(context, 'wc-spanactors', ITEMS, (n) => ({
    item: `i${n}`,
    amount: ITEMS - n,
    at: nowSec - (n % 60) * MINUTE_SEC,
    group: n < ITEMS - 100 ? 'g0' : `g${ITEMS - n}`,
    ...(n < SPAN_MAX_FIELDS - ITEMS ? { actor: `a${n}` } : {}),
  }));
}

const spanQuery = () =>
  post('/boards/wc-spanactors/query', {
    window: 'm',
    span: '60m',
    limit: 1000,
    perGroup: 1,
    minActors: MIN_ACTORS.max,
    exclude: HEAD_EXCLUDED,
  });

export const SPAN_FILTER_ROWS: WorstRow[] = [
  {
    route: 'POST /boards/{board}/query',
    worst: `minActors ${MIN_ACTORS.max} over a span of one shard holding the ${SPAN_MAX_FIELDS} slot fields and actor contributions one read takes (${ITEMS} items), spread over its 60 slots, with the head and ${HEAD_EXCLUDED.groups.length} groups excluded, perGroup 1, limit 1 000: no row qualifies; the span staged once (span_stage: its slots and contributions copied, then summed ${SPAN_STAGE_FIELDS_PER_CALL} fields a call, a contribution weighing 2), then ${Math.ceil(ITEMS / scan)} scans of ${scan} rows (of ${calls} at most), then the staged keys dropped`,
    prepare: seedSpanActors,
    request: spanQuery,
  },
  {
    route: 'POST /boards/{board}/query',
    worst: `that read sent ${SPAN_STAGED_READS_PER_SHARD + 1} times by an instance that stops once its span is staged (no scan, no drop: 500): the ${SPAN_STAGED_READS_PER_SHARD} staged reads a shard's window holds at once stay until SPAN_STAGE_TTL_MS, the next one is refused (503 SPAN_READS_BUSY)`,
    prepare: seedSpanActors,
    caller: 'staging stops',
    request: spanQuery,
    times: SPAN_STAGED_READS_PER_SHARD + 1,
    expect: [500, 503],
    holds: STAGED_SPANS,
    release: (context) => context.expireOnRedis(['*wc-spanactors*:staged*']),
  },
  {
    route: 'POST /boards/{board}/query',
    worst: `the same board's window (no span, no minActors), one shard of ${ITEMS} items, the head and ${HEAD_EXCLUDED.groups.length} groups excluded, perGroup 1, limit 1 000: the whole listing scanned, ${Math.ceil(ITEMS / WINDOW_SCAN.scan)} scans of ${WINDOW_SCAN.scan} rows (of ${WINDOW_SCAN.calls} at most), each with the exclusions`,
    prepare: seedSpanActors,
    request: () =>
      post('/boards/wc-spanactors/query', { window: 'm', limit: 1000, perGroup: 1, exclude: HEAD_EXCLUDED }),
  },
];
