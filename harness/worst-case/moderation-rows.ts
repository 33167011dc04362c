/**
 * Worst-case rows of moderation, run first: they leave the one-shard board of every option holding
 * the most moderated items a shard may (MODERATED_ITEMS_PER_SHARD, hidden), so every later row on it
 * (writes answering ranks, every read) pays what moderation adds at its maximum; the review queue is
 * read on the `last` board, which reviews.
 */
import {
  ARCHIVE_INDEX_PERIODS_PER_CHANGE,
  ARCHIVE_INDEX_ROWS_PER_CHANGE,
  LOOKUP_IDS_PER_CALL,
  MODERATED_GROUP_ARCHIVED_ITEMS_PER_SHARD,
  MODERATED_GROUP_ITEMS_PER_SHARD,
  MODERATED_GROUPS_PER_BOARD,
  MODERATED_ITEMS_PER_SHARD,
  QUEUE_DEPTH_ITEMS,
} from '../../src/ranking/core/ranking.limits';
import { ARCHIVE_INDEX_ROWS_PER_CHUNK_FIELD } from '../../src/ranking/options/calendar/calendar.limits';
import { AppConfig } from '../../src/common/config';
import { MODERATED_GROUP_IDS } from './boards';
import { archivedGroupItems, archivedGroupRows } from './seed';
import { fillAll } from './fill';
import type { HarnessContext, HttpRequest, WorstRow } from './harness-types';
import { MODERATION_INDEXES } from './held-keys';

const hide = (item: string): HttpRequest => ({
  method: 'PUT',
  path: `/admin/boards/wc-sum/moderation/items/${item}`,
  body: { state: 'hidden' },
});

const GROUPS_BOARD = '/admin/boards/wc-modgroups/moderation';
const hideGroup = (group: string): HttpRequest => ({
  method: 'PUT',
  path: `${GROUPS_BOARD}/groups/${group}`,
  body: { state: 'hidden' },
});
const get = (path: string): HttpRequest => ({ method: 'GET', path });
const post = (path: string, body: object): HttpRequest => ({ method: 'POST', path, body });
/**
 * A view row's first read, unmeasured: the first read of a board's window after seeding takes the
 * snapshots due and drains what expired (the snapshot and expiry rows measure those), not moderation.
 */
const warm =
  (path: string) =>
  async (context: HarnessContext): Promise<void> => {
    await context.send(get(path), 'client');
  };
const SUM_VIEW_TOP = '/boards/wc-sum/top?window=fading&limit=1000';
const GROUPS_VIEW_TOP = '/boards/wc-modgroups/top?window=fading&limit=1000';

/** wc-modgroups at its maxima but one group: every group g1 … g99 hidden, and its most item states (items of no hidden group). */
async function moderateGroupsBoard(context: HarnessContext): Promise<void> {
  await fillAll(context, MODERATED_GROUPS_PER_BOARD - 1, (g) => hideGroup(`g${g + 1}`), 'admin');
  const { groups, itemsEach } = MODERATED_GROUP_IDS;
  const candidates = Array.from({ length: groups * itemsEach }, (_, n) => n).filter(
    (n) => n % groups >= MODERATED_GROUPS_PER_BOARD,
  );
  const step = Math.max(1, Math.floor(candidates.length / MODERATED_ITEMS_PER_SHARD));
  await fillAll(
    context,
    MODERATED_ITEMS_PER_SHARD,
    (k) => ({ ...hide(`i${candidates[k * step]}`), path: `${GROUPS_BOARD}/items/i${candidates[k * step]}` }),
    'admin',
  );
}

const MAXED = `${MODERATED_GROUPS_PER_BOARD} hidden groups holding ${MODERATED_GROUP_ITEMS_PER_SHARD} items and ${MODERATED_ITEMS_PER_SHARD} hidden items on one shard`;

