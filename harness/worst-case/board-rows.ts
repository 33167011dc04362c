/**
 * Worst-case rows of the board routes: each the costliest documented use of its route on the boards
 * of ./boards.ts (every option at its maximum). Reads go to the 64-shard board where shards cost
 * more, writes to the one-shard board where one call does all the work.
 */
import { AppConfig } from '../../src/common/config';
import { MAX_SHARDED_DEPTH_ITEMS, MIN_ACTORS } from '../../src/ranking/core/ranking.limits';
import { EXCLUDE_GROUPS_MAX, GROUP_PAGE_CALLS, GROUP_SCAN_ROWS } from '../../src/ranking/options/groups/groups.limits';
import { LOOKUP_TIES_FIRST_WEIGHT } from '../../src/ranking/options/ties/ties.option';
import { entryCost } from '../../src/ranking/writes/write-cost';
import { BOARDS, METRIC_NAMES } from './boards';
import type { HarnessContext, HttpRequest, WorstRow } from './harness-types';

const SEGMENTS_PER_EVENT = 8;
const BATCH_ENTRIES = 1000;
/**
 * Entries a body of at most 10 000 values holds when each names an actor and 8 segments: 13 values
 * each (the element, its 4 keys, 8 segment names) after the body's one key.
 */
const SEGMENTED_BATCH_ENTRIES = 768;
const DATA_BYTES = 1024;
const DAY_SEC = 86_400;

const segmentsOf = (seed: number) => Array.from({ length: SEGMENTS_PER_EVENT }, (_, k) => `s${(seed + k) % 64}`);
const get = (path: string): HttpRequest => ({ method: 'GET', path });
const post = (path: string, body: unknown = {}): HttpRequest => ({ method: 'POST', path, body });
/** The seeded item listed lowest: the deepest rank, the longest scans. */
const lowest = (context: HarnessContext) => `i${context.sizes.items - 1}`;
/** The seeded item deepest in a sharded listing that a read may still reach (MAX_SHARDED_DEPTH_ITEMS). */
const deepest = (context: HarnessContext) => `i${Math.min(context.sizes.items, MAX_SHARDED_DEPTH_ITEMS) - 101}`;
const fresh = (attempt: number, n: number) => `fresh-${Date.now().toString(36)}-${attempt}-${n}`;

/** The write cost bound by default, in the cost model's units (WRITE_COST_PER_CALL). */
const COST_BOUND = new AppConfig().WRITE_COST_PER_CALL;
const COSTLIEST_SUM_ENTRY = entryCost({ actor: 'a', segments: segmentsOf(0) }, BOARDS['wc-sum']);
/** Entries like the costliest one a batch may carry on the board of every option. */
const COSTLIEST_TAKEN = Math.max(1, Math.floor(COST_BOUND / COSTLIEST_SUM_ENTRY));
/** Late scores on the `last` board a batch may carry. */
const LATE_SCORES_TAKEN = Math.floor(COST_BOUND / entryCost({}, { views: [], ...BOARDS['wc-last'] }));
/** An event in 8 segments of a board of every option: one atomic call writes each segment's windows and views. */
const SEGMENTED_EVENT =
  '#45: one event writes 8 windows and 8 views in the board and in each of its 8 segments in one atomic call (about 1 800 commands)';
/** The crossing board's filled segments (seed.ts). */
const CROSSING_SEGMENTS = Array.from({ length: 8 }, (_, k) => `x${k}`);
/** The costliest metric: the last, its windows the ones furthest from the board's own. */
const LAST_METRIC = METRIC_NAMES[METRIC_NAMES.length - 1];
/** Existing items a batch of one metric may carry on the metrics board (WRITE_COST_PER_CALL). */
const METRIC_ENTRIES_TAKEN = Math.min(BATCH_ENTRIES, Math.floor(COST_BOUND / entryCost({}, BOARDS['wc-metrics'])));
/** The same on the board whose eight wilson and controversial views all read the last metric. */
const RATED_ENTRIES_TAKEN = Math.min(BATCH_ENTRIES, Math.floor(COST_BOUND / entryCost({}, BOARDS['wc-rated'])));

/** Ids a lookup of the 64-shard `ties: first` board may name (LOOKUP_COUNTS_PER_REQUEST). */
const LOOKUP_IDS_TAKEN = Math.floor(new AppConfig().LOOKUP_COUNTS_PER_REQUEST / (64 * LOOKUP_TIES_FIRST_WEIGHT));
const BY_DESIGN = `by design: one call of up to WRITE_COST_PER_CALL (${COST_BOUND} units, ~24 ms), the atomic unit a batch or an item write promises`;

