/**
 * Worst-case rows of group boards: wc-teams ranks groups of wc-members' items (top 1 000, decay 1).
 * Prepared here, not by seed.ts: FULL_GROUPS groups of GROUP_TOP_MEMBERS.max members each, every member
 * scored, so one read settles more dirty member rows than one call may (GROUP_SETTLE_ROWS).
 */
import { BOARD_DROP_KEYS_PER_CALL } from '../../src/ranking/core/ranking.limits';
import {
  GROUP_HISTORY_PAGE_ROWS,
  GROUP_SETTLE_ROWS,
  GROUP_TOP_MEMBERS,
  MAX_MEMBERS_PER_BOARD,
  MAX_MEMBERS_PER_GROUP,
} from '../../src/ranking/options/group-of/group-of.limits';
import { SHARDS_PER_BOARD } from '../../src/ranking/core/ranking.limits';
import { shardOf } from '../../src/ranking/core/shard-math';
import { fillAll } from './fill';
import type { HarnessContext, HttpRequest, WorstRow } from './harness-types';
import { RETRACTIONS_NOTED } from './held-keys';
import { untilDone } from './service-rows';

const MEMBERS = GROUP_TOP_MEMBERS.max;
/** One group more than a settle call recomputes. */
const FULL_GROUPS = Math.ceil(GROUP_SETTLE_ROWS / MEMBERS) + 1;
const BATCH = 1000;
const DAY_SEC = 86_400;
/** Reads that drain a closed day of the harness's member board, at most. */
const DRAIN_READS = 100;

const join = (group: string, item: string, board = 'wc-teams'): HttpRequest => ({
  method: 'PUT',
  path: `/boards/${board}/members/${group}/${item}`,
});
const get = (path: string): HttpRequest => ({ method: 'GET', path });
const itemOf = (g: number, k: number) => `p${g}-${k}`;

/** `items` scored 1, 2, … in their order on `board`, BATCH entries a request. */
export async function scoreInOrder(context: HarnessContext, board: string, items: string[]): Promise<void> {
  const entries = items.map((item, k) => ({ item, amount: 1 + k }));
  for (let first = 0; first < entries.length; first += BATCH)
    await context.send(
      { method: 'POST', path: `/boards/${board}/increments`, body: { items: entries.slice(first, first + BATCH) } },
      'seeder',
    );
}

/** Every group full and every member scored; then one more write to each group, so every group is dirty. */
async function fillGroups(context: HarnessContext): Promise<void> {
  for (let g = 0; g < FULL_GROUPS; g++) {
    await fillAll(context, MEMBERS, (k) => join(`t${g}`, itemOf(g, k)), 'seeder');
    await scoreInOrder(
      context,
      'wc-members',
      Array.from({ length: MEMBERS }, (_, k) => itemOf(g, k)),
    );
  }
}

/** One write to a member of every group: each group dirty, its score to recompute from 1 000 members. */
async function dirtyEveryGroup(context: HarnessContext): Promise<void> {
  const items = Array.from({ length: FULL_GROUPS }, (_, g) => ({ item: itemOf(g, 0), amount: 1 }));
  await context.send({ method: 'POST', path: '/boards/wc-members/increments', body: { items } }, 'seeder');
}

/** A group's most members on one shard of the sharded member board (group-boards.store.ts's limitsOf). */
const PER_SHARD = Math.ceil((2 * MAX_MEMBERS_PER_GROUP) / SHARDS_PER_BOARD.max);
/**
 * The sharded group board's groups: s1's MEMBERS members spread over every shard (every shard answers
 * rows and records a part), the others PER_SHARD each all on shard 0 (a group may hold no more there),
 * as many as leave shard 0 at about its most members (2 x MAX_MEMBERS_PER_BOARD / shards): shard 0's
 * part of a listing, and the merged listing's record, at their largest.
 */
const SHARDED_GROUPS = Math.floor((2 * MAX_MEMBERS_PER_BOARD) / SHARDS_PER_BOARD.max / PER_SHARD);