/** Spans and a view's item read of a hidden item, each leaving out the most moderation. */
const SPAN_HISTORY_STREAM_ROWS: WorstRow[] = [
  {
    route: 'GET /boards/{board}/top',
    worst: `the longest span (the whole 10 000-slot window), limit 1 000, ${MAXED}`,
    request: () => get('/boards/wc-modgroups/top?window=m&span=10000m&limit=1000'),
    expect: [200, 422],
  },
  {
    route: 'GET /boards/{board}/items/{item}',
    worst: `a hidden item's span read (the whole window), ${MAXED}`,
    request: () => get('/boards/wc-modgroups/items/i1?window=m&span=10000m'),
    expect: [200, 422],
  },
  {
    route: 'GET /boards/{board}/items/{item}',
    worst: `a hidden item's read on a decay view, ${MAXED}`,
    request: () => get('/boards/wc-modgroups/items/i1?window=fading'),
  },
];

/** Hides `count` seeded items spread over the listing of `board` (their states land on every shard). */
const hideSpread =
  (board: string, count: number) =>
  async (context: HarnessContext): Promise<void> => {
    const step = Math.max(1, Math.floor(context.sizes.items / count));
    await fillAll(
      context,
      count,
      (n) => ({ ...hide(`i${n * step + 1}`), path: `/admin/boards/${board}/moderation/items/i${n * step + 1}` }),
      'admin',
    );
  };

/**
 * Hides `count` rows of the calendar board's archived periods (its items c0 …), spread over them, and
 * hides or clears one more each time: every call changes the items hidden, so the first archive read
 * after it finds the hidden positions of the period again (archive_read.lua).
 */
const hideArchiveRows =
  (count: number) =>
  async (context: HarnessContext): Promise<void> => {
    const at = (n: number) => `/admin/boards/wc-cal/moderation/items/c${n}`;
    const step = Math.max(2, Math.floor(context.sizes.periodRows / count));
    if (!context.state.has('archiveRowsHidden')) {
      await fillAll(context, count, (n) => ({ ...hide(`c${n * step + 1}`), path: at(n * step + 1) }), 'admin');
      context.state.set('archiveRowsHidden', 'cleared');
    }
    const cleared = context.state.get('archiveRowsHidden') === 'cleared';
    await context.send(cleared ? { ...hide('c0'), path: at(0) } : { method: 'DELETE', path: at(0) }, 'admin');
    context.state.set('archiveRowsHidden', cleared ? 'hidden' : 'cleared');
  };
/** The hidden item of hideArchiveRows ranked lowest in every period: a find passes over the whole text. */
const lastHiddenArchiveRow = (context: HarnessContext): string => {
  const count = MODERATED_ITEMS_PER_SHARD - 1;
  const step = Math.max(2, Math.floor(context.sizes.periodRows / count));
  return `c${Math.min(count - 1, Math.floor((context.sizes.periodRows - 2) / step)) * step + 1}`;
};
/** Allows `count` rows of the 64-shard review board's archived periods (its items c0 …), spread over them. */
const allowArchiveRows =
  (count: number) =>
  async (context: HarnessContext): Promise<void> => {
    const step = Math.max(1, Math.floor(context.sizes.periodRows / count));
    await fillAll(
      context,
      count,
      (n) => ({
        method: 'PUT',
        path: `/admin/boards/wc-cal64/moderation/items/c${n * step}`,
        body: { state: 'allowed' },
      }),
      'admin',
    );
  };
/** Rows of a period one archive read call passes over for its hidden positions (the default EXPIRE_CHUNK). */
const INDEX_ROWS_PER_CALL = ARCHIVE_INDEX_ROWS_PER_CHUNK_FIELD * new AppConfig().EXPIRE_CHUNK;
/** The last page (1 000 rows) of the calendar board's newest day. */
const lastArchivePage = (context: HarnessContext): HttpRequest =>
  get(`/boards/wc-cal/archive?window=day&offset=${Math.max(0, context.sizes.periodRows - 1000)}&limit=1000`);

/**
 * Reads of kept snapshots and archives (previous ranks, an item's history, archive pages), each
 * leaving out the items hidden now: on the most moderated board, on 64 shards and on the calendar board.
 */
