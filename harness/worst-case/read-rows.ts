/**
 * Worst-case rows of the board read routes: each the costliest documented use of its route on the
 * boards of ./boards.ts (every option at its maximum), mostly on the 64-shard board where shards cost more.
 */
import { AppConfig } from '../../src/common/config';
import {
  COUNTED_VIEW_ROWS_PER_CALL,
  LOOKUP_NODE_UNITS_PER_CALL,
  MAX_READ_DRAIN_CALLS,
  MAX_SHARDED_DEPTH_ITEMS,
  MIN_ACTORS,
  MODERATED_ITEMS_PER_SHARD,
  SPAN_MAX_FIELDS,
  SPAN_STAGE_FIELDS_PER_CALL,
} from '../../src/ranking/core/ranking.limits';
import { EXCLUDE_GROUPS_MAX, groupScan } from '../../src/ranking/options/groups/groups.limits';
import { SEGMENT_PAGE_UNITS_PER_REQUEST } from '../../src/ranking/options/segments/segments.limits';
import { LOOKUP_TIEBREAK_WEIGHT } from '../../src/ranking/options/tiebreak/tiebreak.option';
import { LOOKUP_TIES_FIRST_WEIGHT } from '../../src/ranking/options/ties/ties.option';
import { ITEM_DATA_ROWS_PER_CALL } from '../../src/ranking/options/item-data/item-data.limits';
import { ARCHIVE_ROWS_PER_READ } from '../../src/ranking/options/calendar/calendar.limits';
import { LAST_METRIC, post } from './board-rows';
import type { HarnessContext, HttpRequest, WorstRow } from './harness-types';

export const get = (path: string): HttpRequest => ({ method: 'GET', path });
/** The seeded item listed lowest: the deepest rank, the longest scans. */
const lowest = (context: HarnessContext) => `i${context.sizes.items - 1}`;
/** The seeded item deepest in a sharded listing that a read may still reach (MAX_SHARDED_DEPTH_ITEMS). */
const deepest = (context: HarnessContext) => `i${Math.min(context.sizes.items, MAX_SHARDED_DEPTH_ITEMS) - 101}`;
/** Ids a lookup of the 64-shard `ties: first` board may name (LOOKUP_COUNTS_PER_REQUEST). */
const LOOKUP_IDS_TAKEN = Math.floor(new AppConfig().LOOKUP_COUNTS_PER_REQUEST / (64 * LOOKUP_TIES_FIRST_WEIGHT));
/** Ids a lookup takes on a 64-shard board with a tiebreak (ties first adds no weight there). */
const LOOKUP_PAIR_IDS_TAKEN = Math.floor(new AppConfig().LOOKUP_COUNTS_PER_REQUEST / (64 * LOOKUP_TIEBREAK_WEIGHT));
/**
 * The most commands one lookup_node call of a 64-shard lookup runs: one a weighted unit of
 * LOOKUP_NODE_UNITS_PER_CALL, as the weights mean (a count is one ZCOUNT; a shard's reads, COUNT_SHARD_WEIGHT,
 * its config and slot checks). An id's counts over 64 shards (448 units on `ties: first`, 325 commands
 * at rest, 453 in a full run) were one call; they now go in parts of at most that many units.
 */
const LOOKUP_CALL_COMMANDS = {
  most: LOOKUP_NODE_UNITS_PER_CALL,
  why: "a lookup_node call takes the ids, or the part of one id's shards, whose counts and shard reads fit LOOKUP_NODE_UNITS_PER_CALL units, a command each at most",
};
/** A sharded lookup's path on shards of several nodes: no lookup_node, two rounds (lookup_count_shards). */
const LOOKUP_ON_NODES = 'two rounds: a lookup call per shard holding ids, then lookup_count_shards calls per node';
/** How a window's or view's filtered read scans one shard: rows a call, calls at most. */
const PLAIN_SCAN = groupScan();
/** How a window's or view's read with minActors scans one shard: every row weighs its actor count too. */
const ACTOR_SCAN = `${groupScan().scan} rows a call (each with its actor count), ${groupScan().calls} calls at most`;
/**
 * Reads of the closed strict-competition period (wc-tb-cal): enough to drain it whole at full scale (a read call
 * takes ~27 of its fields, weighed by what its options run for each, then 100 rows of its archive: 473 calls).
 */