const shardedMembersFound = new Map<number, string[]>();

/**
 * A sharded group's members, found once a group: a group on shard 0 is hashed from some 20 000
 * candidates, and rows dirtying the groups asked for them again (seconds of this process's CPU).
 */
function shardedMembers(group: number): string[] {
  const found = shardedMembersFound.get(group);
  if (found) return found;
  const names: string[] = [];
  for (let k = 0; names.length < (group === 1 ? MEMBERS : PER_SHARD); k++) {
    const item = `q${group}-${k}`;
    if (group === 1 || shardOf(item, SHARDS_PER_BOARD.max) === 0) names.push(item);
  }
  shardedMembersFound.set(group, names);
  return names;
}

/** Every member of every sharded group joined and scored. */
async function fillShardedGroups(context: HarnessContext): Promise<void> {
  for (let g = 0; g < SHARDED_GROUPS; g++) {
    const members = shardedMembers(g);
    // A refused join (past a group's share of a shard) would leave the row measuring less than it says.
    await fillAll(context, members.length, (k) => join(`s${g}`, members[k], 'wc-teams-sharded'), 'seeder');
    await scoreInOrder(context, 'wc-members-sharded', members);
  }
}

/** One write to a member of each sharded group: every one dirty. */
async function dirtyShardedGroups(context: HarnessContext): Promise<void> {
  const items = Array.from({ length: SHARDED_GROUPS }, (_, g) => ({ item: shardedMembers(g)[0], amount: 1 }));
  await context.send({ method: 'POST', path: '/boards/wc-members-sharded/increments', body: { items } }, 'seeder');
}

/**
 * Every sharded group dirty, then four minutes of the member window: every shard crosses at the read,
 * recording its part at the boundary it wrote before and its quiet parts at the three after it
 * (group_parts_lib: its state then, each group's members read again).
 */
async function crossShardedDirty(context: HarnessContext): Promise<void> {
  await dirtyShardedGroups(context);
  await context.advanceSec(4 * 60);
}

/** Every group dirty, then the member window's next minute: the next call crosses its boundary with every group to settle. */
async function crossDirty(context: HarnessContext): Promise<void> {
  await dirtyEveryGroup(context);
  await context.advanceSec(60);
}

/**
 * wc-teams-day's groups as wc-teams' (every member scored in the current day), every group dirty, then
 * the day's end: the next call closes the period with every group to settle.
 */
async function closeDirtyDay(context: HarnessContext): Promise<void> {
  for (let g = 0; g < FULL_GROUPS; g++) {
    await fillAll(context, MEMBERS, (k) => join(`t${g}`, itemOf(g, k), 'wc-teams-day'), 'seeder');
    await scoreInOrder(
      context,
      'wc-members',
      Array.from({ length: MEMBERS }, (_, k) => itemOf(g, k)),
    );
  }
  await dirtyEveryGroup(context);
  await context.advanceSec(DAY_SEC - (context.nowSec() % DAY_SEC) + 1);
}

/** Reads of the group board until the member window's closed day is drained (each read drains some). */
async function drainDay(context: HarnessContext): Promise<void> {
  for (let read = 0; read < DRAIN_READS; read++)
    if ((await context.send(get('/boards/wc-teams-day/top'), 'seeder')).status === 200) return;
}

const CROSSING = `the crossing settles the dirty groups first (calls of about ${GROUP_SETTLE_ROWS} member rows, each answering that it left the boundary for the next, which the service sends at once), then stores the groups' listing, then the read`;

const SHARDED = `${SHARDED_GROUPS} groups of scored members (top ${MEMBERS}) over a member board of ${SHARDS_PER_BOARD.max} shards: one of ${MEMBERS} spread over every shard, ${SHARDED_GROUPS - 1} of ${PER_SHARD} (a group's most on one shard) all on shard 0, which holds about its most members`;

const SHARDED_CROSSING = `each shard's first call past the boundary records its part (its groups' best members then) and its quiet parts of the 3 boundaries after it, the read's settle round merges the parts into the listings on shard 0, then settles and reads`;