const KEPT_LISTING_ROWS: WorstRow[] = [
  {
    route: 'POST /boards/{board}/lookup',
    worst: `100 ids, each previous rank among the rows shown now (one ZMSCORE of the states), ${MAXED}: calls of ${LOOKUP_IDS_PER_CALL} ids`,
    request: (context) =>
      post('/boards/wc-modgroups/lookup', {
        window: 'm',
        items: Array.from({ length: 100 }, (_, n) => `i${(n * 13) % context.sizes.items}`),
      }),
  },
  {
    route: 'POST /boards/{board}/lookup',
    worst: `1 000 ids (the most a lookup names), each previous rank among the rows shown now, ${MAXED}: calls of ${LOOKUP_IDS_PER_CALL} ids`,
    request: (context) =>
      post('/boards/wc-modgroups/lookup', {
        window: 'm',
        items: Array.from({ length: 1000 }, (_, n) => `i${(n * 13) % context.sizes.items}`),
      }),
    manyCalls: `calls of at most LOOKUP_IDS_PER_CALL (${LOOKUP_IDS_PER_CALL}) ids, each a read of the client's budget`,
  },
  {
    route: 'GET /boards/{board}/top',
    worst: `limit 1 000 on 64 shards, ${MODERATED_ITEMS_PER_SHARD} hidden items spread over them, previous ranks read afresh (a state change forgets them): one snapshot read and one page read per shard`,
    prepare: hideSpread('wc-shards', MODERATED_ITEMS_PER_SHARD),
    request: () => get('/boards/wc-shards/top?window=m&limit=1000'),
  },
  {
    route: 'GET /boards/{board}/items/{item}/history',
    worst: `the lowest item on 64 shards through every kept snapshot of 1 000 rows, ${MODERATED_ITEMS_PER_SHARD} hidden items spread over them`,
    request: (context) => get(`/boards/wc-shards/items/i${context.sizes.items - 1}/history?window=m`),
  },
  {
    route: 'GET /boards/{board}/archive',
    worst: `the last page of a 10 000-row period, ${MODERATED_ITEMS_PER_SHARD} of its items hidden, spread over it, just after a moderation change: the period's hidden positions found again in a pass over its rows taken in calls of at most ${INDEX_ROWS_PER_CALL} rows (each a read of the client's budget), the page cut by them in the last`,
    prepare: hideArchiveRows(MODERATED_ITEMS_PER_SHARD - 1),
    request: lastArchivePage,
    times: 1,
  },
  {
    route: 'GET /boards/{board}/archive',
    worst: `the last page of a 10 000-row period, ${MODERATED_ITEMS_PER_SHARD} of its items hidden, spread over it, the period's hidden positions kept: a binary search and the page cut by them`,
    request: lastArchivePage,
  },
  {
    route: 'GET /boards/{board}/archive',
    worst: `the deepest page a 64-shard review board reads (rows 213-312) of a 10 000-row period, ${MODERATED_ITEMS_PER_SHARD} of its items allowed, spread over it: each shard answers its rows from the top through its 313th allowed one, those not allowed too, at most its share of ARCHIVE_ROWS_PER_READ (312 rows; past it a 422)`,
    prepare: allowArchiveRows(MODERATED_ITEMS_PER_SHARD),
    request: () => get('/boards/wc-cal64/archive?window=day&offset=212&limit=100'),
    expect: [200, 422],
  },
  {
    route: 'GET /boards/{board}/archives',
    worst: `a page of 100 periods of 10 000 rows, ${MODERATED_ITEMS_PER_SHARD} hidden items spread over them: calls of at most ARCHIVE_ROWS_PER_CALL rows of one period`,
    request: () => get('/boards/wc-cal/archives?window=day&limit=100'),
    expect: [200, 422],
  },
  {
    route: 'PUT /admin/boards/{board}/moderation/items/{item}',
    worst: `an item of the calendar board allowed, then hidden again (its last hidden row of each period, ${MODERATED_ITEMS_PER_SHARD} hidden), the hidden positions of its newest periods of 10 000 rows kept: the change updates them by the item's position (each period's text copied, the item found once), at most ${ARCHIVE_INDEX_PERIODS_PER_CHANGE} periods and ${ARCHIVE_INDEX_ROWS_PER_CHANGE} rows of work`,
    prepare: async (context) => {
      await context.send(
        get(`/boards/wc-cal/archives?window=day&limit=${ARCHIVE_INDEX_PERIODS_PER_CHANGE}&items=1`),
        'client',
      );
    },
    request: (context, attempt) => ({
      method: 'PUT',
      path: `/admin/boards/wc-cal/moderation/items/${lastHiddenArchiveRow(context)}`,
      body: { state: attempt % 2 === 0 ? 'allowed' : 'hidden' },
    }),
    expect: [204],
  },
];