const TIEBREAK_DRAIN_READS = 50;
/** 1 KB of data on each of the first 1 000 items of the one-shard board of every option (seeded once). */
async function withData(context: HarnessContext): Promise<void> {
  if (context.state.has('data')) return;
  context.state.set('data', 'wc-sum');
  for (let n = 0; n < Math.min(1000, context.sizes.items); n++) {
    const request = {
      method: 'PUT' as const,
      path: `/boards/wc-sum/items/i${n}/data`,
      body: { blob: 'x'.repeat(1012) },
    };
    const { status } = await context.send(request, 'seeder');
    if (status !== 204) throw new Error(`data of i${n}: ${status}`);
  }
}
function lookup(context: HarnessContext, ids: number) {
  const items = Array.from({ length: ids }, (_, n) => `i${(n * 7) % context.sizes.items}`);
  return post('/boards/wc-shards/lookup?data=true', { window: 'm', items: [...new Set(items)] });
}

/** The head's 1 000 items and EXCLUDE_GROUPS_MAX groups of the groups boards (seed.ts), excluded. */
export const HEAD_EXCLUDED = {
  items: Array.from({ length: 1000 }, (_, n) => `i${n}`),
  groups: Array.from({ length: EXCLUDE_GROUPS_MAX }, (_, n) => `g${n + 1}`),
};

