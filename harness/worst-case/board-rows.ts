/**
 * Worst-case rows of the board write routes: each the costliest documented use of its route on the
 * boards of ./boards.ts (every option at its maximum), mostly on the one-shard board where one call
 * does all the work (the reads: ./read-rows.ts).
 */
import { AppConfig } from '../../src/common/config';
import { entryCost, segmentsWithin } from '../../src/ranking/core/write-cost';
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
export const post = (path: string, body: unknown = {}): HttpRequest => ({ method: 'POST', path, body });
const fresh = (attempt: number, n: number) => `fresh-${Date.now().toString(36)}-${attempt}-${n}`;

/** The write cost bound by default, in the cost model's units (WRITE_COST_PER_CALL). */
const COST_BOUND = new AppConfig().WRITE_COST_PER_CALL;
const COSTLIEST_SUM_ENTRY = entryCost({ actor: 'a', segments: segmentsOf(0) }, { ...BOARDS['wc-seg'], actors: true });
/** Entries like the costliest one a batch may carry on the costliest segmented board a default instance takes. */
const COSTLIEST_TAKEN = Math.max(1, Math.floor(COST_BOUND / COSTLIEST_SUM_ENTRY));
/** Existing items each with a new actor (no segment) a batch may carry there: its costliest batch in Redis work. */
const ACTORS_TAKEN = Math.floor(
  COST_BOUND /
    entryCost({ actor: 'a' }, { ...BOARDS['wc-seg'], actors: true, capPerItem: BOARDS['wc-seg'].actors.capPerItem }),
);
/** Late scores on the `last` board a batch may carry. */
const LATE_SCORES_TAKEN = Math.floor(COST_BOUND / entryCost({}, { views: [], ...BOARDS['wc-last'] }));
/**
 * A board of every option (wc-sum, wc-shards) is past the write bound: a default instance refuses it when
 * declared (BOARD_WRITE_TOO_COSTLY), so the harness declares it on one of a higher bound, as a board stored
 * before the bound. Its writes are bounded one by one: a write whose own call would weigh more than
 * WRITE_COST_PER_CALL (an actor and 8 segments: 8 windows and 8 views in the board and in each segment,
 * about 2 000 commands) is refused whole before any call (write-rules' checkEntryCost).
 */
const pastBound = (board: 'wc-sum' | 'wc-shards') => ({
  ...BOARDS[board],
  actors: true,
  capPerItem: BOARDS[board].actors.capPerItem,
});
/** The most segments an event with an actor (a like: its user) may name on such a board. */
const PAST_BOUND_ACTOR_SEGMENTS = segmentsWithin({ actor: 'a' }, pastBound('wc-sum'), COST_BOUND);
/** The most segments an event without an actor may name on the 64-shard one. */
const PAST_BOUND_SEGMENTS = segmentsWithin({}, pastBound('wc-shards'), COST_BOUND);
/** What the costliest segmented board a default instance takes holds (boards.ts wc-seg). */
const SEGMENTED_SHAPE = '4 windows, a unique view, ties first, capped actors';
/** The crossing board's filled segments (seed.ts). */
const CROSSING_SEGMENTS = Array.from({ length: 8 }, (_, k) => `x${k}`);
/** The costliest metric: the last, its windows the ones furthest from the board's own. */
export const LAST_METRIC = METRIC_NAMES[METRIC_NAMES.length - 1];
/** Existing items a batch of one metric may carry on the metrics board (WRITE_COST_PER_CALL). */
const METRIC_ENTRIES_TAKEN = Math.min(BATCH_ENTRIES, Math.floor(COST_BOUND / entryCost({}, BOARDS['wc-metrics'])));
/** The same on the board whose eight wilson and controversial views all read the last metric. */
const RATED_ENTRIES_TAKEN = Math.min(BATCH_ENTRIES, Math.floor(COST_BOUND / entryCost({}, BOARDS['wc-rated'])));

/** Existing items a batch may carry on the 64-shard board of every option (no actor, no segment). */
const SHARDED_ENTRIES_TAKEN = Math.min(BATCH_ENTRIES, Math.floor(COST_BOUND / entryCost({}, pastBound('wc-shards'))));