/** Group moderation, then reads and a write on the board holding the most of it. */
const GROUP_ROWS: WorstRow[] = [
  {
    route: 'PUT /admin/boards/{board}/moderation/groups/{group}',
    worst: `the last group state a board takes (${MODERATED_GROUPS_PER_BOARD}, reaching ${MODERATED_GROUP_ITEMS_PER_SHARD} items on the shard, beside ${MODERATED_ITEMS_PER_SHARD} item states): a check call and a set call`,
    prepare: moderateGroupsBoard,
    request: () => hideGroup('g0'),
    expect: [204],
  },
  {
    route: 'PUT /admin/boards/{board}/moderation/groups/{group}',
    worst: 'a new group state past the limit: refused after the check call, nothing stored',
    request: () => hideGroup(`g${MODERATED_GROUPS_PER_BOARD}`),
    expect: [409],
    times: 1,
  },
  {
    route: 'DELETE /admin/boards/{board}/moderation/groups/{group}',
    worst: 'a group of a board at its limits, cleared and hidden again',
    request: () => ({ method: 'DELETE', path: `${GROUPS_BOARD}/groups/g0` }),
    settle: async (context) => {
      await context.send(hideGroup('g0'), 'admin');
    },
    expect: [204],
  },
  {
    route: 'GET /boards/{board}/top',
    worst: `limit 1 000 from the head, ${MAXED}, ties first`,
    request: () => get('/boards/wc-modgroups/top?window=m&limit=1000'),
  },
  {
    route: 'GET /boards/{board}/top',
    worst: `limit 1 000 of a decay view, ${MAXED} (moderation leaves them out of views too)`,
    prepare: warm(GROUPS_VIEW_TOP),
    request: () => get(GROUPS_VIEW_TOP),
  },
  {
    route: 'GET /boards/{board}/items/{item}',
    worst: `the lowest item, ${MAXED}`,
    request: (context) => get(`/boards/wc-modgroups/items/i${context.sizes.items - 1}?window=m`),
  },
  {
    route: 'GET /boards/{board}/items/{item}/around',
    worst: `radius 100 on a view, ${MAXED}`,
    request: (context) => get(`/boards/wc-modgroups/items/i${context.sizes.items - 1}/around?window=fading&radius=100`),
  },
  ...SPAN_HISTORY_STREAM_ROWS,
  ...KEPT_LISTING_ROWS,
  {
    route: 'POST /boards/{board}/items/{item}/increment',
    worst: `an existing item's rank in 8 windows and 8 views, ${MAXED}`,
    request: () => ({ method: 'POST', path: '/boards/wc-modgroups/items/i1500/increment', body: { amount: 1 } }),
    holds: MODERATION_INDEXES,
  },
];

const ARCHIVED_GROUP = '/admin/boards/wc-calgroups/moderation/groups/a0';
/** wc-calgroups' archived rows of group a0, which only the archived map names the group of. */
const ARCHIVED = `${String(MODERATED_GROUP_ARCHIVED_ITEMS_PER_SHARD).replace(/\B(?=(\d{3})+$)/g, ' ')} archived items (rows of every kept period, at most every other one; none in a window)`;

/**
 * A group state reaching rows of archived periods whose items left every window (groups_lib's archived
 * map, moderation_history_lib), then the reads and a write that leave them out.
 */