export const READ_ROWS: WorstRow[] = [
  { route: 'GET /boards', worst: 'a page of 1 000 boards', request: () => get('/boards?limit=1000') },
  { route: 'GET /boards/{board}', worst: 'a 64-shard board of every option', request: () => get('/boards/wc-shards') },
  {
    route: 'GET /boards/{board}/top',
    worst: 'limit 1 000 at depth 10 000, 64 shards, ties first, with data',
    request: () => get('/boards/wc-shards/top?window=m&offset=9000&limit=1000&data=true'),
  },
  {
    route: 'GET /boards/{board}/top',
    worst: 'the longest span (the whole 10 000-slot window) on 64 shards',
    request: () => get('/boards/wc-shards/top?window=m&span=10000m&limit=1000'),
    expect: [200, 422],
  },
  {
    route: 'GET /boards/{board}/top',
    worst: 'a unique view of a segment, limit 1 000',
    request: () => get('/boards/wc-shards/top?window=people&segment=s1&limit=1000'),
  },
  {
    route: 'GET /boards/{board}/top',
    worst: `perGroup 1, limit 1 000 on 64 shards, one group holding the head: ${PLAIN_SCAN.calls} scans of ${PLAIN_SCAN.scan} rows per shard at most`,
    request: () => get('/boards/wc-groups/top?window=m&perGroup=1&limit=1000'),
  },
  {
    route: 'GET /boards/{board}/top',
    worst: `perGroup 1, limit 1 000 on a 64-shard tiebreak board, one group holding the head, every item of one score: ${PLAIN_SCAN.calls} scans of ${PLAIN_SCAN.scan} pair-order rows with their marks per shard at most`,
    request: () => get('/boards/wc-tb-groups/top?window=m&perGroup=1&limit=1000'),
  },
  {
    route: 'GET /boards/{board}/top',
    worst: 'perGroup 100 (its maximum), limit 1 000 on 64 shards, one group holding the head',
    request: () => get('/boards/wc-groups/top?window=m&perGroup=100&limit=1000'),
  },
  {
    route: 'POST /boards/{board}/query',
    worst: `1 000 excluded items (the head) and ${EXCLUDE_GROUPS_MAX} excluded groups, perGroup 1, limit 1 000 on 64 shards`,
    request: () => post('/boards/wc-groups/query', { window: 'm', limit: 1000, perGroup: 1, exclude: HEAD_EXCLUDED }),
  },
  {
    route: 'POST /boards/{board}/query',
    worst: `the same over a span of one shard holding the ${SPAN_MAX_FIELDS} slot fields one read sums (the whole window, one slot): staged once (span_stage: ${Math.ceil(SPAN_MAX_FIELDS / SPAN_STAGE_FIELDS_PER_CALL)} calls of ${SPAN_STAGE_FIELDS_PER_CALL} fields, a copy, a last and a drop call), then ${groupScan().calls} scans of ${groupScan().scan} rows at most`,
    request: () =>
      post('/boards/wc-spangroups/query', {
        window: 'm',
        span: '60m',
        limit: 1000,
        perGroup: 1,
        exclude: HEAD_EXCLUDED,
      }),
  },
  {
    route: 'GET /boards/{board}/top',
    worst: `minActors ${MIN_ACTORS.max} (its maximum), limit 1 000, few items qualifying deep in the listing, one shard: ${ACTOR_SCAN}`,
    request: () => get(`/boards/wc-actors/top?window=m&minActors=${MIN_ACTORS.max}&limit=1000`),
  },
  {
    route: 'GET /boards/{board}/top',
    worst: `minActors ${MIN_ACTORS.max} on a decay view, limit 1 000, few items qualifying deep in it, one shard: ${ACTOR_SCAN}`,
    request: () => get(`/boards/wc-actors/top?window=fading&minActors=${MIN_ACTORS.max}&limit=1000`),
  },
  {
    route: 'POST /boards/{board}/query',
    worst: `minActors ${MIN_ACTORS.max}, 1 000 excluded items (the head), limit 1 000, few items qualifying, one shard: ${ACTOR_SCAN}`,
    request: () =>
      post('/boards/wc-actors/query', {
        window: 'm',
        limit: 1000,
        minActors: MIN_ACTORS.max,
        exclude: { items: Array.from({ length: 1000 }, (_, n) => `i${n}`) },
      }),
  },
  {
    route: 'GET /boards/{board}/top',
    worst: 'limit 1 000 by the last of 8 metrics, ties first',
    request: () => get(`/boards/wc-metrics/top?window=m&metric=${LAST_METRIC}&limit=1000`),
  },
  {
    route: 'GET /boards/{board}/top',
    worst: `limit 1 000 of a wilson view (both metrics' windows drained first; each row its two counts): calls of ${COUNTED_VIEW_ROWS_PER_CALL} rows`,
    request: () => get('/boards/wc-rated/top?window=rated1&limit=1000'),
  },
  {
    route: 'GET /boards/{board}/top',
    worst:
      'limit 1 000 at depth 10 000 on a 64-shard tiebreak board (lowest score first), every item of one score: pairs merged by mark',
    request: () => get('/boards/wc-tiebreak/top?window=t8&offset=9000&limit=1000'),
  },
  {
    route: 'GET /boards/{board}/top',
    worst:
      'limit 1 000 at depth 10 000 on a 64-shard tiebreak board of ties first, every item of one pair: rows merged by tie mark, strict ranks',
    request: () => get('/boards/wc-tb-first/top?window=t8&offset=9000&limit=1000'),
  },
  {
    route: 'POST /boards/{board}/lookup',
    worst: `the most ids the cost cap takes on a 64-shard tiebreak board of ties first, every item of one pair (${LOOKUP_PAIR_IDS_TAKEN}): each counted on every shard by its whole member`,
    request: (context) => {
      const items = Array.from({ length: LOOKUP_PAIR_IDS_TAKEN }, (_, n) => `t${(n * 7) % context.sizes.items}`);
      return post('/boards/wc-tb-first/lookup', { window: 't8', items: [...new Set(items)] });
    },
    callCommands: LOOKUP_CALL_COMMANDS,
    cluster: LOOKUP_ON_NODES,
  },
  {
    route: 'GET /boards/{board}/rank',
    worst:
      'a record reaching the pair every item of a 64-shard tiebreak board of ties first holds: all of them ahead, one ZLEXCOUNT per shard',
    request: () => get('/boards/wc-tb-first/rank?window=t8&score=7&tiebreak=0'),
  },
  {
    route: 'GET /boards/{board}/rank',
    worst:
      'a (score, tiebreak) pair tied on score with every item of a 64-shard tiebreak board (lowest score first): one ZLEXCOUNT per shard',
    request: (context) =>
      get(`/boards/wc-tiebreak/rank?window=t8&score=7&tiebreak=${Math.floor(context.sizes.items / 2)}`),
  },
  {
    route: 'GET /boards/{board}/items/{item}',
    worst: 'the lowest item: rank and percentile over 64 shards, ties first',
    request: (context) => get(`/boards/wc-shards/items/${lowest(context)}?window=m`),
  },
  {
    route: 'GET /boards/{board}/items/{item}/around',
    worst: 'radius 100 on a view of 64 shards',
    request: (context) => get(`/boards/wc-shards/items/${deepest(context)}/around?window=fading&radius=100`),
  },
  {
    route: 'GET /boards/{board}/items/{item}/around',
    worst: 'radius 100 on a window of one shard, each row with its 1 KB of data',
    prepare: withData,
    request: (context) => get(`/boards/wc-sum/items/${deepest(context)}/around?window=m&radius=100&data=true`),
  },
  {
    route: 'GET /boards/{board}/items/{item}/around',
    worst: "radius 100 on a window of 64 shards, with data: the item's shard's rank, then each shard's neighbours",
    request: (context) => get(`/boards/wc-shards/items/${deepest(context)}/around?window=m&radius=100&data=true`),
  },
  {
    route: 'GET /boards/{board}/top',
    worst: `limit 1 000 on one shard, each row with its 1 KB of data: read in calls of at most ${ITEM_DATA_ROWS_PER_CALL} rows`,
    prepare: withData,
    request: () => get('/boards/wc-sum/top?window=m&limit=1000&data=true'),
  },
  {
    route: 'POST /boards/{board}/lookup',
    worst: `the most ids the cost cap takes on 64 shards, ties first (${LOOKUP_IDS_TAKEN}), with data`,
    request: (context) => lookup(context, LOOKUP_IDS_TAKEN),
    callCommands: LOOKUP_CALL_COMMANDS,
    cluster: LOOKUP_ON_NODES,
    manyCalls: `on one node, a call per part of the shards an id's counts are split into (at most ${LOOKUP_NODE_UNITS_PER_CALL} weighted units a call, a ties: first count 3, a shard's reads 4; a part that read another standing of the id than its own shard's part counts it again, within the part); on several, a call per shard holding some of the ids, then counts on every shard in calls of at most ${LOOKUP_NODE_UNITS_PER_CALL} weighted units (the scores in parts, the shards in groups), every call a read of the client's budget and the whole capped by LOOKUP_COUNTS_PER_REQUEST`,
  },
  {
    route: 'POST /boards/{board}/lookup',
    worst: '1 000 ids on 64 shards, ties first: refused before any call (row 5)',
    request: (context) => lookup(context, 1000),
    expect: [422],
    times: 1,
  },
  {
    route: 'GET /boards/{board}/rank',
    worst: 'a score tied with seeded items on 64 shards, ties first: one count per shard, one round',
    request: (context) => get(`/boards/wc-shards/rank?window=m&score=${Math.floor(context.sizes.items / 2)}`),
  },
  {
    route: 'GET /boards/{board}/distribution',
    worst: '100 buckets on 64 shards: the range, 99 counts per shard, then each quantile searched in its bucket',
    request: () => get('/boards/wc-shards/distribution?window=m&buckets=100'),
  },
  {
    route: 'GET /boards/{board}/distribution',
    worst: '100 buckets on one shard, ties first: the range, 99 counts, then each quantile searched in its bucket',
    request: () => get('/boards/wc-sum/distribution?window=m&buckets=100'),
  },
  {
    route: 'GET /boards/{board}/history',
    worst: `a snapshot of 1 000 rows, each checked against the ${MODERATED_ITEMS_PER_SHARD} hidden items of the board (moderation rows)`,
    request: () => get('/boards/wc-sum/history?window=m'),
  },
  {
    route: 'GET /boards/{board}/items/{item}/history',
    worst: `the lowest item through every kept snapshot of 1 000 rows, each row above it checked against the ${MODERATED_ITEMS_PER_SHARD} hidden items of the board (moderation rows)`,
    request: (context) => get(`/boards/wc-sum/items/${lowest(context)}/history?window=m`),
  },
  {
    route: 'GET /boards/{board}/history',
    worst:
      'the first read after a boundary of a tiebreak board of ties first, every item of one pair: a snapshot of 1 000 rows of its pair order, marks kept, ranks for previousRank',
    prepare: (context) => context.advanceSec(60),
    request: () => get('/boards/wc-tb-hist/history?window=h'),
    times: 1,
  },
  {
    route: 'GET /boards/{board}/items/{item}/history',
    worst: 'the last of 1 000 rows of one pair through a tiebreak snapshot: each row searched by (score, mark)',
    request: () => get('/boards/wc-tb-hist/items/h999/history?window=h'),
  },
  {
    route: 'GET /boards/{board}/history',
    worst:
      "a snapshot of 1 000 rows of the last of 8 metrics, each row's counts of the 7 others from their snapshots at that boundary (one history read each)",
    request: () => get(`/boards/wc-metrics/history?window=m&metric=${LAST_METRIC}`),
  },
  {
    route: 'GET /boards/{board}/history',
    worst:
      "the first read after a boundary of the 8-metric board: every metric's window crosses it (a snapshot of 1 000 rows each, its own call) for the rows' counts",
    prepare: (context) => context.advanceSec(60),
    request: () => get(`/boards/wc-metrics/history?window=m&metric=${LAST_METRIC}`),
    times: 1,
  },
  {
    route: 'GET /boards/{board}/items/{item}/history',
    worst: 'the lowest item through every kept snapshot of 1 000 rows of the last of 8 metrics',
    request: (context) => get(`/boards/wc-metrics/items/${lowest(context)}/history?window=m&metric=${LAST_METRIC}`),
  },
  {
    route: 'GET /boards/{board}/segments',
    worst: 'a page of 1 000 segments of 64 shards (each shard call bounded by its units)',
    request: () => get('/boards/wc-shards/segments?limit=1000'),
    manyCalls: `a call per shard, each bounded by SEGMENT_PAGE_UNITS_PER_CALL, the page by SEGMENT_PAGE_UNITS_PER_REQUEST (${SEGMENT_PAGE_UNITS_PER_REQUEST})`,
    // A segment still holding expired data past a read's drain calls answers 503 WINDOW_DRAINING.
    expect: [200, 503],
  },
  {
    route: 'GET /boards/{board}/archive',
    worst: 'the last page of a 10 000-row period',
    request: (context) =>
      get(
        `/boards/wc-cal/archive?window=day&offset=${context.sizes.periodRows - 1000 > 0 ? context.sizes.periodRows - 1000 : 0}&limit=1000`,
      ),
  },
  {
    route: 'GET /boards/{board}/archives',
    worst: 'a page of 100 periods of 10 000 rows: calls of at most ARCHIVE_ROWS_PER_CALL rows of one period',
    request: () => get('/boards/wc-cal/archives?window=day&limit=100'),
    expect: [200, 422],
  },
  {
    route: 'GET /boards/{board}/archives',
    worst:
      'the reads after a period of 10 000 items of one pair closed on a tiebreak board of ties first: the period drained (each row taken as its member of the pair order, its tie mark looked up), then its archive written with marks and ranks',
    request: () => get('/boards/wc-tb-cal/archives?window=day&limit=1'),
    expect: [200, 503],
    times: TIEBREAK_DRAIN_READS,
    drains: `each read drains a chunk of EXPIRE_CHUNK fields (fewer, weighed by what the board's options run for each) or rows a call, up to ${MAX_READ_DRAIN_CALLS} calls (then 503 WINDOW_DRAINING)`,
    manyCalls: `up to ${MAX_READ_DRAIN_CALLS} drain calls before the page`,
  },
  {
    route: 'GET /boards/{board}/archive',
    worst:
      "the last page a 64-shard board reads (rows 213-312) of a 10 000-row period of the last of 8 metrics: its rows' 7 other counts would take past both bounds, so the page is cut to the rows whose counts fit (nextOffset for the rest)",
    request: () => get(`/boards/wc-metcal64/archive?window=day&metric=${LAST_METRIC}&offset=212&limit=100`),
  },
  {
    route: 'GET /boards/{board}/archive',
    worst:
      "the deepest 2 rows a 64-shard board reads of a 10 000-row period of the last of 8 metrics (rows 311-312: ARCHIVE_ROWS_PER_READ over 64 shards; at ci scale the period's last 2), each row's 7 other counts (past ARCHIVE_METRIC_CALLS_PER_READ shard calls, within ARCHIVE_METRIC_UNITS_PER_READ units): each metric's records on the rows' shards and every shard's rows ahead, the shards of a node in calls of LISTING_UNITS_PER_CALL units",
    request: (context) => {
      const end = Math.min(context.sizes.periodRows, Math.floor(ARCHIVE_ROWS_PER_READ / 64));
      return get(`/boards/wc-metcal64/archive?window=day&metric=${LAST_METRIC}&offset=${end - 2}&limit=2`);
    },
  },
  {
    route: 'GET /boards/{board}/archives',
    worst:
      "a page of periods of 10 000 rows of the last of 8 metrics on 64 shards (312 rows in all): their 7 other counts past both bounds, so the page is cut to the first period's rows whose counts fit (nextOffset and nextCursor for the rest)",
    request: () => get(`/boards/wc-metcal64/archives?window=day&metric=${LAST_METRIC}&limit=100`),
  },
  {
    route: 'GET /boards/{board}/items/{item}/history',
    worst:
      "the lowest item through the archives of 10 000 rows of the last of 8 metrics on 64 shards: each other metric's history of it (every shard counting the rows above)",
    request: (context) =>
      get(`/boards/wc-metcal64/items/c${context.sizes.periodRows - 1}/history?window=day&metric=${LAST_METRIC}`),
  },
  {
    route: 'GET /boards/{board}/archive',
    worst:
      "the last page of a 10 000-row period of the last of 8 metrics, each row's 7 other counts from their records",
    request: (context) =>
      get(
        `/boards/wc-metcal/archive?window=day&metric=${LAST_METRIC}&offset=${Math.max(0, context.sizes.periodRows - 1000)}&limit=1000`,
      ),
  },
  {
    route: 'GET /boards/{board}/archives',
    worst:
      "a page of 100 periods of 10 000 rows of the last of 8 metrics, each row's 7 other counts from their records: calls of at most LISTING_UNITS_PER_CALL units (the page cut to the rows of ARCHIVE_METRIC_CALLS_PER_READ calls)",
    request: () => get(`/boards/wc-metcal/archives?window=day&metric=${LAST_METRIC}&limit=100`),
    expect: [200, 422],
  },
  {
    route: 'GET /boards/{board}/stream',
    worst: `perGroup 1 of 100 rows on 64 shards, one group holding the head: a filtered page per poll (up to ${PLAIN_SCAN.calls} scans per shard)`,
    request: () => get('/boards/wc-groups/stream?window=m&perGroup=1&limit=100'),
    stream: true,
  },
  {
    route: 'GET /boards/{board}/stream',
    worst: `100 rows by the last of 8 metrics on 64 shards: each poll a top read and the rows' 8 counts per shard`,
    request: () => get(`/boards/wc-metrics64/stream?window=m&metric=${LAST_METRIC}&limit=100`),
    stream: true,
  },
  {
    route: 'GET /boards/{board}/stream',
    worst: 'a segment of a 64-shard board, view and window',
    request: () => get('/boards/wc-shards/stream?window=fading&segment=s2'),
    stream: true,
  },
];