const FULL = `${FULL_GROUPS} groups of ${MEMBERS} scored members (top ${MEMBERS})`;

export const GROUP_ROWS: WorstRow[] = [
  {
    route: 'PUT /boards/{board}/members/{group}/{item}',
    worst: `a member moving between two full groups of ${FULL}: one call on the member board's shard`,
    prepare: fillGroups,
    request: (_, attempt) => join(attempt % 2 === 0 ? 't0' : 't1', itemOf(1, MEMBERS - 1)),
    expect: [204, 429],
  },
  {
    route: 'DELETE /boards/{board}/members/{group}/{item}',
    worst: `a member leaving a full group of ${FULL}`,
    request: () => ({ method: 'DELETE', path: `/boards/wc-teams/members/t2/${itemOf(2, MEMBERS - 1)}` }),
    settle: async (context) => {
      await context.send(join('t2', itemOf(2, MEMBERS - 1)), 'seeder');
    },
    expect: [204],
  },
  {
    route: 'POST /boards/{board}/items/{item}/increment',
    worst: `a member's increment on a member board of a group board: its group's member zset and dirty mark, beside ${FULL}`,
    caller: 'seeder',
    request: () => ({
      method: 'POST',
      path: `/boards/wc-members/items/${itemOf(3, 5)}/increment`,
      body: { amount: 1 },
    }),
  },
  {
    route: 'GET /boards/{board}/top',
    worst: `limit 1 000 of the group board with every group of ${FULL} dirty: settled ${GROUP_SETTLE_ROWS} member rows a call, then read`,
    prepare: dirtyEveryGroup,
    request: () => get('/boards/wc-teams/top?limit=1000'),
    settle: dirtyEveryGroup,
    manyCalls: `a read settles dirty groups in calls of at most ${GROUP_SETTLE_ROWS} member rows (up to MAX_READ_DRAIN_CALLS) before it reads`,
  },
  {
    route: 'GET /boards/{board}/top',
    worst: `limit 1 000 of the group board with every one of its ${SHARDED} dirty: settled across the shards, then read`,
    prepare: async (context) => {
      await fillShardedGroups(context);
      await dirtyShardedGroups(context);
    },
    request: () => get('/boards/wc-teams-sharded/top?limit=1000'),
    settle: dirtyShardedGroups,
    manyCalls: `a settle round names each shard's dirty groups, claims a batch on shard 0, reads each shard's best members of it (at most ${GROUP_SETTLE_ROWS} rows a call), stores the scores and clears the marks: one call a shard at each step, in parallel`,
  },
  {
    route: 'GET /boards/{board}/history',
    worst: `the group board's snapshot (keep 1 000, top 1 000) at the member window's boundary over the ${SHARDED}, every one dirty: ${SHARDED_CROSSING}`,
    prepare: crossShardedDirty,
    request: () => get('/boards/wc-teams-sharded/history'),
    settle: crossShardedDirty,
    manyCalls: `each shard's crossing records its part of the listing and its 3 quiet parts (shard 0: its ${(SHARDED_GROUPS - 1) * PER_SHARD} members and more, about ${GROUP_SETTLE_ROWS} rows a call), then the settle round lists every shard's parts, reads them ${GROUP_HISTORY_PAGE_ROWS} member rows a call at most, stores each merged listing's record on shard 0 as many a call (the last call keeps the listing) and drops the parts`,
  },
  {
    route: 'POST /admin/boards/{board}/retractions',
    worst: `the best member of the recorded group of the ${SHARDED}, on a shard other than 0, counted in the group board's kept listings (merged on shard 0): the member's shard's parts and snapshots, then shard 0's listings rewritten by group_history_retract`,
    request: () => ({
      method: 'POST',
      path: '/admin/boards/wc-members-sharded/retractions',
      body: { item: shardedMembers(1)[MEMBERS - 1] },
    }),
    settle: (context, answer) => untilDone(context, 'wc-members-sharded', answer),
    measuresSettle: true,
    holds: RETRACTIONS_NOTED,
    expect: [202],
    times: 1,
    manyCalls: 'the retraction runs to its end in steps of at most adminStepUnits units, each a call of its own',
  },
  {
    route: 'GET /boards/{board}/history',
    worst: `the group board's snapshot at the member window's boundary (keep 1 000, top 1 000) with every group of ${FULL} dirty: ${CROSSING}`,
    prepare: crossDirty,
    request: () => get('/boards/wc-teams/history'),
    settle: crossDirty,
    manyCalls: `a boundary crossed with dirty groups settles them in calls of about ${GROUP_SETTLE_ROWS} member rows before the groups' listing is stored`,
  },
  {
    route: 'GET /boards/{board}/items/{item}/history',
    worst: `a group's history through the group board's kept snapshots of ${FULL}, the next boundary crossed with every group dirty: ${CROSSING}`,
    request: () => get('/boards/wc-teams/items/t0/history'),
    settle: crossDirty,
    manyCalls: `a boundary crossed with dirty groups settles them in calls of about ${GROUP_SETTLE_ROWS} member rows before the groups' listing is stored`,
  },
  {
    route: 'POST /admin/boards/{board}/retractions',
    worst: `the best member of a full group of ${FULL}, counted in every kept listing of the group board: the member's snapshots (top 1 000) and each group listing rewritten (its counted members read, the group's score recomputed, its row moved)`,
    request: () => ({
      method: 'POST',
      path: '/admin/boards/wc-members/retractions',
      body: { item: itemOf(0, MEMBERS - 1) },
    }),
    settle: (context, answer) => untilDone(context, 'wc-members', answer),
    measuresSettle: true,
    expect: [202],
    times: 1,
    manyCalls: 'the retraction runs to its end in steps of at most adminStepUnits units, each a call of its own',
  },
  {
    route: 'DELETE /admin/boards/{board}',
    worst: `a group board of ${SHARDED}: its memberships and groups on every shard of the member board dropped by group_board_drop`,
    request: () => ({ method: 'DELETE', path: '/admin/boards/wc-teams-sharded' }),
    expect: [204],
    times: 1,
  },
  {
    // Last of these rows: the group board goes.
    route: 'DELETE /admin/boards/{board}',
    worst: `a group board of ${FULL}: its memberships and groups under the member board's tag dropped by group_board_drop (at most ${BOARD_DROP_KEYS_PER_CALL} group zsets a call)`,
    request: () => ({ method: 'DELETE', path: '/admin/boards/wc-teams' }),
    expect: [204],
    times: 1,
  },
];