const ARCHIVED_GROUP_ROWS: WorstRow[] = [
  {
    route: 'PUT /admin/boards/{board}/moderation/groups/{group}',
    worst: `a group of ${ARCHIVED} hidden, then cleared: its exceptions read from the archived map (one lex range), the newest periods' kept hidden positions updated within ${ARCHIVE_INDEX_PERIODS_PER_CHANGE} periods and ${ARCHIVE_INDEX_ROWS_PER_CHANGE} rows of work`,
    prepare: async (context) => {
      await context.send(
        get(`/boards/wc-calgroups/archives?window=day&limit=${ARCHIVE_INDEX_PERIODS_PER_CHANGE}&items=1`),
        'client',
      );
    },
    request: (_, attempt) =>
      attempt % 2 === 0
        ? { method: 'PUT', path: ARCHIVED_GROUP, body: { state: 'hidden' } }
        : { method: 'DELETE', path: ARCHIVED_GROUP },
    settle: async (context) => {
      await context.send({ method: 'PUT', path: ARCHIVED_GROUP, body: { state: 'hidden' } }, 'admin');
    },
    expect: [204],
  },
  {
    route: 'GET /boards/{board}/archive',
    worst: `the last page of the newest period, ${ARCHIVED} hidden by their group: each call reads them from the archived map, the period's hidden positions found in a pass of calls of at most ${INDEX_ROWS_PER_CALL} rows`,
    request: (context) => {
      const newest = context.sizes.periods - 1;
      const shown = archivedGroupRows(context) - archivedGroupItems(context, newest);
      return get(`/boards/wc-calgroups/archive?window=day&offset=${Math.max(0, shown - 1000)}&limit=1000`);
    },
    manyCalls: `a pass over the period's rows for its hidden positions, calls of at most ${INDEX_ROWS_PER_CALL} rows, each a read of the client's budget`,
  },
  {
    route: 'POST /boards/{board}/items/{item}/increment',
    worst: `an item of the newest archive (its previous rank among the rows shown now), ${ARCHIVED} hidden by their group`,
    request: (context) => ({
      method: 'POST',
      path: `/boards/wc-calgroups/items/p${context.sizes.periods - 1}c1/increment`,
      body: { amount: 1, group: 'a1' },
    }),
  },
];

export const MODERATION_ROWS: WorstRow[] = [
  {
    route: 'PUT /admin/boards/{board}/moderation/items/{item}',
    worst: `the last state a shard takes (${MODERATED_ITEMS_PER_SHARD}): one call on the item's shard`,
    prepare: async (context) => {
      // Seeded items spread over the listing: each later read skips them at their places.
      const step = Math.max(1, Math.floor(context.sizes.items / MODERATED_ITEMS_PER_SHARD));
      await fillAll(context, MODERATED_ITEMS_PER_SHARD - 1, (n) => hide(`i${(n + 1) * step}`), 'admin');
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
    route: 'GET /boards/{board}/top',
    worst: `limit 1 000 of a decay view, ${MODERATED_ITEMS_PER_SHARD} hidden items spread over it (moderation leaves them out of views too)`,
    prepare: warm(SUM_VIEW_TOP),
    request: () => get(SUM_VIEW_TOP),
  },
  {
    route: 'GET /boards/{board}/items/{item}/around',
    worst: `radius 100 on a hot view at its lowest item, ${MODERATED_ITEMS_PER_SHARD} hidden items spread over it (moderation)`,
    request: (context) => get(`/boards/wc-sum/items/i${context.sizes.items - 1}/around?window=hotm&radius=100`),
  },
  {
    route: 'GET /admin/boards/{board}/moderation/queue',
    worst: `the deepest page (${QUEUE_DEPTH_ITEMS} rows) of a review board, every item waiting`,
    request: () => ({
      method: 'GET',
      path: `/admin/boards/wc-last/moderation/queue?window=l8&limit=100&cursor=${QUEUE_DEPTH_ITEMS - 100}`,
    }),
  },
  ...GROUP_ROWS,
  ...ARCHIVED_GROUP_ROWS,
];