/** A batch of existing items, each with a new actor and eight segments (issue #45 rows 2 and 3). */
function costlyBatch(context: HarnessContext, attempt: number, entries: number, segments = SEGMENTS_PER_EVENT) {
  return post('/boards/wc-seg/increments', {
    items: Array.from({ length: entries }, (_, n) => ({
      item: `i${n % context.sizes.items}`,
      amount: 1,
      actor: fresh(attempt, n),
      ...(segments > 0 && { segments: segmentsOf(n).slice(0, segments) }),
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

export const WRITE_ROWS: WorstRow[] = [
  {
    route: 'POST /boards/{board}/items/{item}/increment',
    worst: `an existing item in the most new segments (${PAST_BOUND_SEGMENTS}) a 64-shard board of every option takes: the names claimed on shard 0 first`,
    request: (_context, attempt) =>
      post('/boards/wc-shards/items/i5/increment', {
        segments: Array.from({ length: PAST_BOUND_SEGMENTS }, (_, k) => `claim${attempt}-${k}`),
      }),
  },
  {
    route: 'POST /boards/{board}/items/{item}/increment',
    worst: 'an existing item in 8 new segments of that board: refused whole before any call',
    request: (_context, attempt) =>
      post('/boards/wc-shards/items/i5/increment', {
        segments: Array.from({ length: SEGMENTS_PER_EVENT }, (_, k) => `refused${attempt}-${k}`),
      }),
    expect: [422],
    times: 1,
  },
  {
    route: 'POST /boards/{board}/items/{item}/increment',
    worst:
      'the first write after a boundary naming 8 segments of 1 000+ items, 8 windows keeping snapshots of 1 000 rows',
    // 72 listings of 1 000 rows (8 × 9 windows) are stored before the write applies, a listing a call.
    manyCalls: 'each call stores one listing of at most 1 000 rows (snapshot_lib ROWS_PER_CALL)',
    prepare: async (context) => {
      // A segment's mark expires on Redis' real clock (3 minutes here): a write marks any gone since the
      // seeding again (a full-size run reaches this row hours later), so the minute after crosses a boundary.
      const marked = await context.send(
        post('/boards/wc-cross/items/i0/increment', { segments: CROSSING_SEGMENTS }),
        'seeder',
      );
      if (marked.status !== 200) throw new Error(`marking wc-cross' segments: ${marked.status}`);
      await context.advanceSec(60);
    },
    request: () => post('/boards/wc-cross/items/i1/increment', { segments: CROSSING_SEGMENTS }),
    times: 1,
  },
  {
    route: 'POST /boards/{board}/items/{item}/increment',
    worst: `a new item with a new actor in the most segments (${PAST_BOUND_ACTOR_SEGMENTS}) a board of every option takes: 8 windows, 8 views, ties first`,
    request: (_context, attempt) =>
      post(`/boards/wc-sum/items/${fresh(attempt, 0)}/increment`, {
        amount: 3,
        actor: fresh(attempt, 1),
        segments: segmentsOf(attempt).slice(0, PAST_BOUND_ACTOR_SEGMENTS),
      }),
    grows: { times: 40 },
  },
  {
    route: 'POST /boards/{board}/items/{item}/increment',
    worst: 'a new item with a new actor in 8 segments on that board: refused whole before any call',
    request: (_context, attempt) =>
      post(`/boards/wc-sum/items/${fresh(attempt, 0)}/increment`, {
        amount: 3,
        actor: fresh(attempt, 1),
        segments: segmentsOf(attempt),
      }),
    expect: [422],
    times: 1,
  },
  {
    route: 'POST /boards/{board}/items/{item}/increment',
    worst: `a new item with a new actor in 8 segments on the costliest segmented board the write bound admits: ${SEGMENTED_SHAPE}`,
    // As the seeder: the measured client's items quota is spent by the row before it.
    caller: 'seeder',
    request: (_context, attempt) =>
      post(`/boards/wc-seg/items/${fresh(attempt, 0)}/increment`, {
        amount: 3,
        actor: fresh(attempt, 1),
        segments: segmentsOf(attempt),
      }),
  },
  {
    route: 'POST /boards/{board}/increments',
    worst: `the costliest batch the cost bound takes: ${COSTLIEST_TAKEN} existing item(s), each with a new actor in 8 segments, on the costliest segmented board the write bound admits`,
    request: (context, attempt) => costlyBatch(context, attempt, COSTLIEST_TAKEN),
    // LOW_QUOTAS' 2 000 actor entries at 36 a request (a new actor in 4 windows and in 8 segments' 4): refused
    // by the 56th alone, sooner after the rows before it spent part of them (the 38th in the whole harness).
    grows: { times: 60 },
  },
  {
    route: 'POST /boards/{board}/increments',
    worst: `the costliest batch in Redis work the cost bound takes there: ${ACTORS_TAKEN} existing items, each with a new actor (no segment), in calls of bounded work (write-cost.ts entryWork)`,
    manyCalls:
      "each call within WRITE_COST_PER_CALL of work (actors' and segments' places weighed by their instructions)",
    request: (context, attempt) => costlyBatch(context, attempt, ACTORS_TAKEN, 0),
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
      'a better (score, tiebreak) pair of a held item, tied on score with every item of a 64-shard tiebreak board of 8 windows, lowest score first: moved in each window, ranked by (score, mark) on every shard',
    request: (context, attempt) =>
      post(`/boards/wc-tiebreak/items/t${attempt}/score`, { score: 7, tiebreak: context.sizes.items + attempt }),
  },
  {
    route: 'POST /boards/{board}/items/{item}/score',
    worst:
      'a better pair (a lower tiebreak) of a held item of a 64-shard tiebreak board of ties first whose items all hold one pair, in 8 windows: moved with a new tie mark in each, ranked by its whole member on every shard',
    request: (_context, attempt) =>
      post(`/boards/wc-tb-first/items/t${attempt + 1}/score`, { score: 7, tiebreak: -1 - attempt }),
  },
  {
    route: 'POST /boards/{board}/items/{item}/likes',
    worst: `a new user in the most segments (${PAST_BOUND_ACTOR_SEGMENTS}) the board of every option takes`,
    request: (_context, attempt) =>
      post('/boards/wc-sum/items/i1/likes', {
        userId: fresh(attempt, 2),
        segments: segmentsOf(attempt).slice(0, PAST_BOUND_ACTOR_SEGMENTS),
      }),
    grows: { times: 60 },
  },
  {
    route: 'POST /boards/{board}/items/{item}/likes',
    worst: 'a new user in 8 segments on that board: refused whole before any call',
    request: (_context, attempt) =>
      post('/boards/wc-sum/items/i1/likes', { userId: fresh(attempt, 2), segments: segmentsOf(attempt) }),
    expect: [422],
    times: 1,
  },
  {
    route: 'DELETE /boards/{board}/items/{item}/likes/{userId}',
    worst: `a like held in 8 windows and the most segments (${PAST_BOUND_ACTOR_SEGMENTS}) that board takes`,
    prepare: async (context) => {
      const like = { userId: 'liked-within', segments: segmentsOf(3).slice(0, PAST_BOUND_ACTOR_SEGMENTS) };
      await context.send(post('/boards/wc-sum/items/i2/likes', like), 'seeder');
    },
    request: () => ({ method: 'DELETE', path: '/boards/wc-sum/items/i2/likes/liked-within' }),
    times: 1,
  },
  {
    route: 'DELETE /boards/{board}/items/{item}/likes/{userId}',
    worst:
      'a like held in 8 windows and 8 segments, stored past the write bound: taken out of the board and one segment per call, the rest recorded for the next calls (likes_lib)',
    prepare: async (context) => {
      await context.send(post('/boards/wc-sum/items/i2/likes', { userId: 'liked', segments: segmentsOf(3) }), 'seeder');
    },
    request: () => ({ method: 'DELETE', path: '/boards/wc-sum/items/i2/likes/liked' }),
    times: 1,
  },
  {
    route: 'DELETE /boards/{board}/items/{item}/likes/{userId}',
    worst:
      "that like's unlike on an instance stopped after its first call (500), and the scheduler's sweep finishing the take-back left recorded: a scan of the shard's records, then one segment per call (LikeTakeBacks.sweep)",
    prepare: async (context) => {
      await context.send(post('/boards/wc-sum/items/i2/likes', { userId: 'swept', segments: segmentsOf(3) }), 'seeder');
    },
    caller: 'stopping',
    request: () => ({ method: 'DELETE', path: '/boards/wc-sum/items/i2/likes/swept' }),
    expect: [500],
    times: 1,
    settle: async (context) => {
      if (!(await context.sweepTakeBacks('wc-sum'))) throw new Error('the sweep left a take-back on wc-sum');
    },
    measuresSettle: true,
  },
  {
    route: 'POST /boards/{board}/items/{item}/likes',
    worst: `a new user in 8 segments on the costliest segmented board the write bound admits: ${SEGMENTED_SHAPE}`,
    caller: 'seeder',
    request: (_context, attempt) =>
      post('/boards/wc-seg/items/i1/likes', { userId: fresh(attempt, 2), segments: segmentsOf(attempt) }),
  },
  {
    route: 'DELETE /boards/{board}/items/{item}/likes/{userId}',
    worst: `a like held in 8 segments on that board`,
    prepare: async (context) => {
      await context.send(post('/boards/wc-seg/items/i2/likes', { userId: 'liked', segments: segmentsOf(3) }), 'seeder');
    },
    request: () => ({ method: 'DELETE', path: '/boards/wc-seg/items/i2/likes/liked' }),
    times: 1,
  },
  {
    route: 'POST /boards/{board}/increments',
    worst: `an Idempotency-Key batch of the most existing items the cost bound takes (${SHARDED_ENTRIES_TAKEN}) on the 64-shard board of every option: the request's ledger entry claimed and completed, a part on every shard`,
    request: (context, attempt) => ({
      ...post('/boards/wc-shards/increments', {
        items: Array.from({ length: SHARDED_ENTRIES_TAKEN }, (_, n) => ({
          item: `i${n % context.sizes.items}`,
          amount: 1,
        })),
      }),
      headers: { 'idempotency-key': fresh(attempt, 0) },
    }),
    // Its answers stored (the ledger entry and one a shard) pass the measured client's low quota.
    caller: 'seeder',
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
