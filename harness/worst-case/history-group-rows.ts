/**
 * Worst-case rows of group moderation over rolling snapshots (archive_held_lib's histheld, issue #49):
 * wc-histgroups keeps 1 000 snapshots of its 1 000 best on a one-minute window, and a segment's too;
 * its seeded items, all of one group, leave the window a minute on while the snapshots (the board's
 * and the segment's) still keep their rows, so only the archived map names their group; that group is
 * hidden. The history reads of that snapshot leave them all out; the group's state set and cleared
 * reads them from the archived map. Last, a segment's crossing after the board's: every row of its
 * snapshot an item the board's window let go (groups_lib's lag_joined).
 */
import { MODERATED_GROUP_ARCHIVED_ITEMS_PER_SHARD } from '../../src/ranking/core/ranking.limits';
import { SNAPSHOT_KEEP, SNAPSHOT_TOP_ITEMS } from '../../src/ranking/options/snapshots/snapshots.limits';
import type { HarnessContext, HttpRequest, WorstRow } from './harness-types';

/** One rolling window keeping its most snapshots of its most rows, groups and segments. */
export const HISTORY_GROUPS_BOARD = {
  windows: [
    { name: 'm', period: '1m', interval: '1m', snapshots: { keep: SNAPSHOT_KEEP.max, top: SNAPSHOT_TOP_ITEMS.max } },
  ],
  groups: true,
  segments: { max: 100 },
};

const ITEMS = Math.min(SNAPSHOT_TOP_ITEMS.max, MODERATED_GROUP_ARCHIVED_ITEMS_PER_SHARD);
const GROUP = '/admin/boards/wc-histgroups/moderation/groups/h0';
/** The state key of the boundary (unix s) of the snapshot holding every seeded item. */
const AT = 'historyGroupsAt';
const BATCH = 200;

const get = (path: string): HttpRequest => ({ method: 'GET', path });

/** Reads `path` until it answers 200 (a boundary crossed and the window drained). */
async function settled(context: HarnessContext, path: string): Promise<void> {
  for (let read = 0; read < 100; read++) if ((await context.send(get(path), 'seeder')).status === 200) return;
  throw new Error(`seeding ${path}: never answered 200`);
}

/** ITEMS items `<prefix><n>` of `group`, scores distinct from `best` down, in the board and (`segments`) s0. */
async function fill(context: HarnessContext, prefix: string, group: string, best = ITEMS, segments = ['s0']) {
  for (let first = 0; first < ITEMS; first += BATCH) {
    const items = Array.from({ length: Math.min(BATCH, ITEMS - first) }, (_, k) => ({
      item: `${prefix}${first + k}`,
      amount: best - first - k,
      group,
      ...(segments.length > 0 ? { segments } : {}),
    }));
    await context.send({ method: 'POST', path: '/boards/wc-histgroups/increments', body: { items } }, 'seeder');
  }
}

/**
 * ITEMS items of group h0, in the board and segment s0; a minute on, both cross the boundary (the
 * snapshot of every item) and drain the window (every item leaves it); then h0 is hidden. The first
 * row's prepare, not the seeding: its minute must not move the clock under the rows before it (the
 * late scores' oldest slot, the tiebreak board's boundary).
 */
async function seedHistoryGroups(context: HarnessContext): Promise<void> {
  await fill(context, 'h', 'h0');
  await context.advanceSec(60);
  for (const query of ['', '&segment=s0']) await settled(context, `/boards/wc-histgroups/top?window=m${query}`);
  context.state.set(AT, String(context.nowSec()));
  const hidden = await context.send({ method: 'PUT', path: GROUP, body: { state: 'hidden' } }, 'admin');
  if (hidden.status !== 204) throw new Error(`seeding ${GROUP}: ${hidden.status}`);
}

const history = (context: HarnessContext, query: string) =>
  get(`/boards/wc-histgroups/history?window=m&at=${context.state.get(AT)}${query}`);

const HELD = `${ITEMS} items that left every window, held by snapshots only (the archived map)`;

export const HISTORY_GROUP_ROWS: WorstRow[] = [
  {
    route: 'GET /boards/{board}/history',
    worst: `a snapshot of ${ITEMS} rows (keep ${SNAPSHOT_KEEP.max}) of ${HELD}, their group hidden: every row left out`,
    prepare: seedHistoryGroups,
    request: (context) => history(context, ''),
  },
  {
    route: 'GET /boards/{board}/history',
    worst: `a segment's snapshot of ${ITEMS} rows of ${HELD}, their group hidden: every row left out`,
    request: (context) => history(context, '&segment=s0'),
  },
  {
    route: 'PUT /admin/boards/{board}/moderation/groups/{group}',
    worst: `a group of ${HELD} hidden, then cleared: its exceptions read from the archived map (one lex range)`,
    request: (_, attempt) =>
      attempt % 2 === 0 ? { method: 'PUT', path: GROUP, body: { state: 'hidden' } } : { method: 'DELETE', path: GROUP },
    settle: async (context) => {
      await context.send({ method: 'PUT', path: GROUP, body: { state: 'hidden' } }, 'admin');
    },
    expect: [204],
  },
  {
    route: 'GET /boards/{board}/top',
    worst: `a segment's first read after a boundary the board crossed first: its snapshot of ${ITEMS} rows, every item let go by the board's window and in none of its snapshot (the lag map), joins the archived map and histheld`,
    prepare: async (context) => {
      await fill(context, 'r', 'h1');
      // Better items the segment lacks: the board's snapshot holds none of the segment's.
      await fill(context, 'b', 'h2', 2 * ITEMS, []);
      await context.advanceSec(60);
      await settled(context, '/boards/wc-histgroups/top?window=m');
    },
    request: () => get('/boards/wc-histgroups/top?window=m&segment=s0'),
    times: 1,
  },
];