/**
 * Archives of a group board over a calendar window: run after the leagues rows (the clock moves on to
 * the next midnight, after the week they move it).
 */
export const GROUP_ARCHIVE_ROWS: WorstRow[] = [
  {
    route: 'GET /boards/{board}/archive',
    worst: `the group board's archive of the member's closed day (keep 1 000, top 10 000) with every group of ${FULL} dirty at the period's end: ${CROSSING}`,
    prepare: closeDirtyDay,
    request: () => get('/boards/wc-teams-day/archive'),
    times: 1,
    // The crossing is the first call's; the member window's closed day then drains over later calls.
    expect: [200, 503],
    manyCalls: `a period closed with dirty groups settles them in calls of about ${GROUP_SETTLE_ROWS} member rows before the groups' archive is stored`,
    drains: `after the crossing, the member window's closed day drains in chunks (each drained member leaves its group's zset), up to MAX_READ_DRAIN_CALLS calls a read: a 503 WINDOW_DRAINING until the next reads or the scheduler end it`,
  },
  {
    route: 'GET /boards/{board}/archives',
    worst: `the group board's kept archives of ${FULL}, 100 periods a page, once the member window's closed day is drained`,
    prepare: drainDay,
    request: () => get('/boards/wc-teams-day/archives?limit=100'),
  },
];