/** A batch of existing items, each with a new actor and eight segments (issue #45 rows 2 and 3). */
function costlyBatch(context: HarnessContext, attempt: number, entries: number) {
  return post('/boards/wc-sum/increments', {
    items: Array.from({ length: entries }, (_, n) => ({
      item: `i${n % context.sizes.items}`,
      amount: 1,
      actor: fresh(attempt, n),
      segments: segmentsOf(n),
    })),
  });
}

/** Scores older than every slot the items hold on a `last` board of 8 × 1 000 slots (row 1). */
function lateScores(context: HarnessContext, entries: number) {
  const oldestSec = context.nowSec() - (context.sizes.lastSlots - 1) * 60 - 30;
  return post('/boards/wc-last/increments', {
    items: Array.from({ length: entries }, (_, n) => ({ item: `l${n % 50}`, score: n + 1, at: oldestSec })),
  });
}

function lookup(context: HarnessContext, ids: number) {
  const items = Array.from({ length: ids }, (_, n) => `i${(n * 7) % context.sizes.items}`);
  return post('/boards/wc-shards/lookup?data=true', { window: 'm', items: [...new Set(items)] });
}

export const WRITE_ROWS: WorstRow[] = [
  {
    route: 'POST /boards/{board}/items/{item}/increment',
    worst: 'an existing item in 8 new segments of a 64-shard board: the names claimed on shard 0 first',
    open: SEGMENTED_EVENT,
    request: (_context, attempt) =>
      post('/boards/wc-shards/items/i5/increment', {
        segments: Array.from({ length: SEGMENTS_PER_EVENT }, (_, k) => `claim${attempt}-${k}`),
      }),
  },
  {
    route: 'POST /boards/{board}/items/{item}/increment',
    worst:
      'the first write after a boundary naming 8 segments of 1 000+ items, 8 windows keeping snapshots of 1 000 rows',
    // 72 listings of 1 000 rows (8 × 9 windows) are stored before the write applies, a listing a call.
    manyCalls: 'each call stores one listing of at most 1 000 rows (snapshot_lib ROWS_PER_CALL)',
    prepare: (context) => context.advanceSec(60),
    request: () => post('/boards/wc-cross/items/i1/increment', { segments: CROSSING_SEGMENTS }),
    times: 1,
  },
  {
    route: 'POST /boards/{board}/items/{item}/increment',
    worst: 'a new item with a new actor in 8 segments: 8 windows, 8 views, ties first',
    open: SEGMENTED_EVENT,
    request: (_context, attempt) =>
      post(`/boards/wc-sum/items/${fresh(attempt, 0)}/increment`, {
        amount: 3,
        actor: fresh(attempt, 1),
        segments: segmentsOf(attempt),
      }),
    grows: { times: 40 },
  },
  {
    route: 'POST /boards/{board}/increments',
    worst: `the costliest batch the cost bound takes: ${COSTLIEST_TAKEN} existing item(s), each with a new actor in 8 segments`,
    open: BY_DESIGN,
    request: (context, attempt) => costlyBatch(context, attempt, COSTLIEST_TAKEN),
    grows: { times: 40 },
  },
  {
    route: 'POST /boards/{board}/increments',
    worst: `${SEGMENTED_BATCH_ENTRIES} such entries (a full body): refused whole before any call (rows 2 and 3)`,
    request: (context, attempt) => costlyBatch(context, attempt, SEGMENTED_BATCH_ENTRIES),
    expect: [422],
    times: 1,
  },
  {
    route: 'POST /boards/{board}/increments',
    worst: `1 000 late scores on a last board of 8 windows × 1 000 slots: refused whole (row 1)`,
    request: (context) => lateScores(context, BATCH_ENTRIES),
    expect: [422],
    times: 1,
  },
  {
    route: 'POST /boards/{board}/increments',
    worst: `the most late scores the cost bound takes (${LATE_SCORES_TAKEN}) on that board`,
    open: BY_DESIGN,
    request: (context) => lateScores(context, LATE_SCORES_TAKEN),
  },
  {
    route: 'POST /boards/{board}/items/{item}/increment',
    worst:
      'an existing item of the head moved to another group on 64 shards with groups (the watched write path, one HSET)',
    request: (_context, attempt) => post('/boards/wc-groups/items/i5/increment', { group: `g${1 + (attempt % 100)}` }),
  },
  {
    route: 'POST /boards/{board}/items/{item}/increment',
    worst: 'a new item in the last of 8 metrics: 8 windows, 6 views, ties first',
    request: (_context, attempt) =>
      post(`/boards/wc-metrics/items/${fresh(attempt, 0)}/increment`, { amount: 2, metric: LAST_METRIC }),
    grows: { times: 40 },
  },
  {
    route: 'POST /boards/{board}/increments',
    worst: `the most entries of one metric the cost bound takes (${METRIC_ENTRIES_TAKEN}) on a board of 8 metrics`,
    open: BY_DESIGN,
    request: (context) =>
      post('/boards/wc-metrics/increments', {
        items: Array.from({ length: METRIC_ENTRIES_TAKEN }, (_, n) => ({
          item: `i${n % context.sizes.items}`,
          metric: LAST_METRIC,
        })),
      }),
  },
  {
    route: 'POST /boards/{board}/items/{item}/increment',
    worst:
      'an item of the head in the last of 8 metrics, which all 8 wilson and controversial views read (one per window)',
    request: () => post('/boards/wc-rated/items/i1/increment', { amount: 2, metric: LAST_METRIC }),
  },
  {
    route: 'POST /boards/{board}/increments',
    worst: `the most existing items of that metric the cost bound takes (${RATED_ENTRIES_TAKEN}) on that board`,
    open: BY_DESIGN,
    request: (context) =>
      post('/boards/wc-rated/increments', {
        items: Array.from({ length: RATED_ENTRIES_TAKEN }, (_, n) => ({
          item: `i${n % context.sizes.items}`,
          metric: LAST_METRIC,
        })),
      }),
  },
  {
    route: 'POST /boards/{board}/items/{item}/score',
    worst: 'a late score on a last board of 8 windows × 1 000 slots',
    request: (context) =>
      post('/boards/wc-last/items/l1/score', {
        score: 7,
        at: context.nowSec() - (context.sizes.lastSlots - 1) * 60 - 30,
      }),
  },
  {
    route: 'POST /boards/{board}/items/{item}/score',
    worst:
      'a best score dated 10 years back on a max board of an all-time window and 7 windows × 1 000 slots: the all-time window alone takes it, for good (new items: the items quota and maxItems)',
    request: (context, attempt) =>
      post(`/boards/wc-ever/items/e${attempt}/score`, {
        score: context.sizes.items + attempt,
        at: context.nowSec() - 10 * 365 * DAY_SEC,
      }),
  },
  {
    route: 'POST /boards/{board}/items/{item}/score',
    worst:
      'a better (score, tiebreak) pair of a held item, tied on score with every item of a 64-shard tiebreak board of 8 windows: moved in each window, ranked by (score, mark) on every shard',
    request: (context, attempt) =>
      post(`/boards/wc-tiebreak/items/t${attempt}/score`, { score: 7, tiebreak: context.sizes.items + attempt }),
  },
  {
    route: 'POST /boards/{board}/items/{item}/likes',
    worst: 'a new user in 8 segments on the board of every option',
    open: SEGMENTED_EVENT,
    request: (_context, attempt) =>
      post('/boards/wc-sum/items/i1/likes', { userId: fresh(attempt, 2), segments: segmentsOf(attempt) }),
    grows: { times: 60 },
  },
  {
    route: 'DELETE /boards/{board}/items/{item}/likes/{userId}',
    worst: 'a like held in 8 windows and 8 segments',
    // The like's take-back writes each of its segments as the like did (17–24 ms at load 3, 71 ms in a CI run).
    open: SEGMENTED_EVENT,
    prepare: async (context) => {
      await context.send(post('/boards/wc-sum/items/i2/likes', { userId: 'liked', segments: segmentsOf(3) }), 'seeder');
    },
    request: () => ({ method: 'DELETE', path: '/boards/wc-sum/items/i2/likes/liked' }),
    times: 1,
  },
  {
    route: 'PUT /boards/{board}/items/{item}/data',
    worst: '1 KB of data on an existing item (every item in turn)',
    request: (context, attempt) => ({
      method: 'PUT',
      path: `/boards/wc-sum/items/i${attempt % context.sizes.items}/data`,
      body: { blob: 'x'.repeat(DATA_BYTES - 12) },
    }),
    expect: [204, 413],
    grows: { times: 200 },
  },
  {
    route: 'DELETE /boards/{board}/items/{item}/data',
    worst: "an item's 1 KB of data",
    request: () => ({ method: 'DELETE', path: '/boards/wc-sum/items/i0/data' }),
    expect: [204],
  },
];

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
    worst: `perGroup 1, limit 1 000 on 64 shards, one group holding the head: ${GROUP_PAGE_CALLS} scans of ${GROUP_SCAN_ROWS} rows per shard at most`,
    request: () => get('/boards/wc-groups/top?window=m&perGroup=1&limit=1000'),
  },
  {
    route: 'GET /boards/{board}/top',
    worst: 'perGroup 100 (its maximum), limit 1 000 on 64 shards, one group holding the head',
    request: () => get('/boards/wc-groups/top?window=m&perGroup=100&limit=1000'),
  },
  {
    route: 'POST /boards/{board}/query',
    worst: `1 000 excluded items (the head) and ${EXCLUDE_GROUPS_MAX} excluded groups, perGroup 1, limit 1 000 on 64 shards`,
    request: () =>
      post('/boards/wc-groups/query', {
        window: 'm',
        limit: 1000,
        perGroup: 1,
        exclude: {
          items: Array.from({ length: 1000 }, (_, n) => `i${n}`),
          groups: Array.from({ length: EXCLUDE_GROUPS_MAX }, (_, n) => `g${n + 1}`),
        },
      }),
  },
  {
    route: 'GET /boards/{board}/top',
    worst: `minActors ${MIN_ACTORS.max} (its maximum), limit 1 000, few items qualifying deep in the listing, one shard: ${GROUP_PAGE_CALLS} scans of ${GROUP_SCAN_ROWS} rows at most`,
    request: () => get(`/boards/wc-actors/top?window=m&minActors=${MIN_ACTORS.max}&limit=1000`),
  },
  {
    route: 'GET /boards/{board}/top',
    worst: `minActors ${MIN_ACTORS.max} on a decay view, limit 1 000, few items qualifying deep in it, one shard`,
    request: () => get(`/boards/wc-actors/top?window=fading&minActors=${MIN_ACTORS.max}&limit=1000`),
  },
  {
    route: 'POST /boards/{board}/query',
    worst: `minActors ${MIN_ACTORS.max}, 1 000 excluded items (the head), limit 1 000, few items qualifying, one shard`,
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
    worst: "limit 1 000 of a wilson view (both metrics' windows drained first; each row its two counts)",
    request: () => get('/boards/wc-rated/top?window=rated1&limit=1000'),
  },
  {
    route: 'GET /boards/{board}/top',
    worst: 'a tail board: the deepest page (rows 1 000 to 2 000) over 64 shards, every closed minute slot pruned',
    request: () => get('/boards/wc-tail/top?window=h&offset=1000&limit=1000'),
  },
  {
    route: 'GET /boards/{board}/top',
    worst: 'limit 1 000 at depth 10 000 on a 64-shard tiebreak board, every item of one score: pairs merged by mark',
    request: () => get('/boards/wc-tiebreak/top?window=t8&offset=9000&limit=1000'),
  },
  {
    route: 'GET /boards/{board}/rank',
    worst:
      'a (score, tiebreak) pair tied on score with every item of a 64-shard tiebreak board: one ZLEXCOUNT per shard',
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
    route: 'POST /boards/{board}/lookup',
    worst: `the most ids the cost cap takes on 64 shards, ties first (${LOOKUP_IDS_TAKEN}), with data`,
    request: (context) => lookup(context, LOOKUP_IDS_TAKEN),
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
    route: 'GET /boards/{board}/history',
    worst: 'a snapshot of 1 000 rows',
    request: () => get('/boards/wc-sum/history?window=m'),
  },
  {
    route: 'GET /boards/{board}/items/{item}/history',
    worst: 'the lowest item through every kept snapshot of 1 000 rows',
    request: (context) => get(`/boards/wc-sum/items/${lowest(context)}/history?window=m`),
  },
  {
    route: 'GET /boards/{board}/segments',
    worst: 'a page of 1 000 segments of 64 shards (each shard call bounded by its units)',
    request: () => get('/boards/wc-shards/segments?limit=1000'),
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
    worst: 'a page of 100 periods of 10 000 rows',
    request: () => get('/boards/wc-cal/archives?window=day&limit=100'),
    expect: [200, 422],
  },
  {
    route: 'GET /boards/{board}/stream',
    worst: 'a segment of a 64-shard board, view and window',
    request: () => get('/boards/wc-shards/stream?window=fading&segment=s2'),
    stream: true,
  },
];
